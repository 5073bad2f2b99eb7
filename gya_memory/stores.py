"""Where semantic memories live: one small interface, two Qdrant back ends.

- :class:`EdgeStore`: **Qdrant Edge** (``qdrant-edge-py``), Qdrant's own engine (Rust) inside
  this process, on a folder. Each collection is one *shard*: segments with an HNSW index for
  the dense vectors, an inverted index for the sparse lexical vectors, a keyword payload index
  on ``user_id`` and a write-ahead log (WAL). A second process opening the folder fails on the
  WAL's lock and gets :class:`StoreLocked`.
- :class:`ClientStore`: ``qdrant-client`` against a Qdrant **server** (``QDRANT_URL``), or its
  pure-Python local mode (``":memory:"``), which speaks the same API as a server.

Both store, per point, a dense vector (``"dense"``), a sparse lexical vector (``"lexical"``,
IDF applied by the engine, see :mod:`gya_memory.sparse`) and a JSON payload, and both answer
dense, sparse and hybrid (prefetch + fusion, inside the engine) queries filtered to one user.

Collections are switched, never rewritten in place: :meth:`VectorStore.build` makes a new one
under a temporary name, :meth:`VectorStore.switch` checks its count and then moves the
collection's name to it in one atomic step (Edge: a small JSON file written with fsync +
``os.replace``; a server: a collection alias), and only then drops the old one. A process
killed at any point leaves the old or the new collection complete.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .files import atomic_write_text
from .sparse import Sparse
from .errors import GyaMemoryError
from .payload import CREATED_AT, DEGRADED_WRITE, TEXT, USER_ID

DENSE = "dense"
LEXICAL = "lexical"
POINTER_FILE = "collections.json"
SHARDS_DIR = "shards"
_FORMAT = 2
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
    """How hybrid search fuses the dense and the sparse ranking, inside the engine.

    - ``rrf``: ``Σ weight / (k + rank)``, ``k`` and one weight per ranking (dense, sparse);
    - ``dbsf``: distribution-based score fusion (each ranking's scores normalised by their
      mean ± 3 standard deviations, then summed).

    ``pool``: how many candidates each ranking brings (per user).
    """

    method: Literal["rrf", "dbsf"] = "rrf"
    k: int = 60
    weights: tuple[float, float] = (1.0, 1.0)
    pool: int = 20

    def __post_init__(self) -> None:
        if self.method not in ("rrf", "dbsf"):
            raise ValueError(f"fusion method must be 'rrf' or 'dbsf', got {self.method!r}")
        if self.k < 1 or self.pool < 1 or len(self.weights) != 2 or min(self.weights) < 0:
            raise ValueError(f"bad fusion settings: {self}")

    def label(self) -> str:
        if self.method == "dbsf":
            return "DBSF"
        return f"RRF k={self.k} w={self.weights[0]:g}:{self.weights[1]:g}"


@dataclass(frozen=True)
class CollectionSpec:
    """A collection's dense vector size and distance, and its metadata (fingerprint)."""

    dim: int
    distance: str
    metadata: dict[str, Any] = field(hash=False, default_factory=dict)


# -- the interface -----------------------------------------------------------------------
class VectorStore:
    """What :class:`~gya_memory.semantic.SemanticMemory` needs of a vector store."""

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

    def set_metadata(self, name: str, metadata: dict[str, Any]) -> None:
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


# == Qdrant Edge ============================================================================
def _edge() -> Any:
    import qdrant_edge

    return qdrant_edge


def _edge_distance(name: str) -> Any:
    q = _edge()
    distances = {"cosine": q.Distance.Cosine, "dot": q.Distance.Dot,
                 "euclid": q.Distance.Euclid, "manhattan": q.Distance.Manhattan}
    try:
        return distances[name.lower()]
    except KeyError:
        raise ValueError(f"unknown distance {name!r}; one of {', '.join(distances)}") from None


