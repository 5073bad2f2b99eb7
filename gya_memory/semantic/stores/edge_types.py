"""Between this interface and Qdrant Edge's own types: filters, distances, found points."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from gya_memory.base.files import atomic_write_text
from gya_memory.semantic.sparse import Sparse
from gya_memory.base.payload import USER_ID
from gya_memory.semantic.stores.common import DENSE, Found, LEXICAL, StoreLocked, Where


def edge_module() -> Any:
    import qdrant_edge

    return qdrant_edge


def edge_distance(name: str) -> Any:
    q = edge_module()
    distances = {"cosine": q.Distance.Cosine, "dot": q.Distance.Dot,
                 "euclid": q.Distance.Euclid, "manhattan": q.Distance.Manhattan}
    try:
        return distances[name.lower()]
    except KeyError:
        raise ValueError(f"unknown distance {name!r}; one of {', '.join(distances)}") from None


def edge_filter(where: Where | None) -> Any:
    if where is None:
        return None
    q = edge_module()
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


def locked_error(folder: Path) -> StoreLocked:
    return StoreLocked(
        f"the memory folder {folder} is open in another client (another kernel or "
        "process): Qdrant's write-ahead log there is locked. Close it there with "
        "memory.close() or restart that kernel, then try again; for several processes at "
        "once use a Qdrant server (QDRANT_URL)."
    )


def is_lock_error(exc: BaseException) -> bool:
    return "WouldBlock" in str(exc) or "Resource temporarily unavailable" in str(exc)


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True))


def found_from_edge(point: Any, score: float | None = None) -> Found:
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
