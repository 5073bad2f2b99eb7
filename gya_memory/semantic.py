"""Semantic memory (语义记忆): memories found by meaning, in Qdrant.

Each memory is one short text, stored as a point: its embedding is the vector, and the
text, the ``user_id`` and any metadata are the payload. Recall embeds the question and asks
Qdrant for the nearest points of that user (``query_points``), so "我最近饮食上有什么要注意
的吗？" finds "最近在戒咖啡，想少喝一点" although no word is shared. ``mode="lexical"`` ranks
by BM25 instead (rare names, order ids, dates), and ``mode="hybrid"`` fuses both rankings
with reciprocal rank fusion (see :mod:`gya_memory.lexical`).

Where the points live:

- by default in an embedded, persistent Qdrant inside the data folder
  (``$GYA_DATA_DIR/qdrant``), so memories survive a kernel restart. The folder is locked
  while a client has it open: one process at a time. In one process, every
  :class:`SemanticMemory` on the same folder shares one client, so re-running a notebook
  cell or opening two users side by side just works; another kernel gets
  :class:`StoreLocked` until this one calls :meth:`SemanticMemory.close`.
- ``":memory:"``: in RAM only, gone when the object is (tests, throw-away demos).
- a Qdrant server when ``QDRANT_URL`` (and ``QDRANT_API_KEY``) is set, or ``url=`` is given.

Point ids are ``uuid5(user_id + normalised text)``: storing the same memory again updates
that point (in any process), where ``abs(hash(text)) % 10**12`` would change with every
process, because Python salts string hashes, and pile up duplicates.

A collection holds vectors of one embedding model only. Its fingerprint (model, dim,
distance) is kept in the collection's metadata; opening it with another embedder raises
:class:`EmbedderMismatch` naming both, and :meth:`SemanticMemory.reembed` migrates it.

Degraded mode (⚠️): when the embedding service fails (:class:`EmbeddingUnavailable`) and
the fallback is on (``GYA_EMBED_FALLBACK=1``, the default), the memory warns once with a
:class:`DegradedWarning` saying what failed, and from then on writes *and* reads use a
TF-IDF embedder and a separate collection, ``<collection>__fallback``, into which this
user's stored texts are copied first. Vectors of two models never share a collection, and
every :class:`Hit` says ``degraded=True``. :meth:`SemanticMemory.recover` moves the writes
made during the outage back once the service is up again. With the fallback off the
:class:`EmbeddingUnavailable` error (which names the URL) is raised as it is.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
import uuid
import warnings
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .checks import check_text as _check_text
from .clock import Clock, system_clock
from .config import get_settings
from .lexical import BM25, rrf

if TYPE_CHECKING:  # qdrant_client and numpy are imported when a memory is opened
    import numpy as np
    from qdrant_client import QdrantClient, models

    from .embeddings import Embedder, Fingerprint

MAX_TEXT_CHARS = 2000
MAX_ID_CHARS = 128
DEFAULT_USER = "default"
DEFAULT_COLLECTION = "memories"
DEFAULT_DIR_NAME = "qdrant"
FALLBACK_SUFFIX = "__fallback"
BATCH_SIZE = 64
RRF_K = 60
# Payload keys the memory writes itself; metadata may not use them.
RESERVED_KEYS = frozenset({"text", "user_id", "created_at", "updated_at", "degraded_write"})
# Fixed namespace of the point ids: the same (user, text) gives the same id everywhere.
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://gya-memory/semantic/point-id/v1")
_META_KEY = "gya_memory"
_COLLECTION_RE = re.compile(r"[A-Za-z0-9_-]{1,100}")

Mode = Literal["dense", "lexical", "hybrid"]


class StoreLocked(RuntimeError):
    """The memory folder is open in another client (another kernel or process)."""


class EmbedderMismatch(ValueError):
    """A collection was built by one embedding model and is being opened with another."""

    def __init__(self, collection: str, stored: Fingerprint, wanted: Fingerprint) -> None:
        self.collection, self.stored, self.wanted = collection, stored, wanted
        super().__init__(
            f"collection {collection!r} holds vectors of {_describe(stored)}, but this "
            f"memory's embedder is {_describe(wanted)}; vectors of two models can't be "
            "compared. Open it with the embedder it was built with, or re-embed every "
            "memory with the new one: SemanticMemory(..., embedder=new, reembed=True), or "
            "memory.reembed(new) on an open memory."
        )


class DegradedWarning(RuntimeWarning):
    """⚠️ The embedding service failed; the memory runs on the TF-IDF fallback."""


@dataclass(frozen=True)
class Hit:
    """One recalled memory. ``score``: cosine similarity for ``dense``, BM25 for
    ``lexical``, the fused RRF score for ``hybrid``; higher is better in each."""

    id: str
    score: float
    text: str
    payload: dict[str, Any] = field(hash=False)
    degraded: bool = False
    source: str = "dense"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Memory:
    """One stored memory, as :meth:`SemanticMemory.all` lists it."""

    id: str
    text: str
    payload: dict[str, Any] = field(hash=False)


# -- ids and checks ------------------------------------------------------------------------
def normalise(text: str) -> str:
    """The form a memory's id is computed from: NFKC, trimmed, runs of spaces made one."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def point_id(user_id: str, text: str) -> str:
    """The point id of ``text`` for ``user_id``: the same in every process and on every run.

    >>> point_id("u1", "用户叫张三") == point_id("u1", "  用户叫张三 ")
    True
    >>> point_id("u1", "用户叫张三") == point_id("u2", "用户叫张三")
    False
    """
    user_id = _check_text("user_id", user_id, MAX_ID_CHARS)
    text = _check_text("text", text, MAX_TEXT_CHARS)
    return str(uuid.uuid5(ID_NAMESPACE, f"{user_id}\x1f{normalise(text)}"))


