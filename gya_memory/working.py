"""Working memory (工作记忆): the messages the model sees in this one call.

It is the most direct layer and the most fragile: it lives in the process (a restart
empties it) and it must fit the context window. :meth:`WorkingMemory.trim` makes it fit a
character or token budget by dropping the oldest turns first. The system message is never
dropped, nor is the latest turn (the question being asked); if those alone do not fit,
trimming refuses with an error and changes nothing.

A *turn* is a user message together with everything after it up to the next user message
(the assistant's reply, tool results).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from gya_memory.base.checks import check_count, check_text
from gya_memory.base.errors import GyaMemoryError
from gya_memory.base.text import CJK_PUNCT, HAN
from gya_memory.base.text import ROLES
from gya_memory.base.text import Message
from gya_memory.base.text import Role

MAX_CONTENT_CHARS = 10_000_000

_CJK = HAN + CJK_PUNCT
_TOKEN = re.compile(rf"[{_CJK}]|[^\s{_CJK}\w]|\w+")


def approx_tokens(text: str) -> int:
    """A rough, model-free token count: one per CJK character, word or punctuation mark.

    Real tokenizers differ (a long English word is often several tokens); pass the
    model's own counter to :meth:`WorkingMemory.trim` when you have it.
    """
    return len(_TOKEN.findall(text))


class BudgetError(ValueError, GyaMemoryError):
    """The messages that may not be dropped are already over the budget."""


@dataclass(frozen=True)
class TrimReport:
    """What :meth:`WorkingMemory.trim` did."""

    budget: int
    unit: str  # "chars" or "tokens"
    before: int
    after: int
    dropped: list[Message] = field(default_factory=list)

    @property
    def dropped_turns(self) -> int:
        return sum(1 for m in self.dropped if m["role"] == "user")

    def __str__(self) -> str:
        return (
            f"{self.before:,} -> {self.after:,} {self.unit} (budget {self.budget:,}); "
            f"dropped {len(self.dropped)} message(s) in {self.dropped_turns} turn(s)"
        )


class WorkingMemory:
    """An ordered list of chat messages, with an optional system message first.

    >>> wm = WorkingMemory(system="你是一个贴心的助手。")
    >>> wm.add("user", "我叫张三。")
    >>> [m["role"] for m in wm.snapshot()]
    ['system', 'user']
    """

    def __init__(self, system: str | None = None) -> None:
        self._messages: list[Message] = []
        if system is not None:
            self.add("system", system)

    def add(self, role: Role, content: str) -> None:
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}; got {role!r}")
        if not isinstance(content, str):
            raise ValueError(f"content must be a string, got {type(content).__name__}")
        if content:  # an empty reply is allowed; NUL and lone surrogates are not
            check_text("content", content, MAX_CONTENT_CHARS, strip=False)
        if role == "system" and self._messages:
            raise ValueError("the system message must come first; create a new WorkingMemory")
        self._messages.append({"role": role, "content": content})

    @property
    def system(self) -> Message | None:
        first = self._messages[0] if self._messages else None
        return dict(first) if first and first["role"] == "system" else None

    def snapshot(self) -> list[Message]:
        """A copy of the messages: changing it does not change the memory."""
        return copy.deepcopy(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def clear(self) -> None:
        """Forget everything but the system message, as a process restart would (and more)."""
        self._messages = [m for m in self._messages if m["role"] == "system"]

    def size(self, count: Callable[[str], int] = len) -> int:
        return sum(count(m["content"]) for m in self._messages)

    def trim(
        self,
        *,
        max_chars: int | None = None,
        max_tokens: int | None = None,
        count_tokens: Callable[[str], int] = approx_tokens,
    ) -> TrimReport:
        """Drop the oldest turns until the messages fit; return what was dropped."""
        if (max_chars is None) == (max_tokens is None):
            raise ValueError("trim() takes exactly one of max_chars= or max_tokens=")
        budget = max_chars if max_chars is not None else max_tokens
        assert budget is not None
        try:
            check_count("max_chars" if max_chars is not None else "max_tokens", budget, 0)
        except ValueError as exc:
            raise ValueError(f"the budget must be a non-negative int: {exc}") from None
        unit, count = ("chars", len) if max_chars is not None else ("tokens", count_tokens)

        head = [m for m in self._messages[:1] if m["role"] == "system"]
        turns = _split_turns(self._messages[len(head):])
        before = self.size(count)
        cost = [sum(count(m["content"]) for m in turn) for turn in turns]
        total = before
        start = 0
        while total > budget and start < len(turns) - 1:
            total -= cost[start]
            start += 1
        if total > budget:
            raise BudgetError(
                f"the system message and the latest turn need {total:,} {unit}; "
                f"the budget is {budget:,}. Nothing was dropped."
            )
        dropped = [m for turn in turns[:start] for m in turn]
        self._messages = head + [m for turn in turns[start:] for m in turn]
        return TrimReport(budget, unit, before, total, copy.deepcopy(dropped))


def _split_turns(messages: list[Message]) -> list[list[Message]]:
    turns: list[list[Message]] = []
    for m in messages:
        if m["role"] == "user" or not turns:
            turns.append([])
        turns[-1].append(m)
    return turns
