"""The acceptance check end to end with another wording of the answer prompt (issue 16).

    ./run.sh bench answer_wording name_first --split tune --lang en --conditions memory,no_hit,general --json out.json

``bench_answer_prompt`` holds the placements fixed (the relevant memory alone, or beside two
others) to compare wordings; this runs one wording through the real gate instead: the named
wording replaces one line of :mod:`gya_memory.answer.context`'s texts for its language (``after``:
what follows the placed memories; ``no_hit_advice``: the note after an advice question when
nothing passed), then the acceptance CLI
(``python -m gya_memory.lab.acceptance``) runs with the remaining arguments. Nothing else
changes: the same candidates, gate and outcome rules.

- ``name_first`` (English, session 21): "first name the fact about me that matters most for my
  question and what it implies, then answer", the wording that used the relevant memory most
  often with fixed placements on the tuning split (given 23 of 24, beside 14, against the
  shipped 13 and 8; docs/acceptance.md, "The answer step on its own").
- ``no_specifics`` (both languages, session 21): the advice note when nothing passed, plus "if
  I ask for a specific thing about me or my people (a name, a place, a date, a number), say you
  don't know it": for fact questions the kind rule reads as advice ("Where should I tell him to
  go?"), which on an empty store got the "no record" sentence and then a guess.
- ``what_would_change`` (both languages, session 23): the advice note when nothing passed
  asks for general advice and then the fact about the user that would change it ("if Bruno
  has a sensitive stomach…"), instead of "where it matters, say you don't know my situation":
  on an empty store the shipped note gets a bare "Yes, you can give Bruno the treats".
- ``what_would_change_bare`` (both languages, session 23): the same without the examples,
  which ``what_would_change`` made the model copy ("if you have allergies, hang the mirror with
  tape").
- ``longer`` (both languages, session 21): the system message allows two or three sentences
  instead of one or two (in every branch), the only change: the shipped answers that ignore a
  placed memory are often a bare yes or no.
"""

from __future__ import annotations

import sys

WORDINGS = {
    "name_first": {("en", "after"): "First name the fact about me that matters most for my "
                                    "question and what it implies, then answer."},
    "no_specifics": {
        ("en", "no_hit_advice"): "(You have no record of my situation on this. Give practical "
                                 "general advice; where it matters, say you don't know my "
                                 "situation; assume nothing about me. If I ask for a specific "
                                 "thing about me or my people, such as a name, a place, a date "
                                 "or a number, say you don't know it.)",
        ("zh", "no_hit_advice"): "（你没有关于我这方面情况的记录。给出实用的一般建议；在需要的地方"
                                 "说明你不了解我的具体情况；不要假设任何关于我的事。如果我问的是关于"
                                 "我或我身边的人的具体信息，比如名字、地点、日期或数字，就说你不知道。）"},
    "what_would_change": {
        ("en", "no_hit_advice"): "(You have no record of my situation on this. Give practical "
                                 "general advice, then say which fact about me would change it "
                                 "(for example my health, allergies, budget or schedule); do not "
                                 "guess that fact.)",
        ("zh", "no_hit_advice"): "（你没有关于我这方面情况的记录。先给出实用的一般建议，再说明我的"
                                 "哪方面情况会改变这个建议（比如健康、过敏、预算或日程）；不要猜测"
                                 "这些情况。）"},
    "what_would_change_bare": {
        ("en", "no_hit_advice"): "(You have no record of my situation on this. Give practical "
                                 "general advice, then say in one short clause what about me "
                                 "could change it; do not guess it.)",
        ("zh", "no_hit_advice"): "（你没有关于我这方面情况的记录。先给出实用的一般建议，再用一句短话"
                                 "说明我的什么情况可能改变这个建议；不要猜测。）"},
    "longer": {("en", "system"): "You are a helpful assistant. Keep answers short: two or three "
                                 "sentences.",
               ("zh", "system"): "你是一个贴心的助手。回答要简短，两三句话。"},
}


def main(argv: list[str]) -> int:
    from gya_memory.answer import context
    from gya_memory.lab import acceptance

    if not argv or argv[0] not in WORDINGS:
        print(f"usage: bench_answer_wording.py {{{','.join(WORDINGS)}}} [acceptance arguments]")
        return 2
    for (lang, key), line in WORDINGS[argv[0]].items():
        assert key in context._TEXT[lang], key
        context._TEXT[lang][key] = line
    return acceptance.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
