"""What an agent needs from a memory, written down as a type: :class:`Retriever`.

:class:`~gya_memory.answer.agent.MemoryAgent` and the evaluation ask a memory for ranked
candidates (``candidates``), for the best memories above a threshold or a hybrid ranking
(``retrieve``; the lab's agent with ``recall="hybrid"``),
and for its embedder's thresholds (``embedder.threshold(query)``, and the recall floor of
:func:`gya_memory.answer.gate.recall_floor`, which reads ``embedder.name``).
:class:`~gya_memory.semantic.memory.SemanticMemory` is one; a test double need only have these.

>>> from gya_memory.semantic.memory import SemanticMemory
>>> all(hasattr(SemanticMemory, name) for name in ("candidates", "retrieve", "embedder"))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from gya_memory.answer.context import HitLike


@runtime_checkable
class Thresholds(Protocol):
    """The part of an embedder the agent reads: its name and its threshold per query."""

    name: str

    def threshold(self, query: str) -> float: ...


@runtime_checkable
class Retriever(Protocol):
    """A memory an agent can recall from: best first, with scores, for one user."""

    @property
    def embedder(self) -> Thresholds: ...

    def candidates(self, query: str, top_k: int = 10) -> Sequence[HitLike]:
        """The ``top_k`` nearest memories, best first, with no threshold applied."""
        ...

    def retrieve(self, query: str, top_k: int = 3, min_score: float | None = None, *,
                 mode: Any = "dense") -> Sequence[HitLike]:
        """The best memories above the threshold (``mode="hybrid"``: dense and lexical fused)."""
        ...
