"""Ask again when the answer uses none of the placed memories (issue 16, session 18; not kept).

    ./run.sh bench answer_retry                       # tuning split, ~25 min on 2 cores
    ./run.sh bench answer_retry --split test --every 2 --json /tmp/retry.json

When the gate placed memories and the model's answer shares no content with any of them
(:func:`gya_memory.answer.grounding.ground`: "no user facts" or "admits"), the answer ignored
what it was given, the commonest with-memory failure of the acceptance check after the gate's
own misses. This benchmark asks every scenario through ``MemoryAgent`` with its defaults (with
memory, no hit, general question), and where a fact or advice answer ignored its placed
memories it asks twice more, on the same placements:

- ``follow``: the model's answer stays in the conversation and the user says it did not use
  what it remembers ("if one of those facts bears on my question, answer again using it; if
  none does, give the same answer again");
- ``firm``: the same prompt with the closing line "First name the fact above that matters for
  my question and what it implies, then answer."

Each answer is scored by :func:`gya_memory.lab.acceptance.outcome`, so one run gives the
shipped answers (``base``) and the two retries side by side.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from _shared import print_footer

from gya_memory.answer.grounding import ground

FOLLOW = {"zh": "你的回答没有用上你记得的关于我的情况。如果其中哪条和我的问题有关，结合它再回答一次"
                "（一两句话）；如果都无关，就照原样回答。",
          "en": "Your answer didn't use what you remember about me. If one of those facts bears "
                "on my question, answer again using it (one or two sentences); if none does, "
                "give the same answer again."}
FIRM = {"zh": "先说出上面哪条情况和我的问题有关、意味着什么，再回答。",
        "en": "First name the fact above that matters for my question and what it implies, "
              "then answer."}
CONDITIONS = ("memory", "no_hit", "general")
WAYS = ("base", "follow", "firm")


def ignored(answer: str, placed: list[str], question: str, kind: str | None) -> bool:
    """Did a fact or advice answer use none of the memories placed for it?"""
    if not placed or kind not in ("fact", "advice"):
        return False
    return ground(answer, placed, question).verdict in ("no user facts", "admits")


def retried(messages: list[dict[str, Any]], answer: str, language: str, after: str
            ) -> dict[str, list[dict[str, Any]]]:
    """The two retries' messages: the answer and the user's nudge appended (``follow``), or
    the memory block's closing line ``after`` replaced by the firm one (``firm``)."""
    firm = [dict(m) for m in messages]
    if after not in firm[-1]["content"]:
        raise ValueError("the closing line of the memory block is not in the last message")
    firm[-1]["content"] = firm[-1]["content"].replace(after, FIRM[language])
    return {"follow": [*messages, {"role": "assistant", "content": answer},
                       {"role": "user", "content": FOLLOW[language]}],
            "firm": firm}


def main(argv: list[str] | None = None) -> int:
    from gya_memory.answer.agent import MemoryAgent
    from gya_memory.answer.context import Policy, language_for
    from gya_memory.answer.context import _TEXT as TEXT
    from gya_memory.answer.gate import Gate
    from gya_memory.answer.llm import get_llm
    from gya_memory.lab.acceptance import outcome, run, wanted
    from gya_memory.lab.scenarios import load_acceptance, store_scenarios
    from gya_memory.semantic.embeddings import get_embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("tune", "test"), default="tune")
    parser.add_argument("--every", type=int, default=1, help="every N-th scenario")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    scenarios = [s for i, s in enumerate(load_acceptance(args.split)) if i % args.every == 0]
    llm = get_llm()
    stores = store_scenarios(scenarios, get_embedder())
    extra: dict[str, dict[str, Any]] = {}

    class Retrying:
        """``MemoryAgent.ask`` as shipped; the retries are kept aside per question."""

        def __init__(self, agent: MemoryAgent) -> None:
            self.agent = agent

        def ask(self, question: str) -> Any:
            trace = self.agent.ask(question)
            placed = [p.hit.text for p in trace.assembly.placed]
            if ignored(trace.answer, placed, question, trace.kind):
                language = language_for(question, trace.assembly.policy)
                extra[question] = {way: llm.chat(messages, max_tokens=160).text
                                   for way, messages in retried(
                                       trace.messages, trace.answer, language,
                                       TEXT[language]["after"]).items()}
            return trace

    answers = run(scenarios, stores, lambda m: Retrying(MemoryAgent(m, llm, Policy(), gate=Gate())),
                  CONDITIONS, progress=lambda a: print(
                      f"  {a.scenario} {a.condition:8} {a.outcome:12} {a.answer[:60]!r}", flush=True))
    by_id = {s.id: s for s in scenarios}
    rows = []
    for a in answers:
        s = by_id[a.scenario]
        texts = {m.id: m.text for m in s.memories}
        row = asdict(a) | {"retried": a.question in extra}
        for way in ("follow", "firm"):
            text = extra.get(a.question, {}).get(way, a.answer)
            label, _ = outcome(s, a.condition, text, [texts.get(i, "?") for i in a.placed],
                               a.question, a.kind)
            row[way] = {"answer": text, "outcome": label, "right": label in wanted(a.condition, a.kind)}
        rows.append(row)
    print("\nper language and condition: retried; right / used / misused / invented, per way")
    for lang in ("zh", "en"):
        for cond in CONDITIONS:
            mine = [r for r in rows if (r["lang"], r["condition"]) == (lang, cond)]
            cells = []
            for way in WAYS:
                got = [(r["outcome"], r["right"]) if way == "base" else
                       (r[way]["outcome"], r[way]["right"]) for r in mine]
                cells.append(f"{way} {sum(ok for _, ok in got)}/{sum(o == 'used' for o, _ in got)}/"
                             f"{sum(o == 'misused' for o, _ in got)}/{sum(o == 'invented' for o, _ in got)}")
            print(f"  {lang} {cond:8} n={len(mine):2} retried={sum(r['retried'] for r in mine):2}  "
                  + "   ".join(cells))
    if args.json:
        args.json.write_text(json.dumps({"split": args.split, "rows": rows}, ensure_ascii=False,
                                        indent=1), "utf-8")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
