"""Self-checks for notebook 01, the stateless model. Pure Python: no model is called."""

from __future__ import annotations

from typing import Any

from gya_memory.teaching.exercises.verdict import UNANSWERED, Verdict, unanswered, verdict
from gya_memory.teaching.exercises.verdict import call as _call


# The scripted conversation of notebook 01, section 6, and the question asked after it.
SYSTEM_ZH = "你是一个简洁的助手，用一两句话回答。"
HISTORY_ZH = [("user", "你好，我叫张三。"), ("assistant", "你好，张三！有什么可以帮你？"),
              ("user", "我最近在戒咖啡，想少喝一点。"), ("assistant", "好的，少喝咖啡是个好习惯。"),
              ("user", "我是后端工程师，这周天天加班。"), ("assistant", "辛苦了，注意休息。"),
              ("user", "周末推荐一部电影吧。"), ("assistant", "可以看看《流浪地球》。")]
QUESTION_ZH = "我叫什么名字？"




def _messages_problem(result: Any) -> str | None:
    if not isinstance(result, list) or not all(isinstance(m, dict) for m in result):
        return f"it should return a list of message dicts, got {type(result).__name__}"
    for m in result:
        if set(m) != {"role", "content"}:
            return f"each message needs exactly the keys 'role' and 'content', got {sorted(m)}"
    return None


def exercise_01_1(answer: Any) -> Verdict:
    """``remember(system, facts, question)``: the stored facts go into the system message."""
    if unanswered(answer):
        return verdict("01.1", [UNANSWERED])
    if not callable(answer):
        return verdict("01.1", ["answer should be your function remember (the name, no brackets)"])
    problems: list[str] = []
    cases = [("你是一个简洁的助手。", ["用户叫张三"], "我叫什么名字？"),
             ("You are concise.", ["The user's name is Alice", "Cutting back on sugar"],
              "What's my name?")]
    for system, facts, question in cases:
        result, error = _call(answer, system, list(facts), question)
        if error:
            return verdict("01.1", [error])
        bad = _messages_problem(result)
        if bad:
            return verdict("01.1", [bad])
        roles = [m["role"] for m in result]
        if roles != ["system", "user"]:
            problems.append(f"with facts {facts}: expected two messages, system then user, "
                            f"got roles {roles} (no history is resent: that is the point)")
            continue
        sys_text, user_text = result[0]["content"], result[1]["content"]
        if system not in sys_text:
            problems.append("the system message should still contain the original instruction")
        missing = [f for f in facts if f not in sys_text]
        if missing:
            problems.append(f"these facts are not in the system message: {missing}")
        if user_text != question:
            problems.append(f"the user message should be the question itself, {question!r}, "
                            f"got {user_text!r:.60}")
    result, error = _call(answer, "You are concise.", [], "What's my name?")
    if error:
        problems.append(error)
    elif not _messages_problem(result) and len(result) != 2:
        problems.append("with no facts it should still return the system message and the question")
    return verdict("01.1", problems, "one call carries the facts it needs, and nothing else")


def _keeps_name(budget: int) -> bool:
    from gya_memory.working import BudgetError, WorkingMemory

    wm = WorkingMemory(system=SYSTEM_ZH)
    for role, text in [*HISTORY_ZH, ("user", QUESTION_ZH)]:
        wm.add(role, text)
    try:
        wm.trim(max_chars=budget)
    except BudgetError:
        return False
    return any("张三" in m["content"] for m in wm.snapshot() if m["role"] == "user")


def exercise_01_2(answer: Any) -> Verdict:
    """The smallest ``max_chars`` budget for which ``trim()`` keeps the turn with the name."""
    if unanswered(answer):
        return verdict("01.2", [UNANSWERED])
    if isinstance(answer, bool) or not isinstance(answer, int):
        return verdict("01.2", [f"answer should be a whole number of characters, got {answer!r}"])
    if not _keeps_name(answer):
        return verdict("01.2", [f"with max_chars={answer} the turn with 张三 is dropped: "
                                "try a larger budget"])
    if _keeps_name(answer - 1):
        return verdict("01.2", [f"max_chars={answer - 1} keeps the name too: look for the smallest"])
    return verdict("01.2", [], f"{answer} characters: everything. Oldest-first trimming keeps "
                               "recent talk, not important facts")


def exercise_01_3(answer: Any) -> Verdict:
    """``assemble(sessions, request)`` that starts an unknown session empty."""
    if unanswered(answer):
        return verdict("01.3", [UNANSWERED])
    if not callable(answer):
        return verdict("01.3", ["answer should be your function assemble (the name, no brackets)"])
    turn = [{"role": "user", "content": "我叫张三。"}, {"role": "assistant", "content": "你好，张三！"}]
    sessions = {"sess-001": [dict(m) for m in turn]}
    problems: list[str] = []
    result, error = _call(answer, sessions, {"session_id": "sess-002", "input": QUESTION_ZH})
    if error:
        return verdict("01.3", [error + " (a new session id should start empty)"])
    if _messages_problem(result) or result != [{"role": "user", "content": QUESTION_ZH}]:
        problems.append("for a new session id, expected only the user's question: "
                        f"[{{'role': 'user', 'content': {QUESTION_ZH!r}}}], got {result!r:.100}")
    result, error = _call(answer, sessions, {"session_id": "sess-001", "input": QUESTION_ZH})
    if error:
        return verdict("01.3", [error])
    if result != turn + [{"role": "user", "content": QUESTION_ZH}]:
        problems.append("for a known session, expected its stored messages, then the question")
    if sessions != {"sess-001": turn}:
        problems.append("assemble() changed the stored sessions; it should only read them")
    return verdict("01.3", problems, "a new session starts empty: the model is back where "
                                     "call 2 was, so facts across sessions need long-term memory")
