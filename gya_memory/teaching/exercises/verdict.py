"""What a self-check returns: passed or not, and what to fix, shown as one ✓ or ✗ per line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Verdict:
    exercise: str
    problems: list[str] = field(default_factory=list)
    success: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        if self.ok:
            return f"✓ exercise {self.exercise}: " + (self.success or "correct")
        return "\n".join([f"✗ exercise {self.exercise}: not yet"]
                         + [f"  - {p}" for p in self.problems])


def unanswered(answer: Any) -> bool:
    """The placeholder a notebook leaves for the learner (``...`` or ``None``)."""
    return answer is Ellipsis or answer is None


def verdict(exercise: str, problems: list[str], success: str = "") -> Verdict:
    """Build the result of a check, e.g. ``verdict("03.1", problems, "all three queries work")``."""
    return Verdict(exercise, list(problems), success)


UNANSWERED = "not answered yet: replace ... with your answer"
"""The problem a check reports while the notebook still holds the placeholder."""


def call(fn: Any, *args: Any) -> tuple[Any, str | None]:
    """Run the learner's function: ``(result, None)``, or ``(None, what went wrong)``.
    A check reports an exception in the learner's code instead of crashing with it."""
    try:
        return fn(*args), None
    except Exception as exc:  # noqa: BLE001  (the learner's code: report, don't crash)
        return None, f"calling it with {args!r:.120} raised {type(exc).__name__}: {exc}"