def _edge_filter(where: Where | None) -> Any:
    if where is None:
        return None
    q = _edge()
    conditions: list[Any] = []
    if where.user_id is not None:
        conditions.append(q.FieldCondition(key=USER_ID, match=q.MatchValue(value=where.user_id)))
    for key, value in where.equal:
        if value is True:
            # qdrant-edge-py 0.9.0 matches no point for MatchValue(True) (a Python bool
            # arrives as an int); the memory only ever writes such a flag as True and
            # removes it otherwise, so "the key is there" is the same condition.
            conditions.append(q.FieldCondition(key=key, is_empty=False))
        else:
            conditions.append(q.FieldCondition(key=key, match=q.MatchValue(value=value)))
    if where.ids is not None:
        conditions.append(q.HasIdCondition(point_ids={uuid.UUID(i) for i in where.ids}))
    return q.Filter(must=conditions) if conditions else None


def _locked_error(folder: Path) -> StoreLocked:
    return StoreLocked(
        f"the memory folder {folder} is open in another client (another kernel or "
        "process): Qdrant's write-ahead log there is locked. Close it there with "
        "memory.close() or restart that kernel, then try again; for several processes at "
        "once use a Qdrant server (QDRANT_URL)."
    )


def _is_lock_error(exc: BaseException) -> bool:
    return "WouldBlock" in str(exc) or "Resource temporarily unavailable" in str(exc)


def _write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True))


def _floats(vector: Any) -> list[float]:
    """A vector as a list of floats (a numpy row's ``tolist()`` is the fast way)."""
    return vector.tolist() if hasattr(vector, "tolist") else [float(x) for x in vector]


def _found_from_edge(point: Any, score: float | None = None) -> Found:
    vector = sparse = None
    raw = getattr(point, "vector", None)
    if isinstance(raw, dict):
        dense = raw.get(DENSE)
        vector = list(dense) if dense is not None else None
        sv = raw.get(LEXICAL)
        if sv is not None:
            sparse = Sparse(tuple(sv.indices), tuple(sv.values))
    return Found(id=str(point.id), score=float(point.score if score is None else score),
                 payload=dict(point.payload or {}), vector=vector, sparse=sparse)


