"""The in-process store: Qdrant Edge on a folder, one shard per collection."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from gya_memory.base.files import try_lock
from gya_memory.semantic.sparse import Sparse
from gya_memory.base.payload import CREATED_AT, DEGRADED_WRITE, TEXT, USER_ID
from gya_memory.semantic.stores.common import (
    CollectionSpec, DENSE, FULL_SCAN_KB, Found, FusionSpec, HNSW_EF_CONSTRUCT, HNSW_M,
    HNSW_PAYLOAD_M, LEXICAL, POINTER_FILE, PointData, SCROLL_PAGE, SHARDS_DIR, VectorStore, Where,
    STORE_FORMAT, as_floats,
)
from gya_memory.semantic.stores.edge_types import (
    edge_module, edge_distance, edge_filter, found_from_edge, is_lock_error, locked_error,
    write_json_atomically,
)


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

        from gya_memory.semantic.sparse import document_vector

        try:
            client = QdrantClient(path=str(self.folder))
        except RuntimeError as exc:
            if "already accessed" in str(exc):
                raise locked_error(self.folder) from None
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
        fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        if not try_lock(fd):
            os.close(fd)
            raise locked_error(self.folder)
        self._lock_fd = fd

    def _read_pointer(self) -> dict[str, dict[str, Any]]:
        if not self._pointer_path.exists():
            return {}
        data = json.loads(self._pointer_path.read_text(encoding="utf-8"))
        if data.get("format") != STORE_FORMAT:
            raise ValueError(f"{self._pointer_path} has format {data.get('format')!r}; "
                             f"this version reads format {STORE_FORMAT}")
        return dict(data["collections"])

    def _write_pointer(self) -> None:
        write_json_atomically(self._pointer_path,
                               {"format": STORE_FORMAT, "collections": self._collections})

    def _config(self, spec: CollectionSpec | None) -> Any:
        q = edge_module()
        if spec is None:
            return q.EdgeConfig(max_search_threads=self._threads) if self._threads else None
        return q.EdgeConfig(
            vectors={DENSE: q.EdgeVectorParams(size=spec.dim,
                                               distance=edge_distance(spec.distance))},
            sparse_vectors={LEXICAL: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)},
            # Every read is filtered to one user: no global graph (m=0), one HNSW graph per
            # user_id value instead (payload_m), as Qdrant recommends for multitenancy.
            hnsw_config=q.HnswIndexConfig(m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT,
                                          full_scan_threshold=FULL_SCAN_KB,
                                          payload_m=HNSW_PAYLOAD_M),
            max_search_threads=self._threads,
        )

    def _load(self, shard: str) -> Any:
        q = edge_module()
        try:
            self._shards[shard] = q.EdgeShard.load(str(self.folder / SHARDS_DIR / shard),
                                                   self._config(None))
        except Exception as exc:  # qdrant_edge raises a bare Exception
            if is_lock_error(exc):
                raise locked_error(self.folder) from None
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

    def build(self, name: str, spec: CollectionSpec) -> str:
        q = edge_module()
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
        q = edge_module()
        shard = self._shard(name)
        shard.update(q.UpdateOperation.upsert_points([
            q.Point(uuid.UUID(p.id), {
                DENSE: as_floats(p.vector),
                LEXICAL: q.SparseVector(indices=list(p.sparse.indices),
                                        values=list(p.sparse.values)),
            }, p.payload)
            for p in points
        ]))
        self._dirty = True

    def payloads(self, name: str, ids: Sequence[str], keys: Sequence[str]) -> dict[str, dict]:
        if not ids:
            return {}
        q = edge_module()
        records = self._shard(name).retrieve([uuid.UUID(i) for i in ids],
                                             q.PayloadSelector.Include(list(keys)), False)
        return {str(r.id): dict(r.payload or {}) for r in records}

    def scroll(self, name: str, where: Where | None = None, *,
               vectors: bool = False) -> Iterator[Found]:
        q = edge_module()
        shard = self._shard(name)
        offset = None
        while True:
            records, offset = shard.scroll(q.ScrollRequest(
                offset=offset, limit=SCROLL_PAGE, filter=edge_filter(where),
                with_payload=True, with_vector=vectors))
            for r in records:
                yield found_from_edge(r, 0.0)
            if offset is None:
                return

    def count(self, name: str, where: Where | None = None) -> int:
        q = edge_module()
        return int(self._shard(name).count(q.CountRequest(exact=True,
                                                          filter=edge_filter(where))))

    def delete(self, name: str, where: Where) -> int:
        q = edge_module()
        n = self.count(name, where)
        if n:
            self._shard(name).update(q.UpdateOperation.delete_points_by_filter(
                edge_filter(where)))
            self._dirty = True
        return n

    def delete_payload(self, name: str, ids: Sequence[str], keys: Sequence[str]) -> None:
        if ids:
            q = edge_module()
            self._shard(name).update(q.UpdateOperation.delete_payload(
                [uuid.UUID(i) for i in ids], list(keys)))
            self._dirty = True

    # -- queries ---------------------------------------------------------------------------
    def _params(self, where: Where) -> Any:
        q = edge_module()
        # IDF over this user's memories only: what "rare" means is per user.
        return q.SearchParams(idf=q.IdfParams(corpus=edge_filter(where)))

    def dense(self, name: str, vector: Sequence[float], limit: int, where: Where) -> list[Found]:
        q = edge_module()
        points = self._shard(name).query(q.QueryRequest(
            limit=limit, query=q.Query.Nearest(as_floats(vector), using=DENSE),
            filter=edge_filter(where), with_payload=True))
        return [found_from_edge(p) for p in points]

    def lexical(self, name: str, sparse: Sparse, limit: int, where: Where) -> list[Found]:
        if not len(sparse):
            return []
        q = edge_module()
        points = self._shard(name).query(q.QueryRequest(
            limit=limit, query=q.Query.Nearest(
                q.SparseVector(indices=list(sparse.indices), values=list(sparse.values)),
                using=LEXICAL),
            filter=edge_filter(where), with_payload=True, params=self._params(where)))
        return [found_from_edge(p) for p in points if p.score > 0]

    def _engine_hybrid(self, name: str, vector: Sequence[float], sparse: Sparse, limit: int,
                       where: Where, fusion: FusionSpec, dense_floor: float | None) -> list[Found]:
        q = edge_module()
        flt = edge_filter(where)
        prefetches = [q.Prefetch(limit=fusion.pool,
                                 query=q.Query.Nearest(as_floats(vector), using=DENSE),
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
        return [found_from_edge(p) for p in points]

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


