"""Solutions to the exercises of notebook 10 (from conversation to memory).

Each function returns what the notebook's self-check takes, e.g.
``check.exercise_10_1(exercise_10_1())``.
"""

from __future__ import annotations

import json
import re
from typing import Any


def exercise_10_1():
    """Each {...} on its own; json.loads or drop; a fact must be non-empty text."""

    def parse_facts(text: str) -> list[tuple[str, str]]:
        facts = []
        for chunk in re.findall(r"\{[^{}]*\}", text):  # a cut-off object has no closing }
            try:
                obj = json.loads(chunk)
            except json.JSONDecodeError:
                continue  # broken: drop it rather than guess
            fact = obj.get("fact") if isinstance(obj, dict) else None
            if isinstance(fact, str) and fact.strip():
                about = obj.get("about")
                facts.append((fact.strip(), about if isinstance(about, str) and about else "user"))
        return facts

    return parse_facts


def exercise_10_2():
    """Copy the old memory to history first, then add the new one, then remove the old."""

    def supersede(memories: list[dict[str, Any]], history: list[dict[str, Any]], old: str,
                  new: str, today: str) -> None:
        found = next((m for m in memories if m["text"] == old), None)
        if found is not None:
            history.append({**found, "valid_until": today, "superseded_by": new})
        memories.append({"text": new, "said_on": today})
        if found is not None:
            memories.remove(found)

    return supersede


def exercise_10_3():
    """Skip thanks and questions; a one-off with a date is an episode; the rest is semantic."""
    thanks = re.compile(r"谢谢|多谢|\bthanks?\b|\bthank you\b|^(?:hi|hello|你好)\b", re.I)
    date = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")

    def keep_as(text: str, sessions: int) -> str:
        if thanks.search(text) or text.rstrip().endswith(("?", "？")):
            return "skip"
        if date.search(text) and sessions < 2:
            return "episodic"
        return "semantic"

    return keep_as