class EdgeStore(VectorStore):
    """Qdrant Edge on a folder: ``collections.json`` names the shard of each collection,
    ``shards/<collection>-<random>/`` holds it. Open it with :func:`open_folder`."""

    kind = "edge"
    exclusive = True

    def __init__(self, folder: str | os.PathLike[str], *, max_search_threads: int | None = None
                 ) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / SHARDS_DIR).mkdir(exist_ok=True)
        self._pointer_path = self.folder / POINTER_FILE
        self._threads = max_search_threads
        self._shards: dict[str, Any] = {}       # shard dir name -> EdgeShard
        self._temps: dict[str, CollectionSpec] = {}  # temp name (= shard dir) -> spec
        self._dirty = False
        self._closed = False
        self._lock_fd: int | None = None
        self._collections: dict[str, dict[str, Any]] = {}
        try:
            if self._is_legacy():
                self._import_legacy()
            # The engine locks each shard's WAL: a second process fails here, on its lock.
            for entry in self._read_pointer().values():
                if entry["shard"] not in self._shards:
                    self._load(entry["shard"])
            # The folder's own lock covers the pointer file (and a folder with no shard yet).
            self._lock_folder()
            self._collections = self._read_pointer()
            for entry in self._collections.values():
                if entry["shard"] not in self._shards:
                    self._load(entry["shard"])
        except BaseException:
            self.close()
            raise
        pointer = self._collections
        # Leftovers of a build that never switched (a process killed mid-migration).
        referenced = {e["shard"] for e in pointer.values()}
        for leftover in sorted((self.folder / SHARDS_DIR).iterdir()):
            if leftover.name not in referenced:
                shutil.rmtree(leftover, ignore_errors=True)

    # -- a folder of an earlier version ----------------------------------------------------
    def _is_legacy(self) -> bool:
        return (not self._pointer_path.exists() and (self.folder / "meta.json").is_file()
                and (self.folder / "collection").is_dir())

    def _import_legacy(self) -> None:
        """Copy the collections of a folder written by an earlier gya_memory (qdrant-client's
        local mode: ``meta.json``, ``collection/``) into Edge shards, vectors, payloads and
        fingerprints as they were, then delete the old files (each collection is checked by
        its count first; an interrupted import starts again on the next open)."""
        from qdrant_client import QdrantClient

        from .sparse import document_vector

        try:
            client = QdrantClient(path=str(self.folder))
        except RuntimeError as exc:
            if "already accessed" in str(exc):
                raise _locked_error(self.folder) from None
            raise
        try:
            for described in client.get_collections().collections:
                info = client.get_collection(described.name)
                params = info.config.params.vectors
                if not hasattr(params, "size"):
                    continue  # named vectors: not a collection of gya_memory
                spec = CollectionSpec(params.size, str(params.distance.value).lower(),
                                      dict(info.config.metadata or {}))
                temp = self.build(described.name, spec)
                n, offset = 0, None
                while True:
                    records, offset = client.scroll(described.name, limit=SCROLL_PAGE,
                                                    offset=offset, with_payload=True,
                                                    with_vectors=True)
                    batch = []
                    for r in records:
                        payload = dict(r.payload or {})
                        batch.append(PointData(str(r.id), list(r.vector), document_vector(
                            str(payload.get(TEXT, "")), payload.get(CREATED_AT)), payload))
                    self.upsert(temp, batch)
                    n += len(batch)
                    if offset is None:
                        break
                self.switch(described.name, temp, expected=n)
        finally:
            client.close()
        for name in ("collection", "meta.json"):  # copied and counted: the texts go
            path = self.folder / name
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)

    # -- pointer and shards ----------------------------------------------------------------
    def _lock_folder(self) -> None:
        import fcntl

        fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise _locked_error(self.folder) from None
        self._lock_fd = fd

    def _read_pointer(self) -> dict[str, dict[str, Any]]:
        if not self._pointer_path.exists():
            return {}
        data = json.loads(self._pointer_path.read_text(encoding="utf-8"))
        if data.get("format") != _FORMAT:
            raise ValueError(f"{self._pointer_path} has format {data.get('format')!r}; "
                             f"this version reads format {_FORMAT}")
        return dict(data["collections"])

    def _write_pointer(self) -> None:
        _write_json_atomically(self._pointer_path,
                               {"format": _FORMAT, "collections": self._collections})

    def _config(self, spec: CollectionSpec | None) -> Any:
        q = _edge()
        if spec is None:
            return q.EdgeConfig(max_search_threads=self._threads) if self._threads else None
        return q.EdgeConfig(
            vectors={DENSE: q.EdgeVectorParams(size=spec.dim,
                                               distance=_edge_distance(spec.distance))},
            sparse_vectors={LEXICAL: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)},
            # Every read is filtered to one user: no global graph (m=0), one HNSW graph per
            # user_id value instead (payload_m), as Qdrant recommends for multitenancy.
            hnsw_config=q.HnswIndexConfig(m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT,
                                          full_scan_threshold=FULL_SCAN_KB,
                                          payload_m=HNSW_PAYLOAD_M),
            max_search_threads=self._threads,
        )

    def _load(self, shard: str) -> Any:
        q = _edge()
        try:
            self._shards[shard] = q.EdgeShard.load(str(self.folder / SHARDS_DIR / shard),
                                                   self._config(None))
        except Exception as exc:  # qdrant_edge raises a bare Exception
            if _is_lock_error(exc):
                raise _locked_error(self.folder) from None
            raise
        return self._shards[shard]

    def _shard(self, name: str) -> Any:
        if self._closed:
            raise RuntimeError("the store is closed")
        entry = self._collections.get(name)
        shard = entry["shard"] if entry is not None else name if name in self._temps else None
        if shard is None:
            raise KeyError(f"no collection {name!r}")
        return self._shards[shard]

    # -- collections -----------------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(self._collections) + sorted(self._temps)

    def exists(self, name: str) -> bool:
        return name in self._collections or name in self._temps

    def spec(self, name: str) -> CollectionSpec:
        if name in self._temps:
            return self._temps[name]
        entry = self._collections[name]
        return CollectionSpec(entry["dim"], entry["distance"], dict(entry.get("metadata", {})))

    def set_metadata(self, name: str, metadata: dict[str, Any]) -> None:
        self._collections[name]["metadata"] = dict(metadata)
        self._write_pointer()

    def build(self, name: str, spec: CollectionSpec) -> str:
        q = _edge()
        temp = f"{name}-{uuid.uuid4().hex[:12]}"
        shard = q.EdgeShard.create(str(self.folder / SHARDS_DIR / temp), self._config(spec))
        shard.update(q.UpdateOperation.create_field_index(
            USER_ID, q.KeywordIndexParams(is_tenant=True)))
        shard.update(q.UpdateOperation.create_field_index(
            DEGRADED_WRITE, q.PayloadSchemaType.Bool))
        self._shards[temp] = shard
        self._temps[temp] = spec
        return temp

    def switch(self, name: str, temp: str, *, expected: int) -> None:
        shard = self._shards[temp]
        shard.flush()
        found = self.count(temp)
        if found != expected:
            raise RuntimeError(f"the new collection for {name!r} holds {found} points, "
                               f"expected {expected}; the old one is kept")
        spec = self._temps.pop(temp)
        old = self._collections.get(name)
        self._collections[name] = {"shard": temp, "dim": spec.dim, "distance": spec.distance,
                                   "metadata": dict(spec.metadata)}
        self._write_pointer()  # the switch: atomic, durable
        if old is not None:
            self._remove_shard(old["shard"])

    def drop(self, name: str) -> None:
        if name in self._temps:
            del self._temps[name]
            self._remove_shard(name)
            return
        entry = self._collections.pop(name)
        self._write_pointer()
        self._remove_shard(entry["shard"])

    def _remove_shard(self, shard: str) -> None:
        handle = self._shards.pop(shard, None)
        if handle is not None:
            handle.close()
        shutil.rmtree(self.folder / SHARDS_DIR / shard, ignore_errors=True)

    # -- points ----------------------------------------------------------------------------
    def upsert(self, name: str, points: Sequence[PointData]) -> None:
        if not points:
            return
        q = _edge()
        shard = self._shard(name)
        shard.update(q.UpdateOperation.upsert_points([
            q.Point(uuid.UUID(p.id), {
                DENSE: _floats(p.vector),
                LEXICAL: q.SparseVector(indices=list(p.sparse.indices),
                                        values=list(p.sparse.values)),
            }, p.payload)
            for p in points
        ]))
        self._dirty = True

    def payloads(self, name: str, ids: Sequence[str], keys: Sequence[str]) -> dict[str, dict]:
        if not ids:
            return {}
        q = _edge()
        records = self._shard(name).retrieve([uuid.UUID(i) for i in ids],
                                             q.PayloadSelector.Include(list(keys)), False)
        return {str(r.id): dict(r.payload or {}) for r in records}

    def scroll(self, name: str, where: Where | None = None, *,
               vectors: bool = False) -> Iterator[Found]:
        q = _edge()
        shard = self._shard(name)
        offset = None
        while True:
            records, offset = shard.scroll(q.ScrollRequest(
                offset=offset, limit=SCROLL_PAGE, filter=_edge_filter(where),
                with_payload=True, with_vector=vectors))
            for r in records:
                yield _found_from_edge(r, 0.0)
            if offset is None:
                return

    def count(self, name: str, where: Where | None = None) -> int:
        q = _edge()
        return int(self._shard(name).count(q.CountRequest(exact=True,
                                                          filter=_edge_filter(where))))

    def delete(self, name: str, where: Where) -> int:
        q = _edge()
        n = self.count(name, where)
        if n:
            self._shard(name).update(q.UpdateOperation.delete_points_by_filter(
                _edge_filter(where)))
            self._dirty = True
        return n

    def delete_payload(self, name: str, ids: Sequence[str], keys: Sequence[str]) -> None:
        if ids:
            q = _edge()
            self._shard(name).update(q.UpdateOperation.delete_payload(
                [uuid.UUID(i) for i in ids], list(keys)))
            self._dirty = True

    # -- queries ---------------------------------------------------------------------------
    def _params(self, where: Where) -> Any:
        q = _edge()
        # IDF over this user's memories only: what "rare" means is per user.
        return q.SearchParams(idf=q.IdfParams(corpus=_edge_filter(where)))

    def dense(self, name: str, vector: Sequence[float], limit: int, where: Where) -> list[Found]:
        q = _edge()
        points = self._shard(name).query(q.QueryRequest(
            limit=limit, query=q.Query.Nearest(_floats(vector), using=DENSE),
            filter=_edge_filter(where), with_payload=True))
        return [_found_from_edge(p) for p in points]

    def lexical(self, name: str, sparse: Sparse, limit: int, where: Where) -> list[Found]:
        if not len(sparse):
            return []
        q = _edge()
        points = self._shard(name).query(q.QueryRequest(
            limit=limit, query=q.Query.Nearest(
                q.SparseVector(indices=list(sparse.indices), values=list(sparse.values)),
                using=LEXICAL),
            filter=_edge_filter(where), with_payload=True, params=self._params(where)))
        return [_found_from_edge(p) for p in points if p.score > 0]

    def hybrid(self, name: str, vector: Sequence[float], sparse: Sparse, limit: int,
               where: Where, fusion: FusionSpec, dense_floor: float | None) -> list[Found]:
        q = _edge()
        flt = _edge_filter(where)
        prefetches = [q.Prefetch(limit=fusion.pool,
                                 query=q.Query.Nearest(_floats(vector), using=DENSE),
                                 filter=flt, score_threshold=dense_floor)]
        if len(sparse):
            prefetches.append(q.Prefetch(
                limit=fusion.pool,
                query=q.Query.Nearest(q.SparseVector(indices=list(sparse.indices),
                                                     values=list(sparse.values)), using=LEXICAL),
                filter=flt, params=self._params(where)))
        weights = list(fusion.weights[: len(prefetches)])
        query = (q.Fusion.Dbsf() if fusion.method == "dbsf"
                 else q.Fusion.Rrf(k=fusion.k, weights=weights))
        points = self._shard(name).query(q.QueryRequest(
            limit=limit, prefetches=prefetches, query=query, filter=flt, with_payload=True))
        return [_found_from_edge(p) for p in points]

    def info(self, name: str) -> Any:
        """The engine's ``ShardInfo`` of ``name``: segments, points, indexed vectors, payload
        indexes."""
        return self._shard(name).info()

    # -- upkeep ----------------------------------------------------------------------------
    def flush(self) -> None:
        for shard in self._shards.values():
            shard.flush()

    def optimize(self) -> None:
        for shard in self._shards.values():
            shard.optimize()
        self._dirty = False

    def compact(self, name: str) -> None:
        """Copy the live points of ``name`` into a fresh shard and switch to it: deleted
        points leave no bytes behind (neither in segments nor in the WAL)."""
        spec = self.spec(name)
        temp = self.build(name, spec)
        n = 0
        batch: list[PointData] = []
        for found in self.scroll(name, vectors=True):
            batch.append(PointData(found.id, found.vector or [], found.sparse or Sparse((), ()),
                                   found.payload))
            if len(batch) >= SCROLL_PAGE:
                self.upsert(temp, batch)
                n += len(batch)
                batch = []
        self.upsert(temp, batch)
        n += len(batch)
        if name in self._temps:  # a temporary collection: nothing points at it
            self.drop(name)
            self.drop(temp)
            return
        self.switch(name, temp, expected=n)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for shard in self._shards.values():
            try:
                if self._dirty:
                    shard.optimize()  # build indexes for what was written
                shard.flush()
            finally:
                shard.close()
        self._shards.clear()
        # Unfinished builds of this process are dropped; a killed process leaves them to
        # the next open, which removes them.
        for temp in list(self._temps):
            shutil.rmtree(self.folder / SHARDS_DIR / temp, ignore_errors=True)
        self._temps.clear()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the lock
            self._lock_fd = None


