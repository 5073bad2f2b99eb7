"""Self-checks for notebook 02, the four memory layers. Pure Python."""

from __future__ import annotations

from typing import Any

from gya_memory.teaching.exercises.verdict import UNANSWERED, Verdict, unanswered, verdict

LAYERS = ("working", "episodic", "semantic", "procedural")

# item -> (layer, why), for exercise 02.1
ITEMS = {
    "a": ("episodic", "it is one experience with its circumstances (which chat, when)"),
    "b": ("semantic", "it is a distilled fact about the user, true in any session"),
    "c": ("procedural", "it is a method for a task; it says nothing about one user"),
    "d": ("working", "it is what the current decision is using, in this call's messages"),
    "e": ("semantic", "it is a standing preference, distilled from earlier chats"),
}


def exercise_02_1(answer: Any) -> Verdict:
    """Which layer stores each item: a dict such as {"a": "episodic", ...}."""
    if unanswered(answer):
        return verdict("02.1", [UNANSWERED])
    if not isinstance(answer, dict):
        return verdict("02.1", ['answer should be a dict like {"a": "episodic", "b": ...}'])
    problems = []
    for key, (layer, why) in ITEMS.items():
        given = answer.get(key)
        if given is None:
            problems.append(f"({key}) has no answer yet")
            continue
        given = str(given).strip().lower()
        if given not in LAYERS:
            problems.append(f"({key}) {given!r} is not a layer; use one of {', '.join(LAYERS)}")
        elif given != layer:
            problems.append(f"({key}) is not {given}: {why}")
    extra = sorted(set(map(str, answer)) - set(ITEMS))
    if extra:
        problems.append(f"unknown items {extra}; the items are a to e")
    return verdict("02.1", problems, "each item sorted by what it stores")


def exercise_02_2(answer: Any) -> Verdict:
    """A ProceduralMemory where dietary_advice is at version 2 and asks when no rule matches."""
    if unanswered(answer):
        return verdict("02.2", [UNANSWERED])
    from gya_memory.procedural.memory import ProceduralMemory
    from gya_memory.teaching.examples import dietary_advice

    if not isinstance(answer, ProceduralMemory):
        return verdict("02.2", ["answer should be the ProceduralMemory `procedures` after "
                                "you registered version 2"])
    try:
        latest = answer.get("dietary_advice")
    except KeyError:
        return verdict("02.2", ["there is no procedure named 'dietary_advice' in it"])
    problems = []
    if latest.version != 2:
        problems.append(f"the latest dietary_advice is version {latest.version}; register version 2")
        return verdict("02.2", problems)
    try:
        answer.get("dietary_advice", version=1)
    except KeyError:
        problems.append("version 1 is gone: register v2 in the same registry, keep the history")
    try:
        unknown = latest.function()("无麸质", "聚餐")
        known = latest.function()("少喝咖啡", "聚餐")
    except Exception as exc:
        return verdict("02.2", [f"invoking version 2 raised {type(exc).__name__}: {exc}"])
    if not isinstance(unknown, str) or "无麸质" not in unknown:
        problems.append("for restriction='无麸质' the text should name the restriction")
    elif not unknown.rstrip().endswith(("？", "?")):
        problems.append("for a restriction with no rule, version 2 should ask the user "
                        "(end with a question mark), not give generic advice")
    if known != dietary_advice("少喝咖啡", "聚餐"):
        problems.append("for '少喝咖啡' version 2 should give the same advice as version 1")
    return verdict("02.2", problems, "a method changed, and it carries a higher version")


def exercise_02_3(answer: Any) -> Verdict:
    """The English call: system (semantic preference), user question, tool (procedure result)."""
    if unanswered(answer):
        return verdict("02.3", [UNANSWERED])
    if not isinstance(answer, list) or not all(isinstance(m, dict) for m in answer):
        return verdict("02.3", ["answer should be a list of message dicts"])
    roles = [m.get("role") for m in answer]
    if roles != ["system", "user", "tool"]:
        return verdict("02.3", [f"expected roles system, user, tool; got {roles}"])
    system, user, tool = (str(m.get("content", "")) for m in answer)
    problems = []
    if "fewer sweet drinks" not in system:
        problems.append("the system message should carry the semantic preference "
                        "('The user currently prefers fewer sweet drinks')")
    if "sugar" in system.lower() and "lately" in system.lower():
        problems.append("put the distilled statement in the system message, "
                        "not the episodic sentence")
    if "dinner" not in user.lower():
        problems.append("the user message should be the question about the team dinner")
    if "team dinner" not in tool or "watch out" not in tool:
        problems.append("the tool message should be the result of invoking dietary_advice "
                        "for the team dinner")
    return verdict("02.3", problems, "semantic in the system message, procedural as a "
                                     "tool result, working = this list")
