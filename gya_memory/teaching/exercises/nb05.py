"""Self-checks for notebook 05 (context assembly). Pure Python: no chat model, no embedder.

Each check calls the learner's answer on its own inputs and says what is still wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gya_memory.teaching.exercises.verdict import UNANSWERED, Verdict, unanswered, verdict
from gya_memory.teaching.exercises.verdict import call as _call

OPEN, CLOSE = "<memories>", "</memories>"

QUESTION = "我最近饮食上有什么要注意的吗？"
COFFEE = "最近在戒咖啡，想少喝一点"
JOB = "用户是一名后端工程师"




def _short(args: Any) -> str:
    text = repr(args)
    return text if len(text) <= 70 else text[:67] + "..."


# -- 05.1 · build_messages with a fence and a no-hit branch -----------------------------------
def _messages_problems(messages: Any, case: str) -> list[str]:
    if not isinstance(messages, list) or not messages:
        return [f"{case}: return a non-empty list of messages, got {type(messages).__name__}"]
    for m in messages:
        if not (isinstance(m, dict) and isinstance(m.get("role"), str)
                and isinstance(m.get("content"), str)):
            return [f"{case}: every message must be a dict with 'role' and 'content' strings, "
                    f"got {_short(m)}"]
    return []


def _fence(messages: list[dict[str, str]], case: str) -> tuple[list[str] | None, list[str]]:
    """The lines inside the one fenced block, or the problems with the fence."""
    holders = [m for m in messages if OPEN in m["content"] or CLOSE in m["content"]]
    opens = sum(m["content"].count(OPEN) for m in messages)
    closes = sum(m["content"].count(CLOSE) for m in messages)
    if opens != 1 or closes != 1:
        return None, [f"{case}: use exactly one {OPEN} … {CLOSE} block "
                      f"(found {opens} {OPEN} and {closes} {CLOSE})"]
    text = holders[0]["content"]
    if len(holders) != 1 or text.index(OPEN) > text.index(CLOSE):
        return None, [f"{case}: {OPEN} must come before {CLOSE}, in the same message"]
    inside = text[text.index(OPEN) + len(OPEN):text.index(CLOSE)]
    return [line for line in inside.split("\n") if line.strip()], []


def _question_last(messages: list[dict[str, str]], question: str, case: str) -> list[str]:
    last = messages[-1]
    if last["role"] != "user" or question not in last["content"]:
        return [f"{case}: the last message must be the user's, with the question in it "
                f"(got role {last['role']!r})"]
    if messages[0]["role"] != "system":
        return [f"{case}: start with a system message (got role {messages[0]['role']!r})"]
    return []


def exercise_05_1(answer: Any) -> Verdict:
    if unanswered(answer):
        return verdict("05.1", [UNANSWERED])
    if not callable(answer):
        return verdict("05.1", ["pass your function itself: check.exercise_05_1(build_messages)"])
    problems: list[str] = []

    # two memories, given worst first: the block must list them best first, one per line
    case = "with two memories"
    messages, error = _call(answer, QUESTION, [(0.839, JOB), (0.906, COFFEE)])
    if error:
        return verdict("05.1", [f"{case}: your function raised {error}"])
    problems += _messages_problems(messages, case)
    if not problems:
        problems += _question_last(messages, QUESTION, case)
        lines, fence_problems = _fence(messages, case)
        problems += fence_problems
        if lines is not None:
            coffee = [i for i, line in enumerate(lines) if COFFEE in line]
            job = [i for i, line in enumerate(lines) if JOB in line]
            if not coffee or not job:
                problems.append(f"{case}: both memory texts must be inside the fence")
            elif coffee[0] == job[0]:
                problems.append(f"{case}: put each memory on a line of its own")
            elif coffee[0] > job[0]:
                problems.append(f"{case}: list the memories best first (the coffee memory "
                                "scores 0.906, the job 0.839): sort by score")

    # a memory with a line break must stay on one line, inside the fence
    case = "with a memory that contains a line break"
    messages, error = _call(answer, QUESTION, [(0.9, "line one\nline two")])
    if error:
        problems.append(f"{case}: your function raised {error}")
    elif not _messages_problems(messages, case):
        lines, fence_problems = _fence(messages, case)
        problems += fence_problems
        if lines is not None and not any("line one" in ln and "line two" in ln for ln in lines):
            problems.append(f"{case}: keep each memory on one line (replace '\\n' by a space), "
                            "so one memory can't pass for two")

    # no memories: still a fence, with a note in it, and the question last
    case = "with no memories"
    messages, error = _call(answer, QUESTION, [])
    if error:
        problems.append(f"{case}: your function raised {error}")
    else:
        empty = _messages_problems(messages, case)
        problems += empty
        if not empty:
            problems += _question_last(messages, QUESTION, case)
            lines, fence_problems = _fence(messages, case)
            problems += fence_problems
            if lines is not None and not lines:
                problems.append(f"{case}: put a note inside the fence saying that no stored "
                                "memory answers the question (the no-hit branch)")
    return verdict("05.1", problems, "fenced, best first, one memory per line, and a no-hit note")


# -- 05.2 · filter, top-k, budget ----------------------------------------------------------------
def _block(texts: list[str]) -> str:
    return "\n".join(f"- {t}" for t in texts)


def _reference_select(hits: list[tuple[float, str]], min_score: float, top_k: int,
                      budget_chars: int) -> list[str]:
    kept = [t for s, t in sorted(hits, key=lambda h: -h[0]) if s >= min_score][:top_k]
    while kept and len(_block(kept)) > budget_chars:
        kept.pop()
    return kept


_HITS = [(0.827, "公司工号是 BX-20417，报销单上要填"), (0.906, COFFEE),
         (0.850, "家里养了一只名叫「年糕」的橘猫"), (0.847, "医保卡号是 3301-8826，挂号时要用"),
         (0.839, JOB), (0.842, "每周六早上在小区球场打羽毛球")]
_SELECT_CASES = [
    (_HITS, 0.86, 3, 800),   # only the coffee memory is relevant enough
    (_HITS, 0.83, 5, 800),   # the top-k cut
    (_HITS, 0.83, 5, 60),    # the budget cut: the weakest go first
    (_HITS, 0.83, 5, 10),    # nothing fits
    ([], 0.5, 3, 800),       # nothing retrieved
]


def exercise_05_2(answer: Any) -> Verdict:
    if unanswered(answer):
        return verdict("05.2", [UNANSWERED])
    if not callable(answer):
        return verdict("05.2", ["pass your function itself: check.exercise_05_2(select_memories)"])
    problems: list[str] = []
    for hits, min_score, top_k, budget in _SELECT_CASES:
        args = f"min_score={min_score}, top_k={top_k}, budget_chars={budget}"
        want = _reference_select(hits, min_score, top_k, budget)
        got, error = _call(answer, list(hits), min_score, top_k, budget)
        if error:
            problems.append(f"{args}: your function raised {error}")
            continue
        if not isinstance(got, list) or not all(isinstance(t, str) for t in got):
            problems.append(f"{args}: return a list of memory texts, got {_short(got)}")
            continue
        if got == want:
            continue
        scores = {t: s for s, t in hits}
        low = [t for t in got if scores.get(t, 1.0) < min_score]
        if low:
            problems.append(f"{args}: {low[0]!r} scores {scores[low[0]]} < min_score")
        elif len(got) > top_k:
            problems.append(f"{args}: you kept {len(got)} memories, more than top_k")
        elif len(_block(got)) > budget:
            problems.append(f"{args}: your block is {len(_block(got))} characters, over the "
                            f"budget: drop the weakest kept memory until it fits")
        elif sorted(got, key=lambda t: -scores.get(t, 0)) != got:
            problems.append(f"{args}: return the kept memories best first")
        elif len(got) == len(want) and min(scores[t] for t in got) < min(scores[t] for t in want):
            problems.append(f"{args}: the budget must drop the weakest memories first (the "
                            "last ones, best first), not the strongest")
        elif set(got) < set(want):
            problems.append(f"{args}: you dropped too many: expected {len(want)} memories, got "
                            f"{len(got)} (cut only while the block is over the budget, and drop "
                            "the weakest, not the strongest)")
        else:
            problems.append(f"{args}: expected {want}, got {got}")
    return verdict("05.2", problems, "threshold, then top-k, then the budget, weakest out first")


# -- 05.3 · a Policy that sends the right memory, and nothing when nothing fits ----------------
@dataclass(frozen=True)
class _Hit:
    id: str
    score: float
    text: str
    payload: dict[str, Any] = field(default_factory=dict)


_DIET = [_Hit(f"m{i}", s, t) for i, (s, t) in enumerate([
    (0.906, COFFEE), (0.850, "家里养了一只名叫「年糕」的橘猫"),
    (0.847, "医保卡号是 3301-8826，挂号时要用"), (0.842, "每周六早上在小区球场打羽毛球"),
    (0.839, JOB), (0.835, "用户叫张三"), (0.831, "女儿叫张沅汐，今年上小学二年级"),
    (0.829, "用户的博客主要写 AI Agent 的工程实践"), (0.827, "公司工号是 BX-20417，报销单上要填")])]
_CITY = [_Hit(f"c{i}", s, t) for i, (s, t) in enumerate([
    (0.848, COFFEE), (0.834, "用户叫张三"), (0.833, JOB),
    (0.825, "用户的博客主要写 AI Agent 的工程实践")])]


def exercise_05_3(answer: Any) -> Verdict:
    if unanswered(answer):
        return verdict("05.3", [UNANSWERED])
    from gya_memory.answer.context import Policy, select

    if not isinstance(answer, Policy):
        return verdict("05.3", [f"answer with a Policy(...), got {type(answer).__name__}"])
    problems: list[str] = []
    kept, dropped = select(_DIET, answer)
    texts = [h.text for h in kept]
    if COFFEE not in texts:
        why = next((d.reason for d in dropped if d.hit.text == COFFEE), "dropped")
        problems.append(f"for the diet question the coffee memory (0.906) is lost ({why})")
    elif len(texts) > 1:
        problems.append(f"for the diet question your policy also sends {texts[1]!r} "
                        f"({kept[1].score}): it has nothing to do with diet")
    city = select(_CITY, answer)[0]
    if city:
        problems.append(f"for 我住在哪个城市？ your policy still sends {city[0].text!r} "
                        f"({city[0].score}): top_k keeps the best candidates, relevant or "
                        "not; only min_score can say 'none'")
    return verdict("05.3", problems, "the coffee memory for diet, and a no-hit for the city")


# -- 05.4 · conflicts: the newest memory per subject wins --------------------------------------
_CONFLICT_CASE = [
    {"text": COFFEE, "subject": "偏好", "created_at": "2026-09-01T09:01:00+08:00"},
    {"text": JOB, "subject": "职业", "created_at": "2026-09-01T09:02:00+08:00"},
    {"text": "已经不戒咖啡了，每天一杯", "subject": "偏好", "created_at": "2026-10-15T20:00:00+08:00"},
    {"text": "周末常去爬山", "subject": None, "created_at": "2026-09-03T10:00:00+08:00"},
    {"text": "换了工作，现在是产品经理", "subject": "职业", "created_at": "2026-11-02T08:30:00+08:00"},
    {"text": "又开始戒咖啡了", "subject": "偏好", "created_at": "2026-10-20T07:45:00+08:00"},
]


def _reference_newest(memories: list[dict[str, Any]]) -> list[str]:
    newest: dict[str, dict[str, Any]] = {}
    for m in memories:
        s = m.get("subject")
        if s is not None and (s not in newest or m["created_at"] > newest[s]["created_at"]):
            newest[s] = m
    return [m["text"] for m in memories if m.get("subject") is None or newest[m["subject"]] is m]


def exercise_05_4(answer: Any) -> Verdict:
    if unanswered(answer):
        return verdict("05.4", [UNANSWERED])
    if not callable(answer):
        return verdict("05.4", ["pass your function itself: check.exercise_05_4(newest_wins)"])
    cases = [("the six memories", _CONFLICT_CASE), ("an empty list", []),
             ("the six memories in reverse", _CONFLICT_CASE[::-1])]
    problems: list[str] = []
    for name, memories in cases:
        want = _reference_newest(memories)
        got, error = _call(answer, [dict(m) for m in memories])
        if error:
            problems.append(f"{name}: your function raised {error}")
            continue
        if not isinstance(got, list) or not all(isinstance(t, str) for t in got):
            problems.append(f"{name}: return a list of memory texts, got {_short(got)}")
            continue
        if got == want:
            continue
        missing = [t for t in want if t not in got]
        extra = [t for t in got if t not in want]
        if "周末常去爬山" in missing:
            problems.append(f"{name}: a memory without a subject conflicts with nothing: keep it")
        elif missing:
            problems.append(f"{name}: {missing[0]!r} is the newest of its subject: keep it "
                            "(compare created_at, not the position in the list)")
        elif extra:
            problems.append(f"{name}: {extra[0]!r} is superseded by a newer memory on the "
                            "same subject: drop it")
        else:
            problems.append(f"{name}: keep the memories in the order they were given")
    return verdict("05.4", problems, "one memory per subject, the newest, in the given order")