# == qdrant-client: a server, or its local mode =============================================
def _models() -> Any:
    from qdrant_client import models

    return models


def _client_distance(name: str) -> Any:
    m = _models()
    distances = {"cosine": m.Distance.COSINE, "dot": m.Distance.DOT,
                 "euclid": m.Distance.EUCLID, "manhattan": m.Distance.MANHATTAN}
    try:
        return distances[name.lower()]
    except KeyError:
        raise ValueError(f"unknown distance {name!r}; one of {', '.join(distances)}") from None


def _client_filter(where: Where | None) -> Any:
    if where is None:
        return None
    m = _models()
    conditions: list[Any] = []
    if where.user_id is not None:
        conditions.append(m.FieldCondition(key=USER_ID,
                                           match=m.MatchValue(value=where.user_id)))
    for key, value in where.equal:
        conditions.append(m.FieldCondition(key=key, match=m.MatchValue(value=value)))
    if where.ids is not None:
        conditions.append(m.HasIdCondition(has_id=list(where.ids)))
    return m.Filter(must=conditions) if conditions else None


def _client_sparse(sparse: Sparse) -> Any:
    return _models().SparseVector(indices=list(sparse.indices), values=list(sparse.values))


def _found_from_client(point: Any, score: float | None = None) -> Found:
    vector = sparse = None
    raw = getattr(point, "vector", None)
    if isinstance(raw, dict):
        dense = raw.get(DENSE)
        vector = list(dense) if dense is not None else None
        sv = raw.get(LEXICAL)
        if sv is not None:
            sparse = Sparse(tuple(sv.indices), tuple(sv.values))
    return Found(id=str(point.id), score=float(point.score if score is None else score),
                 payload=dict(point.payload or {}), vector=vector, sparse=sparse)


