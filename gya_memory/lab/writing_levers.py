"""The write path's model levers (写入时让模型决定), measured and kept off (issue 18).

Why they are here and not in the library (为什么不在库里): with the local 1.5B model every way
of letting the model replace a stored memory replaced the wrong one far more often than the
right one (``./run.sh bench writing``: on the tuning split ``first`` made 49 updates, ``pick``
44, ``yesno`` 13, none of them right; on the test split ``first`` made 63, 2 right), and the
second look ("still useful next month?") bought precision only with more recall lost, and
dropped the wrong facts (README, "From conversation to memory"). The library writes with
``how="off"`` (add beside); these are the other ways, kept to measure them again, e.g. with a
stronger model:

- :func:`by_model` gives ``how`` for :func:`gya_memory.answer.writing.remember` (and
  ``MemoryAgent.remember``): ``first``, ``best``, ``pick``, ``yesno`` or ``same`` (the
  duplicate check alone, under the restatement rule's guards: session 33), built on
  :func:`compare` (same / replaces / new), :func:`pick` (which lettered note is it about?),
  :func:`same_as` and :func:`conflicts` (two yes/no questions);
- :func:`by_rule` asks no model: a close memory from an earlier session is replaced when the
  new fact shows a sign of change and names the same thing (:func:`replaced_by`);
- :func:`screen` is the second look at each proposal (:data:`WORTH_MIN`).

Each reads the first token's probabilities (``next_token_probs``): one prefill, no text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gya_memory.answer.extraction import Proposal
from gya_memory.answer.writing import Decision, ModelDecision

WAYS: tuple[str, ...] = ("first", "best", "pick", "yesno", "same")


COMPARE_SYSTEM = (
    "Two notes about the same user: an old one already stored and a new one from today's "
    "conversation. Reply with one word.\n"
    "same: the new note says what the old one says (maybe in other words).\n"
    "replaces: the new note makes the old one no longer true (moved, quit, started again, "
    "changed, a plan moved to another date).\n"
    "new: both can be true at once; the new note adds something else.\n"
    "Old: Drinks three coffees a day. New: Quitting coffee -> replaces\n"
    "Old: Allergic to penicillin. New: Can't take penicillin -> same\n"
    "Old: Has a cat named Mochi. New: Allergic to peanuts -> new\n"
    "Old: 住在杭州. New: 上个月搬到了上海 -> replaces\n"
    "Old: 每周三练瑜伽. New: 周三晚上上瑜伽课 -> same"
)


def compare_messages(old: str, new: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": COMPARE_SYSTEM},
            {"role": "user", "content": f"Old: {' '.join(old.split())} New: {' '.join(new.split())} ->"}]


def compare(llm: Any, old: str, new: str) -> dict[str, float]:
    """P(same), P(replaces), P(new) from the first token (normalised over the three)."""
    probs = llm.next_token_probs(compare_messages(old, new), top=20)
    p = {"same": 0.0, "replaces": 0.0, "new": 0.0}
    for token, value in probs.items():
        t = token.strip().lower()
        for word in p:
            if len(t) >= 2 and word.startswith(t):
                p[word] += value
                break
    total = sum(p.values())
    return {k: round(v / total, 4) for k, v in p.items()} if total > 0 else {"same": 0.0, "replaces": 0.0, "new": 1.0}


# Two yes/no questions a small model answers more evenly than the three-way comparison (which
# said "replaces" for most pairs, related or not): is the new note the same as the old one,
# and can both be true of the user now?
SAME_SYSTEM = (
    "Two notes about a user. Do they say the same thing, maybe in other words? Reply yes or no.\n"
    "Old: Allergic to penicillin. New: Can't take penicillin -> yes\n"
    "Old: Drinks three coffees a day. New: Quitting coffee -> no\n"
    "Old: 每周三练瑜伽. New: 周三晚上上瑜伽课 -> yes\n"
    "Old: 住在杭州. New: 上个月搬到了上海 -> no\n"
    "Old: Has a cat named Mochi. New: Allergic to peanuts -> no\n"
    "Old: 女儿在读小学. New: 女儿朵朵上二年级 -> yes"
)
BOTH_SYSTEM = (
    "Two notes about a user: an old one and a new one. Can both be true of the user now? "
    "Reply yes or no.\n"
    "no: the new note changes the old one (moved, quit, started again, changed job or plan, a "
    "date moved, a number went up or down).\n"
    "yes: the notes are about different things, or the new one adds a detail.\n"
    "Old: Drinks three coffees a day. New: Quitting coffee -> no\n"
    "Old: Has a cat named Mochi. New: Allergic to peanuts -> yes\n"
    "Old: 住在杭州. New: 上个月搬到了上海 -> no\n"
    "Old: 每周三练瑜伽. New: 喜欢吃辣 -> yes\n"
    "Old: Trip to Rome on 2026-06-01. New: Rome trip moved to 2026-06-08 -> no\n"
    "Old: 体重80公斤. New: 在准备半马 -> yes\n"
    "Old: Works as a nurse. New: Works night shifts -> yes"
)
SAME_MIN = 0.5  # P(yes, the same) to skip a proposal as a duplicate
CONFLICT_MIN = 0.5  # P(no, not both true) to update


def _yes(llm: Any, system: str, old: str, new: str) -> float:
    probs = llm.next_token_probs([{"role": "system", "content": system},
                                  {"role": "user", "content": f"Old: {' '.join(old.split())} "
                                                              f"New: {' '.join(new.split())} ->"}])
    yes, no = probs.get("yes", 0.0), probs.get("no", 0.0)
    return round(yes / (yes + no), 4) if yes + no > 0 else 0.5


def same_as(llm: Any, old: str, new: str) -> float:
    """P that ``new`` says what ``old`` says."""
    return _yes(llm, SAME_SYSTEM, old, new)


def conflicts(llm: Any, old: str, new: str) -> float:
    """P that ``old`` and ``new`` cannot both be true of the user now."""
    return round(1 - _yes(llm, BOTH_SYSTEM, old, new), 4)


PICK_SYSTEM = (
    "You keep short notes about a user. A new note arrives. Is one of the stored notes about "
    "the same thing as the new note: the same habit, diet, job, home, plan, trip, pet, health "
    "matter or possession, so that the new note repeats it or changes it? Reply with its "
    "letter. If none is about the same thing, reply N.\n"
    "New: Quitting coffee\nA. Works as a nurse\nB. Drinks three coffees a day\n-> B\n"
    "New: Allergic to peanuts\nA. Has a cat named Mochi\nB. Lives in Leeds\n-> N\n"
    "New: 上个月搬到了上海\nA. 每周三练瑜伽\nB. 对青霉素过敏\nC. 住在杭州\n-> C\n"
    "New: 周三晚上上瑜伽课\nA. 每周三练瑜伽\nB. 在杭州做会计\n-> A"
)
LETTERS = "ABCDEFGH"


def pick_messages(new: str, stored: Sequence[str]) -> list[dict[str, str]]:
    """The listwise prompt: the new note, then the stored ones lettered A, B, C…"""
    if not 1 <= len(stored) <= len(LETTERS):
        raise ValueError(f"stored must hold 1 to {len(LETTERS)} notes, got {len(stored)}")
    lines = [f"New: {' '.join(new.split())}"]
    lines += [f"{LETTERS[i]}. {' '.join(text.split())}" for i, text in enumerate(stored)]
    return [{"role": "system", "content": PICK_SYSTEM},
            {"role": "user", "content": "\n".join(lines) + "\n->"}]


def pick(llm: Any, new: str, stored: Sequence[str]) -> dict[str, float]:
    """P of each stored note (by its letter) and of ``"none"`` being the one ``new`` is
    about, from the first token, normalised over the letters shown and N."""
    probs = llm.next_token_probs(pick_messages(new, stored), top=20)
    letters = [c.lower() for c in LETTERS[:len(stored)]]
    p = {c: probs.get(c, 0.0) for c in letters}
    p["none"] = probs.get("n", 0.0)
    total = sum(p.values())
    return {k: round(v / total, 4) for k, v in p.items()} if total > 0 else {**{c: 0.0 for c in letters}, "none": 1.0}


def by_model(way: str = "first", *, same_min: float = SAME_MIN,
             conflict_min: float = CONFLICT_MIN) -> ModelDecision:
    """The model's way to decide among the close memories, as ``how`` for
    :func:`gya_memory.answer.writing.decide` (which skips a word-for-word repeat and finds the
    close memories about the same person first). ``first`` compares them one by one, closest
    first, and takes the first that is the same or replaced; ``best`` compares each and takes
    the one most likely the same or replaced; ``pick`` asks once which of them (lettered) the
    new note is about, then compares that one; ``yesno`` asks "the same?" (skip at
    ``same_min``) and "both true now?" (update at ``conflict_min``); ``same`` asks only
    "the same?", and only where the library's restatement rule would look (no sign of change,
    no number the stored memory lacks, a memory of an earlier session), and never updates."""
    if way not in WAYS:
        raise ValueError(f"way must be one of {', '.join(WAYS)}, got {way!r}")

    def decide(proposal: Proposal, llm: Any, eligible: Sequence[Any],
               compared: tuple[tuple[str, float], ...], session_id: str | None = None) -> Decision:
        if llm is None:
            return Decision(proposal, "add", "the close memories say something else", compared)
        if way == "same":
            return _same_or_add(proposal, llm, eligible, compared, session_id, same_min)
        if way == "yesno":
            same = [(same_as(llm, h.text, proposal.text), h) for h in eligible]
            p_same, h = max(same, key=lambda x: x[0])
            if p_same >= same_min:
                return Decision(proposal, "skip", f"the same as a stored memory (P {p_same:.2f})",
                                compared, p={"same": p_same})
            clash = [(conflicts(llm, h.text, proposal.text), h) for h in eligible]
            p_clash, h = max(clash, key=lambda x: x[0])
            if p_clash >= conflict_min:
                return Decision(proposal, "update", f"replaces a stored memory (P {p_clash:.2f})",
                                compared, replaced=h.text, p={"same": p_same, "conflict": p_clash})
            return Decision(proposal, "add", "the close memories say something else", compared,
                            p={"same": p_same, "conflict": p_clash})
        if way == "pick":
            chosen = pick(llm, proposal.text, [h.text for h in eligible])
            best = max(chosen, key=lambda k: chosen[k])
            if best == "none":
                return Decision(proposal, "add", f"about none of the close memories (P {chosen['none']:.2f})",
                                compared, p=chosen)
            order = [eligible[LETTERS.lower().index(best)]]
        else:
            order = list(eligible)
        judged = []
        for h in order:
            p = compare(llm, h.text, proposal.text)
            verdict = max(p, key=lambda k: p[k])
            if way != "best" and verdict != "new":
                judged = [(h, p, verdict)]
                break
            if verdict != "new":
                judged.append((h, p, verdict))
        if judged:
            h, p, verdict = max(judged, key=lambda j: j[1]["same"] + j[1]["replaces"])
            if verdict == "same":
                return Decision(proposal, "skip", f"the same as a stored memory (P {p['same']:.2f})", compared, p=p)
            return Decision(proposal, "update", f"replaces a stored memory (P {p['replaces']:.2f})",
                            compared, replaced=h.text, p=p)
        return Decision(proposal, "add", "the close memories say something else", compared)

    decide.__name__ = decide.__qualname__ = f"by_model({way!r})"
    return decide


def _same_or_add(proposal: Proposal, llm: Any, eligible: Sequence[Any],
                 compared: tuple[tuple[str, float], ...], session_id: str | None,
                 same_min: float) -> Decision:
    """``by_model("same")``: skip ``proposal`` when the model says an earlier session's memory
    says the same, under the guards of ``writing``'s restatement rule
    (:func:`gya_memory.answer.writing.earlier_says`); otherwise add."""
    from gya_memory.answer.writing import earlier_says

    if not (earlier := earlier_says(proposal, eligible, session_id)):
        return Decision(proposal, "add", "the close memories say something else", compared)
    p_same, h = max(((same_as(llm, h.text, proposal.text), h) for h in earlier),
                    key=lambda x: x[0])
    if p_same >= same_min:
        return Decision(proposal, "skip", f"the same as a stored memory (P {p_same:.2f})",
                        compared, p={"same": p_same})
    return Decision(proposal, "add", "the close memories say something else", compared,
                    p={"same": p_same})


# A second look at each proposal: small models keep passing remarks ("气泡水不错", "Lunch at
# work is a nightmare"). One first-token judgement per proposal (the instructions are
# prefilled once and cached), far cheaper than a longer extraction prompt.
WORTH_SYSTEM = (
    "You keep notes about a user for future conversations. Would this note still be useful "
    "to know about the user a month from now? Reply yes or no.\n"
    "yes: health, allergies, diet, family and pets, work, home, money, plans with a date, "
    "lasting preferences and habits, things they own.\n"
    "no: what happened today only, passing remarks and opinions, thanks and greetings, a "
    "question they asked, advice they were given.\n"
    "Note: Allergic to penicillin -> yes\n"
    "Note: Thought the film last night was boring -> no\n"
    "Note: 女儿朵朵2026-05-09开始上游泳课 -> yes\n"
    "Note: 觉得今天的天气不错 -> no\n"
    "Note: Asked for a recipe for banana bread -> no\n"
    "Note: 每周六早上打羽毛球 -> yes"
)
WORTH_MIN = 0.0  # P(yes) a proposal needs to be kept (0: the second look is off)


def worth_messages(fact: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": WORTH_SYSTEM},
            {"role": "user", "content": f"Note: {' '.join(fact.split())} ->"}]


def worth_keeping(llm: Any, fact: str) -> float:
    """P(yes) / (P(yes) + P(no)) that ``fact`` is still worth knowing next month."""
    probs = llm.next_token_probs(worth_messages(fact))
    yes, no = probs.get("yes", 0.0), probs.get("no", 0.0)
    return round(yes / (yes + no), 4) if yes + no > 0 else 0.5


def screen(llm: Any, proposals: Sequence[Proposal], *, minimum: float = WORTH_MIN
           ) -> tuple[list[Proposal], list[tuple[str, str]]]:
    """The proposals worth keeping (P(yes) at least ``minimum``), and the others as dropped."""
    if minimum <= 0 or llm is None:
        return list(proposals), []
    kept, dropped = [], []
    for p in proposals:
        value = worth_keeping(llm, p.text)
        if value >= minimum:
            kept.append(p)
        else:
            dropped.append((p.text, f"not worth keeping (P(yes) {value:.2f})"))
    return kept, dropped


# -- a worked example with two facts in a turn (issue 18, session 29; measured, kept off) -------
# The shipped example (``extraction.EXAMPLE``) has one fact in each of its three turns, and the
# model copies that shape: about three proposals a session, one per turn, so the second fact of
# a turn is missed ("works in compliance at a bank" beside "my sister Priya started at Google").
# This one has five facts, two turns holding two. Tuning split: recall 0.712 -> 0.769 zh,
# 0.685 -> 0.870 en; precision 0.667 -> 0.609, 0.732 -> 0.654; 19.5 -> 27 s a session
# (docs/writing.md, "Two facts in a turn"). ``./run.sh bench writing --example two_per_turn``.
EXAMPLE_TWO_PER_TURN = (
    "Conversation date: 2026-05-04\nWhat the user said:\n"
    "[0] Hi! My daughter Lily starts swimming lessons on Saturday (2026-05-09), any tips?\n"
    "[2] Thanks. I'm allergic to chlorine though, so I'll just watch from the side. She's six, "
    "by the way.\n"
    "[4] Oh and we moved to Bristol last month (2026-04), so it's a new pool. I work nights as a "
    "nurse there now.",
    '{"fact": "User\'s daughter Lily starts swimming lessons on 2026-05-09", "about": "user\'s '
    'daughter Lily", "turn": 0}\n'
    '{"fact": "Allergic to chlorine", "about": "user", "turn": 2}\n'
    '{"fact": "User\'s daughter Lily is six", "about": "user\'s daughter Lily", "turn": 2}\n'
    '{"fact": "Moved to Bristol in 2026-04", "about": "user", "turn": 4}\n'
    '{"fact": "Works nights as a nurse in Bristol", "about": "user", "turn": 4}',
)
EXAMPLE_TWO_PER_TURN_ZH = (
    "对话日期：2026-05-04\n用户说的话：\n"
    "[0] 你好！我女儿朵朵周六（2026-05-09）开始上游泳课，有什么要注意的？\n"
    "[2] 谢谢。不过我对氯过敏，我就在旁边看着。她今年六岁。\n"
    "[4] 对了，我们上个月（2026-04）搬到了成都，所以是个新泳池。我现在在那边的医院上夜班当护士。",
    '{"fact": "女儿朵朵2026-05-09开始上游泳课", "about": "女儿朵朵", "turn": 0}\n'
    '{"fact": "对氯过敏", "about": "user", "turn": 2}\n'
    '{"fact": "女儿朵朵今年六岁", "about": "女儿朵朵", "turn": 2}\n'
    '{"fact": "2026-04搬到了成都", "about": "user", "turn": 4}\n'
    '{"fact": "在成都的医院上夜班当护士", "about": "user", "turn": 4}',
)


def use_example_two_per_turn() -> None:
    """Make :func:`gya_memory.answer.extraction.extraction_messages` show the two-facts-a-turn
    examples in this process (what ``bench_writing --example two_per_turn`` does)."""
    from gya_memory.answer import extraction

    extraction.EXAMPLE = EXAMPLE_TWO_PER_TURN
    extraction.EXAMPLE_ZH = EXAMPLE_TWO_PER_TURN_ZH


# -- an update rule instead of the model (by_rule) -------------------------------------------
# A new fact replaces a stored one only when three visible things hold: a sign of change in
# the new fact (gya_memory.answer.changes.change_marker: 现在 / 换了 / 跳槽 / 推迟到 / "now" /
# "switched" …); the stored one comes from an earlier session (what the user says in one
# conversation is taken to be true together: the model's worst habit was chaining two facts of
# one session); both name the same thing, a shared key word (卡罗拉, "Golf", 工资; numbers
# don't count, they are what an update changes). Precise on the labelled facts themselves,
# wrong more often than right after the model's real extraction (docs/writing.md, "An update rule
# instead of the model"): the old fact it should replace was often never written.
# Key words too common to say that two facts are about the same thing.
COMMON = frozenset("一个 一辆 一台 一家 一只 每天 每月 每周 现在 已经 开始 平时 最近 "
                   "user user's has have had is was are now got new".split())


def keys(text: str) -> set[str]:
    """The key words of ``text``: English words of 3+ letters, Chinese character pairs, minus
    stop words and :data:`COMMON`. Numbers (and Chinese pairs with a numeral) are not keys:
    they are what an update changes (工资一万二 → 一万四), and a year names no thing.

    >>> sorted(shared_keys("Replaced the Golf's battery", "The Golf still has its original battery"))
    ['battery', 'golf']
    """
    from gya_memory.semantic.lexical import tokenize

    out = set()
    for token in tokenize(text):
        han = re.fullmatch(r"[\u4e00-\u9fff]+", token) is not None
        if (len(token) == 2 and not re.search("[零一二两三四五六七八九十百千万亿]", token) if han
                else len(token) >= 3 and not token[0].isdigit()) and token not in COMMON:
            out.add(token)
    return out


def shared_keys(new: str, old: str) -> set[str]:
    """The key words two facts share."""
    return keys(new) & keys(old)


def replaced_by(new: str, close: Sequence[Any], *, session_id: str | None,
                min_shared: int = 1) -> Any | None:
    """Which of ``close`` (stored memories about the same person, closest first; each with
    ``text``, ``score`` and ``payload``) the fact ``new`` replaces, or None (see the comment
    above). ``session_id``: the session being written (its own memories are never replaced)."""
    from gya_memory.answer.changes import change_marker

    if change_marker(new) is None:
        return None
    earlier = [h for h in close if session_id is None or h.payload.get("session_id") != session_id]
    scored = [(len(shared_keys(new, h.text)), float(h.score), h) for h in earlier]
    scored = [s for s in scored if s[0] >= min_shared]
    if not scored:
        return None
    return max(scored, key=lambda s: (s[0], s[1]))[2]


def by_rule() -> ModelDecision:
    """The rule above as ``how`` for :func:`gya_memory.answer.writing.remember`: no model is
    asked; it reads the close memories about the same person that ``decide`` found."""

    def decide(proposal: Proposal, llm: Any, eligible: Sequence[Any],
               compared: tuple[tuple[str, float], ...], session_id: str | None = None) -> Decision:
        from gya_memory.answer.changes import change_marker

        marker = change_marker(proposal.text)
        if marker is None:
            return Decision(proposal, "add", "no sign of change", compared)
        old = replaced_by(proposal.text, eligible, session_id=session_id)
        if old is None:
            return Decision(proposal, "add", "no earlier memory names the same thing", compared)
        both = ", ".join(sorted(shared_keys(proposal.text, old.text)))
        return Decision(proposal, "update", f"changes a stored memory ({marker!r}; both name {both})",
                        compared, replaced=old.text)

    decide.__name__ = decide.__qualname__ = "by_rule()"
    return decide
