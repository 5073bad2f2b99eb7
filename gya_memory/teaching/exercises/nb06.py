"""Self-checks for notebook 06 (with memory vs without). Pure Python: no model is called."""

from __future__ import annotations

from typing import Any

from gya_memory.teaching.exercises.verdict import UNANSWERED, Verdict, unanswered, verdict
from gya_memory.teaching.exercises.verdict import call as _call


def exercise_06_1(answer: Any) -> Verdict:
    """``reach_judge(scores, floor, top_k)``: the memories the gate sends to the model step."""
    if unanswered(answer):
        return verdict("06.1", [UNANSWERED])
    if not callable(answer):
        return verdict("06.1", ["answer with a function: reach_judge(scores, floor, top_k)"])
    cases = [
        ({"name": 0.780, "preference": 0.775, "blog": 0.760, "occupation": 0.701}, 0.779, 3,
         ["name"], "a score at or above the floor passes; the rest stay behind"),
        ({"name": 0.779, "blog": 0.700}, 0.779, 3,
         ["name"], "a score exactly equal to the floor must pass (the gate uses >=)"),
        ({"occupation": 0.871, "name": 0.894, "blog": 0.880, "preference": 0.860}, 0.842, 3,
         ["name", "blog", "occupation"], "keep at most top_k, best score first"),
        ({"name": 0.70, "blog": 0.71}, 0.779, 3,
         [], "when nothing clears the floor, return an empty list (the no-hit note goes in)"),
        ({"a": 0.95, "b": 0.94, "c": 0.93}, 0.5, 1,
         ["a"], "top_k=1 keeps only the best one"),
    ]
    problems = []
    for scores, floor, top_k, want, why in cases:
        got, err = _call(answer, dict(scores), floor, top_k)
        if err:
            return verdict("06.1", [err])
        if list(got or []) != want:
            problems.append(f"for {scores} with floor {floor}, top_k={top_k} you returned "
                            f"{got!r}, expected {want!r}: {why}")
    return verdict("06.1", problems, "the floor, then the pool of top_k: what the model step sees")


_FACTS = {"用户叫张三": ["张三"], "最近在戒咖啡，想少喝一点": ["咖啡"],
          "Cutting back on sugar lately": ["sugar"], "The user's name is Alice": ["Alice"]}


def exercise_06_2(answer: Any) -> Verdict:
    """``classify(answer, placed, facts)``: the key-term rule behind check_grounding, with its
    verdict words (gya_memory.answer.grounding.VERDICTS, less "off topic")."""
    if unanswered(answer):
        return verdict("06.2", [UNANSWERED])
    if not callable(answer):
        return verdict("06.2", ["answer with a function: classify(answer, placed, facts)"])
    cases = [
        ("你叫张三。", {"用户叫张三"}, "used",
         "张三 is a key term of a memory that was placed: the answer used it"),
        ("你叫张三。", set(), "invented",
         "张三 is a key term, but its memory was not placed: the model can only have guessed it"),
        ("我不知道你孩子几岁。", set(), "admits",
         "no key term, and the answer contains 不知道: it admits not knowing"),
        ("Sorry, I don't know that.", {"Cutting back on sugar lately"}, "admits",
         "\"don't know\" is an admission too"),
        ("少喝含糖饮料，多喝水。", {"最近在戒咖啡，想少喝一点"}, "no user facts",
         "no key term and no admission: it answered without the user's facts"),
        ("Skip the SUGAR tonight.", {"Cutting back on sugar lately"}, "used",
         "compare case-insensitively: SUGAR matches the key term sugar"),
        ("I don't know, Alice.", {"用户叫张三"}, "invented",
         "invented wins over everything else: Alice's memory was not placed"),
        ("张三，今晚别喝咖啡。", {"用户叫张三"}, "invented",
         "咖啡 comes from a memory that was not placed: one invented term is enough"),
    ]
    problems = []
    for text, placed, want, why in cases:
        got, err = _call(answer, text, set(placed), dict(_FACTS))
        if err:
            return verdict("06.2", [err])
        if got != want:
            problems.append(f"classify({text!r}, placed={sorted(placed)}) returned {got!r}, "
                            f"expected {want!r}: {why}")
    return verdict("06.2", problems, "invented, then used, then admits, then no user facts")


def exercise_06_3(answer: Any) -> Verdict:
    """With ``placement="system"``, the index of the message that holds the memory block."""
    if unanswered(answer):
        return verdict("06.3", [UNANSWERED])
    if answer == 1:
        return verdict("06.3", ["message 1 is the user message: that is the default, "
                                "placement='user'. Read placed[0].message_index with 'system'"])
    if answer != 0:
        return verdict("06.3", [f"{answer!r} is not a message of this request: there are two, "
                                "0 (system) and 1 (user)"])
    return verdict("06.3", [], "message 0: the block follows the system prompt, as in the article")


_LEFT = ("both", "the note", "the guard", "neither")


def exercise_06_4(answer: Any) -> Verdict:
    """What is left of the note and the guard on an empty store under ``no_hit="omit"``."""
    if unanswered(answer):
        return verdict("06.4", [UNANSWERED])
    if answer not in _LEFT:
        return verdict("06.4", [f"answer with one of {list(_LEFT)}"])
    if answer in ("both", "the note"):
        return verdict("06.4", ["no_hit='omit' drops the note: the messages equal those of "
                                "trigger='none', the bare question. Compare trace.messages"])
    if answer == "the guard":
        return verdict("06.4", ["the guard runs only with no_hit='say_so' (read the condition "
                                "in MemoryAgent.ask): with 'omit', trace.replaced stays None"])
    return verdict("06.4", [], "neither: without the note the model sees the bare question, and "
                               "without the guard its guess stands. The program, not the "
                               "model, says \"nothing found\"")