def default_path() -> Path:
    """Where the memories live when neither a path nor a server is given."""
    return get_settings().data_dir / DEFAULT_DIR_NAME


def _check_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    clash = sorted(RESERVED_KEYS & set(metadata))
    if clash:
        raise ValueError(f"metadata may not use the reserved key(s) {', '.join(clash)}")
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"metadata keys must be non-empty strings, got {key!r}")
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise ValueError(
                f"metadata {key}={value!r} is not JSON (use str, int, float, bool, None, "
                "lists and dicts of them)"
            ) from None
    return dict(metadata)


def _check_top_k(top_k: object) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"top_k must be a positive int, got {top_k!r}")
    return top_k


def _describe(fp: Fingerprint) -> str:
    return f"{fp.model} ({fp.dim} dimensions, {fp.distance})"


# -- clients: one per folder and process ---------------------------------------------------
_open_folders: dict[str, tuple[QdrantClient, int]] = {}


def _open_folder(folder: Path) -> QdrantClient:
    from qdrant_client import QdrantClient

    key = os.path.realpath(folder)
    if key in _open_folders:
        client, users = _open_folders[key]
        _open_folders[key] = (client, users + 1)
        return client
    try:
        client = QdrantClient(path=str(folder))
    except RuntimeError as exc:
        if "already accessed" not in str(exc):
            raise
        raise StoreLocked(
            f"the memory folder {folder} is open in another client (another kernel or "
            "process). Close it there with memory.close() or restart that kernel, then "
            "try again; for several processes at once use a Qdrant server (QDRANT_URL)."
        ) from None
    _open_folders[key] = (client, 1)
    return client


def _release_folder(key: str) -> None:
    client, users = _open_folders.get(key, (None, 0))
    if client is None:
        return
    if users > 1:
        _open_folders[key] = (client, users - 1)
    else:
        del _open_folders[key]
        client.close()


def _close_client(client: QdrantClient) -> None:
    client.close()


