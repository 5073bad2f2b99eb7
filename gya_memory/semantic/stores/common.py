"""What both vector stores share: the values crossing the interface and :class:`VectorStore`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gya_memory.semantic.sparse import Sparse
from gya_memory.base.errors import GyaMemoryError


DENSE = "dense"
LEXICAL = "lexical"
POINTER_FILE = "collections.json"
SHARDS_DIR = "shards"
STORE_FORMAT = 2
SCROLL_PAGE = 512
#: HNSW settings of new Edge shards (see EdgeStore._config).
HNSW_M = 0
HNSW_PAYLOAD_M = 16
HNSW_EF_CONSTRUCT = 100
FULL_SCAN_KB = 10_000


class StoreLocked(RuntimeError, GyaMemoryError):
    """The memory folder is open in another process (another kernel)."""


# -- values crossing the interface -------------------------------------------------------
@dataclass(frozen=True)
class Where:
    """Which points: those of ``user_id`` (if given), with ``ids`` (if given), whose payload
    has the ``equal`` values."""

    user_id: str | None = None
    ids: tuple[str, ...] | None = None
    equal: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class PointData:
    """One point to write: id, dense vector, sparse lexical vector and payload."""

    id: str
    vector: Sequence[float]
    sparse: Sparse
    payload: dict[str, Any] = field(hash=False)


@dataclass(frozen=True)
class Found:
    """One point read back: id, score (0 for a scroll) and payload (and vectors if asked)."""

    id: str
    score: float
    payload: dict[str, Any] = field(hash=False)
    vector: list[float] | None = None
    sparse: Sparse | None = None


@dataclass(frozen=True)
class FusionSpec:
    """How hybrid search fuses the dense and the sparse ranking.

    - ``rrf``: ``Σ weight / (k + rank)``, ``k`` and one weight per ranking (dense, sparse);
    - ``dbsf``: distribution-based score fusion (each ranking's scores normalised by their
      mean ± 3 standard deviations, then summed).

    ``pool``: how many candidates each ranking brings (per user). A min-max blend, measured
    and not made the default, is ``gya_memory.lab.fusion.MinMaxFusion``: a fusion with its
    own ``fuse`` method, which :meth:`VectorStore.hybrid` runs instead of the engine's.
    """

    method: str = "rrf"
    k: int = 60
    weights: tuple[float, float] = (1.0, 1.0)
    pool: int = 20
    methods: ClassVar[tuple[str, ...]] = ("rrf", "dbsf")  # the methods this class accepts

    def __post_init__(self) -> None:
        if self.method not in self.methods:
            raise ValueError(f"fusion method must be one of {', '.join(self.methods)}, got {self.method!r}")
        if self.k < 1 or self.pool < 1 or len(self.weights) != 2 or min(self.weights) < 0:
            raise ValueError(f"bad fusion settings: {self}")

    def label(self) -> str:
        return "DBSF" if self.method == "dbsf" else f"RRF k={self.k} w={self.weights[0]:g}:{self.weights[1]:g}"


@dataclass(frozen=True)
class CollectionSpec:
    """A collection's dense vector size and distance, and its metadata (fingerprint)."""

    dim: int
    distance: str
    metadata: dict[str, Any] = field(hash=False, default_factory=dict)


# -- the interface -----------------------------------------------------------------------
class VectorStore:
    """What :class:`~gya_memory.semantic.memory.SemanticMemory` needs of a vector store."""

    kind: str = "?"
    #: True when no other process can write (a folder this process holds, or RAM).
    exclusive: bool = True

    # collections
    def names(self) -> list[str]:
        """Every collection, including unfinished temporary ones."""
        raise NotImplementedError

    def exists(self, name: str) -> bool:
        raise NotImplementedError

    def spec(self, name: str) -> CollectionSpec:
        raise NotImplementedError

    def create(self, name: str, spec: CollectionSpec) -> None:
        """Create ``name`` (empty) directly."""
        temp = self.build(name, spec)
        self.switch(name, temp, expected=0)

    def build(self, name: str, spec: CollectionSpec) -> str:
        """Create an empty collection that will replace ``name``; returns its temporary name,
        usable with every read and write method until :meth:`switch` or :meth:`drop`."""
        raise NotImplementedError

    def switch(self, name: str, temp: str, *, expected: int) -> None:
        """Check that ``temp`` holds ``expected`` points, make it ``name`` atomically, then
        drop the collection ``name`` was before."""
        raise NotImplementedError

    def drop(self, name: str) -> None:
        raise NotImplementedError

    # points
    def upsert(self, name: str, points: Sequence[PointData]) -> None:
        raise NotImplementedError

    def payloads(self, name: str, ids: Sequence[str], keys: Sequence[str]) -> dict[str, dict]:
        raise NotImplementedError

    def scroll(self, name: str, where: Where | None = None, *,
               vectors: bool = False) -> Iterator[Found]:
        raise NotImplementedError

    def count(self, name: str, where: Where | None = None) -> int:
        raise NotImplementedError

    def delete(self, name: str, where: Where) -> int:
        raise NotImplementedError

    def delete_payload(self, name: str, ids: Sequence[str], keys: Sequence[str]) -> None:
        raise NotImplementedError

    # queries
    def dense(self, name: str, vector: Sequence[float], limit: int, where: Where) -> list[Found]:
        raise NotImplementedError

    def lexical(self, name: str, sparse: Sparse, limit: int, where: Where) -> list[Found]:
        raise NotImplementedError

    def hybrid(self, name: str, vector: Sequence[float], sparse: Sparse, limit: int,
               where: Where, fusion: FusionSpec, dense_floor: float | None) -> list[Found]:
        """Both rankings fused by ``fusion``, the dense side above ``dense_floor``. RRF and
        DBSF run inside the engine (each store's ``_engine_hybrid``); a fusion with its own
        ``fuse(store, name, vector, sparse, limit, where, dense_floor)`` runs that."""
        fuse = getattr(fusion, "fuse", None)
        if fuse is not None:
            return fuse(self, name, vector, sparse, limit, where, dense_floor)
        return self._engine_hybrid(name, vector, sparse, limit, where, fusion, dense_floor)

    def _engine_hybrid(self, name: str, vector: Sequence[float], sparse: Sparse, limit: int,
                       where: Where, fusion: FusionSpec, dense_floor: float | None) -> list[Found]:
        raise NotImplementedError

    # upkeep
    def flush(self) -> None:
        """Make every write durable."""

    def optimize(self) -> None:
        """Build indexes (HNSW) for what was written since the last call."""

    def compact(self, name: str) -> None:
        """Rewrite ``name`` so that deleted points are gone from disk, not just marked."""

    def close(self) -> None:
        raise NotImplementedError




def as_floats(vector: Any) -> list[float]:
    """A vector as a list of floats (a numpy row's ``tolist()`` is the fast way)."""
    return vector.tolist() if hasattr(vector, "tolist") else [float(x) for x in vector]
