"""Self-checks for notebook 10 (from conversation to memory). Pure Python: no chat model, no
embedder.

Each check calls the learner's answer on its own inputs and says what is still wrong.
"""

from __future__ import annotations

import copy
from typing import Any

from gya_memory.teaching.exercises.verdict import UNANSWERED, Verdict, unanswered, verdict
from gya_memory.teaching.exercises.verdict import call as _call


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 70 else text[:67] + "..."


def _need_function(answer: Any, exercise: str, name: str) -> list[str] | None:
    if unanswered(answer):
        return [UNANSWERED]
    if not callable(answer):
        return [f"pass your function itself: check.exercise_{exercise.replace('.', '_')}({name})"]
    return None


# -- 10.1 · a tolerant parser ------------------------------------------------------------------
_PARSE_CASES: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("clean lines",
     '{"fact": "对花生过敏", "about": "user"}\n{"fact": "妹妹小雨在杭州读研", "about": "妹妹小雨"}',
     [("对花生过敏", "user"), ("妹妹小雨在杭州读研", "妹妹小雨")]),
    ("prose around the objects, and no about",
     'Here are the facts:\n{"fact": "Allergic to penicillin"}\nHope this helps!',
     [("Allergic to penicillin", "user")]),
    ("one broken object between two good ones",
     '{"fact": "住在杭州", "about": "user"}\n{"fact": 在戒咖啡, about: user}\n'
     '{"fact": "每周三练瑜伽", "about": "user"}',
     [("住在杭州", "user"), ("每周三练瑜伽", "user")]),
    ("an object cut off by the token limit",
     '{"fact": "Moved to Leeds", "about": "user"}\n{"fact": "Sister Chloe works at a ba',
     [("Moved to Leeds", "user")]),
    ("an empty fact and a fact that is not text",
     '{"fact": "", "about": "user"}\n{"fact": 42}\n{"fact": "  Has a cat named Mochi  "}',
     [("Has a cat named Mochi", "user")]),
    ("none", "none", []),
]


def exercise_10_1(answer: Any) -> Verdict:
    """``parse_facts(text)`` -> list of ``(fact, about)``: every readable object with a
    non-empty text fact, ``about`` defaulting to ``"user"``; nothing half-read."""
    problems = _need_function(answer, "10.1", "parse_facts")
    if problems:
        return verdict("10.1", problems)
    problems = []
    for case, text, expected in _PARSE_CASES:
        got, error = _call(answer, text)
        if error:
            problems.append(f"{case}: {error}")
            continue
        try:
            pairs = [tuple(p) for p in got]
        except TypeError:
            problems.append(f"{case}: return a list of (fact, about) pairs, got {_short(got)}")
            continue
        if pairs != expected:
            problems.append(f"{case}: expected {_short(expected)}, got {_short(pairs)}")
    return verdict("10.1", problems, "every readable fact kept, nothing half-read")


# -- 10.2 · an update that keeps the old version ------------------------------------------------
def _store() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    memories = [
        {"text": "最近在戒咖啡，想少喝一点", "said_on": "2026-09-01"},
        {"text": "用户是一名后端工程师", "said_on": "2026-09-01"},
    ]
    return memories, []


def exercise_10_2(answer: Any) -> Verdict:
    """``supersede(memories, history, old, new, today)``: ``new`` is stored (said on
    ``today``), ``old`` moves from ``memories`` to ``history`` with ``valid_until`` and
    ``superseded_by``; the other memories are untouched. An ``old`` that is not there: just
    add ``new``."""
    problems = _need_function(answer, "10.2", "supersede")
    if problems:
        return verdict("10.2", problems)
    problems = []
    old, new, today = "最近在戒咖啡，想少喝一点", "又开始喝咖啡了，每天早上一杯拿铁", "2026-10-15"

    memories, history = _store()
    _, error = _call(answer, memories, history, old, new, today)
    if error:
        return verdict("10.2", [error])
    texts = [m.get("text") for m in memories]
    if new not in texts:
        problems.append(f"the new memory must be in memories afterwards, got {_short(texts)}")
    if old in texts:
        problems.append("the old memory must leave memories (it is no longer true)")
    if "用户是一名后端工程师" not in texts:
        problems.append("leave the other memories alone: the job memory is gone")
    kept = [h for h in history if h.get("text") == old]
    if len(kept) != 1:
        problems.append(f"the old memory must be in history exactly once, got {_short(history)}")
    else:
        h = kept[0]
        if h.get("valid_until") != today:
            problems.append(f"history: valid_until must be today ({today}), got "
                            f"{h.get('valid_until')!r}")
        if h.get("superseded_by") != new:
            problems.append(f"history: superseded_by must name the new memory, got "
                            f"{h.get('superseded_by')!r}")
        if h.get("said_on") != "2026-09-01":
            problems.append("history: keep the old memory's own fields (said_on) as they were")
    added = [m for m in memories if m.get("text") == new]
    if added and added[0].get("said_on") != today:
        problems.append(f"the new memory was said on {today}: store said_on={today!r}")

    # the old memory is gone already (another session removed it): nothing to move
    memories, history = _store()
    before = copy.deepcopy(memories)
    _, error = _call(answer, memories, history, "住在杭州", "上个月搬到了上海", today)
    if error:
        problems.append(f"when the old memory is not stored: {error}")
    else:
        texts = [m.get("text") for m in memories]
        if "上个月搬到了上海" not in texts or len(memories) != len(before) + 1 or history:
            problems.append("when the old memory is not stored, just add the new one "
                            f"(memories {_short(texts)}, history {_short(history)})")
    return verdict("10.2", problems, "the newer fact wins, the older one is kept with an end date")


# -- 10.3 · what to keep, and where ------------------------------------------------------------
# (text, sessions it was said in, where it belongs)
KEEP_CASES: list[tuple[str, int, str]] = [
    ("谢谢，你真好！", 1, "skip"),
    ("Thanks, that helps!", 1, "skip"),
    ("下午有什么提神的办法？", 1, "skip"),
    ("What's a good vegan recipe?", 1, "skip"),
    ("最近在戒咖啡，想少喝一点", 1, "semantic"),
    ("Allergic to penicillin", 1, "semantic"),
    ("2026-09-09 去深圳出差", 1, "episodic"),
    ("Dentist appointment on 2026-05-12", 1, "episodic"),
    ("每周三 2026-09-09 之后改成晚上练瑜伽", 2, "semantic"),
    ("Yoga class on 2026-05-13", 3, "semantic"),
]


def exercise_10_3(answer: Any) -> Verdict:
    """``keep_as(text, sessions)`` -> ``"skip"``, ``"episodic"`` or ``"semantic"``."""
    problems = _need_function(answer, "10.3", "keep_as")
    if problems:
        return verdict("10.3", problems)
    problems = []
    for text, sessions, expected in KEEP_CASES:
        got, error = _call(answer, text, sessions)
        if error:
            problems.append(error)
        elif got != expected:
            problems.append(f"keep_as({text!r}, {sessions}): expected {expected!r}, got {got!r}")
    return verdict("10.3", problems, "thanks and questions skipped, one-off dates episodic, "
                                     "lasting or repeated facts semantic")