# -- the memory ----------------------------------------------------------------------------
class SemanticMemory:
    """The memories of one user in one Qdrant collection, recalled by meaning.

    - ``path``: a folder for the embedded Qdrant (default ``$GYA_DATA_DIR/qdrant``) or
      ``":memory:"``; ``url``/``api_key``: a Qdrant server instead (default: ``QDRANT_URL``
      and ``QDRANT_API_KEY`` when no path is given).
    - ``embedder``: default :func:`gya_memory.embeddings.get_embedder` (``GYA_EMBEDDER``).
    - ``user_id``: every read, count and deletion is limited to this user's points.
    - ``collection``: the Qdrant collection; ``<collection>__fallback`` is the degraded one.
    - ``fallback``: fall back to TF-IDF when the service fails (default
      ``GYA_EMBED_FALLBACK``); ``clock``: timestamps ``created_at``/``updated_at``.
    - ``reembed``: if the collection was built by another embedder, re-embed it with this
      one instead of raising :class:`EmbedderMismatch`.

    >>> mem = SemanticMemory(":memory:", user_id="user-001")     # doctest: +SKIP
    >>> mem.store("最近在戒咖啡，想少喝一点", subject="偏好")      # doctest: +SKIP
    >>> mem.retrieve("用户想戒掉什么？")[0].text                   # doctest: +SKIP
    '最近在戒咖啡，想少喝一点'
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        embedder: Embedder | None = None,
        user_id: str = DEFAULT_USER,
        collection: str = DEFAULT_COLLECTION,
        url: str | None = None,
        api_key: str | None = None,
        fallback: bool | None = None,
        clock: Clock = system_clock,
        reembed: bool = False,
    ) -> None:
        from .embeddings import EmbeddingUnavailable, get_embedder

        self.user_id = _check_text("user_id", user_id, MAX_ID_CHARS)
        if not isinstance(collection, str) or not _COLLECTION_RE.fullmatch(collection):
            raise ValueError(
                f"collection must be 1-100 letters, digits, '_' or '-', got {collection!r}"
            )
        if collection.endswith(FALLBACK_SUFFIX):
            raise ValueError(f"collection names ending in {FALLBACK_SUFFIX!r} are reserved")
        if path is not None and url is not None:
            raise ValueError("give either path= (embedded Qdrant) or url= (a server), not both")
        settings = get_settings()
        if path is None and url is None:
            url = settings.qdrant_url
            api_key = api_key if api_key is not None else settings.qdrant_api_key
        self.collection = collection
        self.fallback_collection = collection + FALLBACK_SUFFIX
        self.fallback = settings.embed_fallback if fallback is None else bool(fallback)
        self.clock = clock
        self.degraded_reason: str | None = None
        self._bm25: tuple[BM25, dict[str, Hit]] | None = None
        self._closed = False

        # Where the points live.
        self._folder_key: str | None = None
        if url is not None:
            from qdrant_client import QdrantClient

            self.location = "server"
            self._client = QdrantClient(url=url, api_key=api_key)
            self._finalizer = weakref.finalize(self, _close_client, self._client)
        elif str(path) == ":memory:":
            from qdrant_client import QdrantClient

            self.location = ":memory:"
            self._client = QdrantClient(":memory:")
            self._finalizer = weakref.finalize(self, _close_client, self._client)
        else:
            folder = Path(path if path is not None else default_path()).expanduser()
            self.location = folder.name
            self._client = _open_folder(folder)
            self._folder_key = os.path.realpath(folder)
            self._finalizer = weakref.finalize(self, _release_folder, self._folder_key)

        try:
            if embedder is None:
                embedder = get_embedder(settings=settings)
            self._primary: Embedder = embedder
            self._embedder: Embedder = embedder
            self._active = collection
            if embedder.degraded:  # e.g. get_embedder() already fell back to TF-IDF
                self.degraded_reason = "the embedder given is the TF-IDF fallback"
                self._switch_to_fallback(embedder)
            else:
                try:
                    self._ensure_collection(collection, embedder, reembed=reembed)
                except EmbeddingUnavailable as exc:
                    self._fall_back(exc)
        except BaseException:
            self.close()
            raise

    # -- state -----------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The embedder in use now (the TF-IDF fallback once degraded)."""
        return self._embedder

    @property
    def degraded(self) -> bool:
        """True once the memory runs on the TF-IDF fallback."""
        return self._active == self.fallback_collection

    @property
    def active_collection(self) -> str:
        """The collection reads and writes go to now."""
        return self._active

    @property
    def client(self) -> QdrantClient:
        if self._closed:
            raise RuntimeError(f"{self!r} is closed; open a new SemanticMemory")
        return self._client

    @property
    def is_local(self) -> bool:
        return self.location != "server"

    # -- collections -----------------------------------------------------------------------
    def _exists(self, name: str) -> bool:
        return self.client.collection_exists(name)

    def _stored_fingerprint(self, name: str) -> Fingerprint | None:
        from .embeddings import Fingerprint

        meta = self.client.get_collection(name).config.metadata or {}
        recorded = meta.get(_META_KEY, {}).get("fingerprint")
        return Fingerprint(**recorded) if recorded else None

    def _create(self, name: str, embedder: Embedder) -> None:
        from qdrant_client import models

        fp = embedder.fingerprint
        self.client.create_collection(
            name,
            vectors_config=models.VectorParams(size=fp.dim, distance=_distance(fp.distance)),
            metadata={_META_KEY: {"fingerprint": asdict(fp), "format": 1}},
        )
        if self._stored_fingerprint(name) != fp:
            self.client.delete_collection(name)
            raise RuntimeError(
                "this Qdrant server does not keep collection metadata, where the embedder's "
                "fingerprint is recorded; use a server that does (Qdrant 1.16 or newer)"
            )
        if not self.is_local:  # local mode has no payload indexes (and warns if asked)
            self.client.create_payload_index(
                name, "user_id",
                field_schema=models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD,
                                                       is_tenant=True),
            )

    def _ensure_collection(self, name: str, embedder: Embedder, *, reembed: bool = False) -> None:
        """Create ``name`` for ``embedder``, or check that it was built by the same model."""
        wanted = embedder.fingerprint
        if not self._exists(name):
            self._create(name, embedder)
            return
        stored = self._stored_fingerprint(name)
        if stored == wanted:
            return
        if stored is None and self.client.count(name, exact=True).count == 0:
            self.client.update_collection(
                name, metadata={_META_KEY: {"fingerprint": asdict(wanted), "format": 1}}
            )
            return
        if reembed:
            self._migrate(name, embedder)
            return
        if stored is None:
            from .embeddings import Fingerprint

            stored = Fingerprint(model="<no fingerprint recorded>", dim=-1, distance="?")
        raise EmbedderMismatch(name, stored, wanted)

    def _scroll(self, name: str, flt: models.Filter | None = None,
                with_vectors: bool = False) -> Iterator[models.Record]:
        offset = None
        while True:
            records, offset = self.client.scroll(
                name, scroll_filter=flt, limit=256, offset=offset,
                with_payload=True, with_vectors=with_vectors,
            )
            yield from records
            if offset is None:
                return

    def _upsert(self, name: str, ids: list[str], vectors: np.ndarray,
                payloads: list[dict[str, Any]]) -> None:
        from qdrant_client import models

        self.client.upsert(
            name, points=models.Batch(ids=ids, vectors=vectors.tolist(), payloads=payloads),
            wait=True,
        )

    def _migrate(self, name: str, embedder: Embedder, batch_size: int = BATCH_SIZE) -> int:
        """Re-embed every point of ``name`` (all users) with ``embedder``; returns how many.

        Everything is embedded before the old collection is touched, so a failing embedder
        leaves it as it was.
        """
        records = list(self._scroll(name)) if self._exists(name) else []
        ids = [str(r.id) for r in records]
        payloads = [dict(r.payload or {}) for r in records]
        texts = [p.get("text") for p in payloads]
        if any(not isinstance(t, str) for t in texts):
            raise ValueError(f"collection {name!r} has points without a 'text' payload; "
                             "they can't be re-embedded")
        batches = [
            _as_matrix(embedder.embed_documents(texts[i : i + batch_size]),
                       len(texts[i : i + batch_size]), embedder)
            for i in range(0, len(texts), batch_size)
        ]
        if self._exists(name):
            self.client.delete_collection(name)
        self._create(name, embedder)
        for n, vectors in enumerate(batches):
            i = n * batch_size
            self._upsert(name, ids[i : i + batch_size], vectors, payloads[i : i + batch_size])
        self._bm25 = None
        return len(records)

    def reembed(self, embedder: Embedder, *, batch_size: int = BATCH_SIZE) -> int:
        """Re-embed the whole collection (every user's memories) with ``embedder`` and use it
        from now on. Returns how many memories were migrated."""
        if self.degraded:
            raise ValueError("this memory is degraded; call recover() before reembed()")
        if embedder.degraded:
            raise ValueError("reembed() takes a working embedder, not the TF-IDF fallback")
        n = self._migrate(self.collection, embedder, batch_size)
        self._primary = self._embedder = embedder
        return n

    # -- degraded mode ---------------------------------------------------------------------
    def _fall_back(self, exc: Exception) -> None:
        """Switch to TF-IDF after ``exc``; re-raise it when the fallback is off."""
        from .embeddings import fallback_embedder

        if not self.fallback or self.degraded:
            raise exc
        fb = fallback_embedder()
        failure = str(exc).rstrip(".")
        warnings.warn(
            f"⚠️ semantic memory is degraded: {failure}. Falling back to TF-IDF (word overlap "
            "only, no paraphrases) for reads and writes, in the separate collection "
            f"{self.fallback_collection!r}; every hit carries degraded=True.",
            DegradedWarning,
            stacklevel=4,
        )
        self.degraded_reason = str(exc)
        self._switch_to_fallback(fb)

    def _switch_to_fallback(self, fb: Embedder) -> None:
        name = self.fallback_collection
        # The fallback collection is derived data: re-embed it if the TF-IDF model changed.
        self._ensure_collection(name, fb, reembed=True)
        if self._exists(self.collection):
            # Copy this user's memories from the primary collection (payloads need no
            # embedding service), except the writes made there during an earlier outage.
            outage = {str(r.id) for r in self._scroll(name, self._filter(degraded_write=True))}
            records = [r for r in self._scroll(self.collection, self._filter())
                       if str(r.id) not in outage]
            for i in range(0, len(records), BATCH_SIZE):
                batch = records[i : i + BATCH_SIZE]
                texts = [str((r.payload or {})["text"]) for r in batch]
                vectors = _as_matrix(fb.embed_documents(texts), len(texts), fb)
                self._upsert(name, [str(r.id) for r in batch], vectors,
                             [dict(r.payload or {}) for r in batch])
        self._embedder = fb
        self._active = name
        self._bm25 = None

    def recover(self, embedder: Embedder | None = None) -> int:
        """Leave degraded mode: embed the memories written during the outage with the
        primary embedder (or ``embedder``), store them in the primary collection and use it
        again. Returns how many were moved; raises EmbeddingUnavailable if still down."""
        if not self.degraded:
            return 0
        primary = embedder if embedder is not None else self._primary
        if primary.degraded:
            raise ValueError("this memory started on the fallback; give the working "
                             "embedder: recover(embedder=...)")
        self._ensure_collection(self.collection, primary)
        records = list(self._scroll(self.fallback_collection, self._filter(degraded_write=True)))
        for i in range(0, len(records), BATCH_SIZE):
            batch = records[i : i + BATCH_SIZE]
            payloads = [{k: v for k, v in (r.payload or {}).items() if k != "degraded_write"}
                        for r in batch]
            vectors = _as_matrix(primary.embed_documents([p["text"] for p in payloads]),
                                 len(batch), primary)
            ids = [str(r.id) for r in batch]
            self._upsert(self.collection, ids, vectors, payloads)
            self.client.delete_payload(self.fallback_collection, keys=["degraded_write"],
                                       points=ids)
        self._primary = self._embedder = primary
        self._active = self.collection
        self.degraded_reason = None
        self._bm25 = None
        return len(records)

    # -- embedding, with the fallback ------------------------------------------------------
    def _embed_documents(self, texts: list[str]) -> np.ndarray:
        from .embeddings import EmbeddingUnavailable

        try:
            vectors = self._embedder.embed_documents(texts)
        except EmbeddingUnavailable as exc:
            self._fall_back(exc)
            vectors = self._embedder.embed_documents(texts)
        return _as_matrix(vectors, len(texts), self._embedder)

    def _embed_query(self, text: str) -> np.ndarray:
        from .embeddings import EmbeddingUnavailable

        try:
            vector = self._embedder.embed_query(text)
        except EmbeddingUnavailable as exc:
            self._fall_back(exc)
            vector = self._embedder.embed_query(text)
        return _as_matrix(vector.reshape(1, -1), 1, self._embedder)[0]

    # -- writing ---------------------------------------------------------------------------
    def store(self, text: str, /, **metadata: Any) -> str:
        """Store one memory (with optional JSON metadata, e.g. ``subject="偏好"``); returns
        its id. Storing the same text again updates that memory instead of adding a copy."""
        return self.store_many([(text, metadata)])[0]

    def store_many(
        self, items: Iterable[str | tuple[str, Mapping[str, Any]]], *,
        batch_size: int = BATCH_SIZE,
    ) -> list[str]:
        """Store many memories, each a text or a ``(text, metadata)`` pair; returns the ids.

        Every item is checked before anything is written. Embedding and writing go in
        batches of ``batch_size``. A text given twice is stored once (the last one wins).
        """
        if isinstance(items, str):
            raise ValueError("store_many() takes a list of texts; for one text use store()")
        checked: dict[str, tuple[str, dict[str, Any]]] = {}
        for i, item in enumerate(items):
            try:
                if isinstance(item, str):
                    text, metadata = item, {}
                elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Mapping):
                    text, metadata = item
                else:
                    raise ValueError(f"expected a text or (text, metadata), got {item!r}")
                text = _check_text("text", text, MAX_TEXT_CHARS)
                checked.pop(pid := point_id(self.user_id, text), None)
                checked[pid] = (text, _check_metadata(metadata))
            except ValueError as exc:
                raise ValueError(f"item {i}: {exc}") from None
        rows = list(checked.items())
        for i in range(0, len(rows), batch_size):
            batch = rows[i : i + batch_size]
            vectors = self._embed_documents([text for _, (text, _) in batch])
            name = self._active  # after embedding: a failure there may have switched it
            ids = [pid for pid, _ in batch]
            known = {str(r.id): (r.payload or {}).get("created_at")
                     for r in self.client.retrieve(name, ids=ids, with_payload=["created_at"])}
            payloads = []
            for pid, (text, metadata) in batch:
                now = self._now()
                payload = {"text": text, "user_id": self.user_id, **metadata,
                           "created_at": known.get(pid) or now, "updated_at": now}
                if self.degraded:
                    payload["degraded_write"] = True
                payloads.append(payload)
            self._upsert(name, ids, vectors, payloads)
        self._bm25 = None
        return list(checked)

    def _now(self) -> str:
        now = self.clock()
        if now.tzinfo is None or now.utcoffset() is None:
            raise ValueError("the clock returned a naive datetime; give it a time zone")
        return now.isoformat()

    # -- recall ----------------------------------------------------------------------------
    def _filter(self, *, ids: list[str] | None = None, **equal: Any) -> models.Filter:
        """This user's points (every query goes through here), optionally only ``ids`` and
        those whose payload has the ``equal`` values."""
        from qdrant_client import models

        conditions: list[Any] = [
            models.FieldCondition(key=key, match=models.MatchValue(value=value))
            for key, value in {"user_id": self.user_id, **equal}.items()
        ]
        if ids is not None:
            conditions.append(models.HasIdCondition(has_id=ids))
        return models.Filter(must=conditions)

    def _hit(self, point_id_: object, score: float, payload: Mapping[str, Any] | None,
             source: str) -> Hit:
        payload = dict(payload or {})
        return Hit(id=str(point_id_), score=float(score), text=str(payload.get("text", "")),
                   payload=payload, degraded=self.degraded, source=source)

    def candidates(self, query: str, top_k: int = 10) -> list[Hit]:
        """The ``top_k`` nearest memories by cosine similarity, with no threshold (for tables
        and plots of the scores)."""
        query = _check_text("query", query, MAX_TEXT_CHARS)
        top_k = _check_top_k(top_k)
        vector = self._embed_query(query)
        name = self._active
        if not self._exists(name):
            return []
        response = self.client.query_points(
            name, query=vector.tolist(), limit=top_k, query_filter=self._filter(),
            with_payload=True,
        )
        return [self._hit(p.id, p.score, p.payload, "dense") for p in response.points]

    def lexical(self, query: str, top_k: int = 10) -> list[Hit]:
        """Memories sharing words (Chinese: characters and bigrams) with ``query``, by BM25."""
        query = _check_text("query", query, MAX_TEXT_CHARS)
        top_k = _check_top_k(top_k)
        index, by_id = self._lexical_index()
        return [replace(by_id[h.id], score=h.score) for h in index.search(query, top_k)]

    def _lexical_index(self) -> tuple[BM25, dict[str, Hit]]:
        # Built from this user's stored texts; kept until the next write. A server may have
        # other writers, so there it is rebuilt for every query.
        if self._bm25 is not None and self.is_local:
            return self._bm25
        records = list(self._scroll(self._active, self._filter())) if self._exists(
            self._active) else []
        records.sort(key=lambda r: (str((r.payload or {}).get("created_at", "")), str(r.id)))
        by_id = {str(r.id): self._hit(r.id, 0.0, r.payload, "lexical") for r in records}
        self._bm25 = (BM25((i, h.text) for i, h in by_id.items()), by_id)
        return self._bm25

    def retrieve(self, query: str, top_k: int = 3, min_score: float | None = None, *,
                 mode: Mode = "dense") -> list[Hit]:
        """The memories that best answer ``query``, best first, at most ``top_k``.

        - ``dense``: cosine similarity of embeddings; hits below ``min_score`` (default: the
          embedder's calibrated ``threshold(query)``) are dropped.
        - ``lexical``: BM25 over the user's texts; only memories sharing a token come back.
        - ``hybrid``: reciprocal rank fusion of the dense ranking (above ``min_score``) and
          the BM25 ranking; ``score`` is the fused score.
        """
        top_k = _check_top_k(top_k)
        if mode == "lexical":
            return self.lexical(query, top_k)
        if mode not in ("dense", "hybrid"):
            raise ValueError(f"mode must be 'dense', 'lexical' or 'hybrid', got {mode!r}")
        pool = top_k if mode == "dense" else max(4 * top_k, 20)
        candidates = self.candidates(query, pool)
        floor = self._embedder.threshold(query) if min_score is None else float(min_score)
        dense = [h for h in candidates if h.score >= floor]
        if mode == "dense":
            return dense
        lexical = self.lexical(query, pool)
        found = {h.id: h for h in lexical} | {h.id: h for h in dense}
        fused = rrf([[h.id for h in dense], [h.id for h in lexical]], k=RRF_K)
        return [replace(found[i], score=s, source="hybrid") for i, s in fused[:top_k]]

    def count(self) -> int:
        """How many memories this user has (in the collection in use)."""
        if not self._exists(self._active):
            return 0
        return self.client.count(self._active, count_filter=self._filter(), exact=True).count

    def __len__(self) -> int:
        return self.count()

    def all(self) -> list[Memory]:
        """Every memory of this user, oldest first."""
        if not self._exists(self._active):
            return []
        records = list(self._scroll(self._active, self._filter()))
        records.sort(key=lambda r: (str((r.payload or {}).get("created_at", "")), str(r.id)))
        return [Memory(str(r.id), str((r.payload or {}).get("text", "")), dict(r.payload or {}))
                for r in records]

    # -- forgetting ------------------------------------------------------------------------
    def forget(self, id: str | None = None, *, text: str | None = None,
               everything: bool = False) -> int:
        """Delete one memory (by ``id`` or by its ``text``) or all of this user's
        (``everything=True``); returns how many were deleted. Other users' memories are
        never touched. The deletion applies to the fallback collection too."""
        from qdrant_client import models

        if sum([id is not None, text is not None, everything is True]) != 1:
            raise ValueError("forget() takes exactly one of id=, text= or everything=True")
        if id is not None:
            try:
                flt = self._filter(ids=[str(uuid.UUID(str(id)))])
            except ValueError:
                raise ValueError(f"{id!r} is not a memory id (a UUID string)") from None
        elif text is not None:
            flt = self._filter(ids=[point_id(self.user_id, text)])
        else:
            flt = self._filter()
        counts: dict[str, int] = {}
        for name in (self.collection, self.fallback_collection):
            if self._exists(name):
                counts[name] = self.client.count(name, count_filter=flt, exact=True).count
                self.client.delete(name, points_selector=models.FilterSelector(filter=flt),
                                   wait=True)
        self._bm25 = None
        if not everything and not any(counts.values()):
            what = f"id {id!r}" if id is not None else f"text {text!r}"
            raise ValueError(f"no memory with {what} for user {self.user_id!r}")
        return counts.get(self._active, 0) or max(counts.values(), default=0)

    # -- closing ---------------------------------------------------------------------------
    def close(self) -> None:
        """Release the store (for a folder: unlock it once no memory of this process uses it)."""
        if not self._closed:
            self._closed = True
            self._bm25 = None
            self._finalizer()

    def __enter__(self) -> SemanticMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        name = getattr(getattr(self, "_embedder", None), "name", "?")
        state = ", degraded" if getattr(self, "_active", "").endswith(FALLBACK_SUFFIX) else ""
        closed = ", closed" if getattr(self, "_closed", False) else ""
        return (f"SemanticMemory({getattr(self, 'location', '?')!r}, "
                f"user_id={getattr(self, 'user_id', '?')!r}, "
                f"collection={self.collection!r}, embedder={name!r}{state}{closed})")


def _distance(name: str) -> models.Distance:
    from qdrant_client import models

    distances = {"cosine": models.Distance.COSINE, "dot": models.Distance.DOT,
                 "euclid": models.Distance.EUCLID, "manhattan": models.Distance.MANHATTAN}
    try:
        return distances[name.lower()]
    except KeyError:
        raise ValueError(f"unknown distance {name!r}; one of {', '.join(distances)}") from None


def _as_matrix(vectors: Any, n: int, embedder: Embedder) -> np.ndarray:
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.shape != (n, embedder.dim) or not np.isfinite(matrix).all():
        raise ValueError(
            f"embedder {embedder.name!r} returned an array of shape {matrix.shape} (or with "
            f"NaN/inf); expected ({n}, {embedder.dim}) finite numbers"
        )
    return matrix
