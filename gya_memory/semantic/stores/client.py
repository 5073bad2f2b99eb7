"""The server store: ``qdrant-client`` against a Qdrant server, or its local mode."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from gya_memory.semantic.sparse import Sparse
from gya_memory.base.payload import USER_ID
from gya_memory.semantic.stores.common import (
    CollectionSpec, DENSE, Found, FusionSpec, LEXICAL, PointData, SCROLL_PAGE, VectorStore, Where,
    as_floats,
)


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
            m.PointStruct(id=p.id, vector={DENSE: as_floats(p.vector),
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
            self._physical(name), query=as_floats(vector), using=DENSE, limit=limit,
            query_filter=_client_filter(where), with_payload=True)
        return [_found_from_client(p) for p in response.points]

    def lexical(self, name: str, sparse: Sparse, limit: int, where: Where) -> list[Found]:
        if not len(sparse):
            return []
        response = self.client.query_points(
            self._physical(name), query=_client_sparse(sparse), using=LEXICAL, limit=limit,
            query_filter=_client_filter(where), with_payload=True, search_params=self._params(where))
        return [_found_from_client(p) for p in response.points if p.score > 0]

    def _engine_hybrid(self, name: str, vector: Sequence[float], sparse: Sparse, limit: int,
                       where: Where, fusion: FusionSpec, dense_floor: float | None) -> list[Found]:
        m = _models()
        flt = _client_filter(where)
        prefetch = [m.Prefetch(query=as_floats(vector), using=DENSE, filter=flt,
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
