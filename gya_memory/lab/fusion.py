"""The min-max blend for hybrid search (最小-最大融合), measured and not made the default.

Why it is here and not in the library (为什么不在库里): on LongMemEval and MemoryBank en it ranks
the evidence better than the shipped RRF, in Chinese worse (turn R@5 0.893 against 0.902); it
depends on how many candidates are normalised; and on the acceptance set's small stores it
ranks the relevant memory lower than RRF (README, "Recall at real sizes"). So the library
fuses with RRF (:data:`gya_memory.semantic.memory.HYBRID_FUSION`), and this stays to choose:
``SemanticMemory(..., fusion=MinMaxFusion(weights=(0.5, 0.5), pool=50))`` (``benchmarks/
bench_recall.py --fusion minmax`` runs it through the package).

Qdrant fuses only with RRF and DBSF, so min-max runs in Python over the two rankings the
store returns: :meth:`MinMaxFusion.fuse`, which ``VectorStore.hybrid`` calls instead of the
engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from gya_memory.semantic.sparse import Sparse
from gya_memory.semantic.stores.common import Found, FusionSpec, Where


@dataclass(frozen=True)
class MinMaxFusion(FusionSpec):
    """Each ranking's scores normalised to 0-1 over its ``pool`` candidates (best 1, worst 0;
    a memory missing from a ranking gets 0 there), then ``weights[0] * dense + weights[1] *
    sparse`` (:func:`fuse_minmax`)."""

    method: str = "minmax"
    methods: ClassVar[tuple[str, ...]] = ("minmax",)

    def label(self) -> str:
        return f"min-max w={self.weights[0]:g}:{self.weights[1]:g} pool={self.pool}"

    def fuse(self, store: Any, name: str, vector: Sequence[float], sparse: Sparse, limit: int,
             where: Where, dense_floor: float | None) -> list[Found]:
        """The blend of ``store``'s two rankings, the dense side above ``dense_floor``."""
        dense = [f for f in store.dense(name, vector, self.pool, where)
                 if dense_floor is None or f.score >= dense_floor]
        return fuse_minmax(dense, store.lexical(name, sparse, self.pool, where), self.weights,
                           limit)


def normalised(found: Sequence[Found]) -> dict[str, float]:
    """Scores mapped to 0-1 over ``found`` (all equal: 1)."""
    if not found:
        return {}
    lo, hi = min(f.score for f in found), max(f.score for f in found)
    span = hi - lo
    return {f.id: 1.0 if span <= 1e-12 else (f.score - lo) / span for f in found}


def fuse_minmax(dense: Sequence[Found], lexical: Sequence[Found], weights: tuple[float, float],
                limit: int) -> list[Found]:
    """The min-max blend of two rankings (best first in, best first out), ``score`` the
    blended score. Ties keep the dense order, then the lexical order."""
    d, lx = normalised(dense), normalised(lexical)
    first: dict[str, Found] = {}
    for f in [*dense, *lexical]:
        first.setdefault(f.id, f)
    order = {pid: i for i, pid in enumerate(first)}
    score = {pid: weights[0] * d.get(pid, 0.0) + weights[1] * lx.get(pid, 0.0) for pid in first}
    ranked = sorted(first, key=lambda pid: (-score[pid], order[pid]))[:limit]
    return [Found(pid, score[pid], first[pid].payload, first[pid].vector, first[pid].sparse)
            for pid in ranked]