class ClientStore(VectorStore):
    """``qdrant-client``: a server (``url``/``api_key``) or ``":memory:"``. A collection's
    name is an alias of a physical collection ``<name>__v<random>``, so a switch is one
    atomic alias update."""

    kind = "client"

    def __init__(self, *, url: str | None = None, api_key: str | None = None,
                 location: str | None = None, path: str | None = None) -> None:
        from qdrant_client import QdrantClient

        if url is not None:
            self.client = QdrantClient(url=url, api_key=api_key)
            self.exclusive = False
        elif path is not None:  # qdrant-client's own local mode on a folder (tests)
            self.client = QdrantClient(path=path)
            self.exclusive = True
        else:
            self.client = QdrantClient(location or ":memory:")
            self.exclusive = True
        self._temps: set[str] = set()

    def _aliases(self) -> dict[str, str]:
        return {a.alias_name: a.collection_name for a in self.client.get_aliases().aliases}

    def _physical(self, name: str) -> str:
        if name in self._temps:
            return name
        target = self._aliases().get(name)
        if target is None:
            raise KeyError(f"no collection {name!r}")
        return target

    def names(self) -> list[str]:
        aliases = self._aliases()
        pointed = set(aliases.values())
        stray = [c.name for c in self.client.get_collections().collections
                 if "__v" in c.name and c.name not in pointed]
        return sorted(aliases) + sorted(set(stray) | self._temps)

    def exists(self, name: str) -> bool:
        return name in self._temps or name in self._aliases()

    def spec(self, name: str) -> CollectionSpec:
        info = self.client.get_collection(self._physical(name))
        params = info.config.params.vectors[DENSE]
        return CollectionSpec(params.size, str(params.distance.value).lower(),
                              dict(info.config.metadata or {}))

    def set_metadata(self, name: str, metadata: dict[str, Any]) -> None:
        self.client.update_collection(self._physical(name), metadata=metadata)

    def build(self, name: str, spec: CollectionSpec) -> str:
        m = _models()
        if name not in self._aliases() and self.client.collection_exists(name):
            raise ValueError(
                f"the server has a collection named {name!r} that is not an alias: it was made "
                "by an earlier gya_memory (one unnamed vector, no sparse vector). Use another "
                "collection name, or delete that collection after exporting its memories.")
        temp = f"{name}__v{uuid.uuid4().hex[:12]}"
        self.client.create_collection(
            temp,
            vectors_config={DENSE: m.VectorParams(size=spec.dim,
                                                  distance=_client_distance(spec.distance))},
            sparse_vectors_config={LEXICAL: m.SparseVectorParams(modifier=m.Modifier.IDF)},
            metadata=spec.metadata,
        )
        if (self.client.get_collection(temp).config.metadata or {}) != spec.metadata:
            self.client.delete_collection(temp)
            raise RuntimeError(
                "this Qdrant server does not keep collection metadata, where the embedder's "
                "fingerprint is recorded; use a server that does (Qdrant 1.16 or newer)")
        if not self.exclusive:  # local mode has no payload indexes (and warns if asked)
            self.client.create_payload_index(
                temp, USER_ID,
                field_schema=m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD,
                                                  is_tenant=True))
        self._temps.add(temp)
        return temp

    def switch(self, name: str, temp: str, *, expected: int) -> None:
        m = _models()
        found = self.count(temp)
        if found != expected:
            raise RuntimeError(f"the new collection for {name!r} holds {found} points, "
                               f"expected {expected}; the old one is kept")
        old = self._aliases().get(name)
        ops: list[Any] = []
        if old is not None:
            ops.append(m.DeleteAliasOperation(delete_alias=m.DeleteAlias(alias_name=name)))
        ops.append(m.CreateAliasOperation(create_alias=m.CreateAlias(collection_name=temp,
                                                                     alias_name=name)))
        self.client.update_collection_aliases(change_aliases_operations=ops)
        self._temps.discard(temp)
        if old is not None:
            self.client.delete_collection(old)

    def drop(self, name: str) -> None:
        m = _models()
        if name in self._temps or name not in self._aliases():
            self._temps.discard(name)
            self.client.delete_collection(name)
            return
        target = self._physical(name)
        self.client.update_collection_aliases(change_aliases_operations=[
            m.DeleteAliasOperation(delete_alias=m.DeleteAlias(alias_name=name))])
        self.client.delete_collection(target)

    def upsert(self, name: str, points: Sequence[PointData]) -> None:
        if not points:
            return
        m = _models()
        self.client.upsert(self._physical(name), points=[
            m.PointStruct(id=p.id, vector={DENSE: _floats(p.vector),
                                           LEXICAL: _client_sparse(p.sparse)},
                          payload=p.payload)
            for p in points
        ], wait=True)

    def payloads(self, name: str, ids: Sequence[str], keys: Sequence[str]) -> dict[str, dict]:
        if not ids:
            return {}
        records = self.client.retrieve(self._physical(name), ids=list(ids),
                                       with_payload=list(keys))
        return {str(r.id): dict(r.payload or {}) for r in records}

    def scroll(self, name: str, where: Where | None = None, *,
               vectors: bool = False) -> Iterator[Found]:
        physical = self._physical(name)
        offset = None
        while True:
            records, offset = self.client.scroll(
                physical, scroll_filter=_client_filter(where), limit=SCROLL_PAGE,
                offset=offset, with_payload=True, with_vectors=vectors)
            for r in records:
                yield _found_from_client(r, 0.0)
            if offset is None:
                return

    def count(self, name: str, where: Where | None = None) -> int:
        return self.client.count(self._physical(name), count_filter=_client_filter(where),
                                 exact=True).count

    def delete(self, name: str, where: Where) -> int:
        m = _models()
        n = self.count(name, where)
        if n:
            self.client.delete(self._physical(name), wait=True,
                               points_selector=m.FilterSelector(filter=_client_filter(where)))
        return n

    def delete_payload(self, name: str, ids: Sequence[str], keys: Sequence[str]) -> None:
        if ids:
            self.client.delete_payload(self._physical(name), keys=list(keys), points=list(ids))

    def _params(self, where: Where) -> Any:
        m = _models()
        return m.SearchParams(idf=m.IdfCorpusParams(corpus=_client_filter(where)))

    def dense(self, name: str, vector: Sequence[float], limit: int, where: Where) -> list[Found]:
        response = self.client.query_points(
            self._physical(name), query=_floats(vector), using=DENSE, limit=limit,
            query_filter=_client_filter(where), with_payload=True)
        return [_found_from_client(p) for p in response.points]

    def lexical(self, name: str, sparse: Sparse, limit: int, where: Where) -> list[Found]:
        if not len(sparse):
            return []
        response = self.client.query_points(
            self._physical(name), query=_client_sparse(sparse), using=LEXICAL, limit=limit,
            query_filter=_client_filter(where), with_payload=True, search_params=self._params(where))
        return [_found_from_client(p) for p in response.points if p.score > 0]

    def hybrid(self, name: str, vector: Sequence[float], sparse: Sparse, limit: int,
               where: Where, fusion: FusionSpec, dense_floor: float | None) -> list[Found]:
        m = _models()
        flt = _client_filter(where)
        prefetch = [m.Prefetch(query=_floats(vector), using=DENSE, filter=flt,
                               limit=fusion.pool, score_threshold=dense_floor)]
        if len(sparse):
            prefetch.append(m.Prefetch(query=_client_sparse(sparse), using=LEXICAL, filter=flt,
                                       limit=fusion.pool, params=self._params(where)))
        query = (m.FusionQuery(fusion=m.Fusion.DBSF) if fusion.method == "dbsf"
                 else m.RrfQuery(rrf=m.Rrf(k=fusion.k,
                                           weights=list(fusion.weights[: len(prefetch)]))))
        response = self.client.query_points(self._physical(name), prefetch=prefetch,
                                            query=query, limit=limit, query_filter=flt,
                                            with_payload=True)
        return [_found_from_client(p) for p in response.points]

    def close(self) -> None:
        self.client.close()


# -- one Edge store per folder and process -------------------------------------------------
_open_folders: dict[str, tuple[EdgeStore, int]] = {}


def open_folder(folder: str | os.PathLike[str]) -> tuple[EdgeStore, str]:
    """The :class:`EdgeStore` on ``folder``, shared by every memory of this process that
    opens it; returns it and the key to give :func:`release_folder`."""
    key = os.path.realpath(folder)
    if key in _open_folders:
        store, users = _open_folders[key]
        _open_folders[key] = (store, users + 1)
        return store, key
    store = EdgeStore(folder)
    _open_folders[key] = (store, 1)
    return store, key


def release_folder(key: str) -> None:
    """One user of the folder's store is done; the last one closes it."""
    store, users = _open_folders.get(key, (None, 0))
    if store is None:
        return
    if users > 1:
        _open_folders[key] = (store, users - 1)
    else:
        del _open_folders[key]
        store.close()
