"""Semantic memory (语义记忆): memories found by meaning, in Qdrant.

Each memory is one short text, stored as a point: its embedding is the vector, and the
text, the ``user_id`` and any metadata are the payload. Recall embeds the question and asks
Qdrant for the nearest points of that user (``query_points``), so "我最近饮食上有什么要注意
的吗？" finds "最近在戒咖啡，想少喝一点" although no word is shared. ``mode="lexical"`` ranks
by BM25 instead (rare names, order ids, dates), and ``mode="hybrid"`` fuses both rankings
inside the engine (Qdrant's prefetch + fusion query). Each point carries a dense vector and a
sparse lexical vector (:mod:`gya_memory.semantic.sparse`: the project's tokenizer, BM25 weights, IDF
applied by Qdrant over this user's memories, plus month tokens so "what did I tell you in
May?" finds May's memories).

Where the points live, point ids and the degraded mode: :mod:`gya_memory.semantic`.
"""

from __future__ import annotations

import os
import uuid
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from gya_memory.base.checks import DEFAULT_USER
from gya_memory.base.clock import Clock, aware_now, system_clock
from gya_memory.base.config import get_settings
from gya_memory.semantic.lifecycle import BATCH_SIZE, ModelLifecycle
from gya_memory.semantic.sparse import query_vector
from gya_memory.base.payload import CREATED_AT, DEGRADED_WRITE, TEXT, UPDATED_AT, USER_ID
from gya_memory.semantic.stores.client import ClientStore
from gya_memory.semantic.stores.common import Found, FusionSpec, VectorStore, Where
from gya_memory.semantic.stores.folders import open_folder, release_folder
from gya_memory.semantic.values import (
    Hit, Memory, COLLECTION_RE, check_batch_size, check_folder, check_items, check_memory_text,
    check_min_score, check_top_k, check_memory_user_id, close_store, default_path, point_id,
)

if TYPE_CHECKING:
    from gya_memory.semantic.embeddings.base import Embedder


DEFAULT_COLLECTION = "memories"
FALLBACK_SUFFIX = "__fallback"
#: The fusion of hybrid search, chosen on the labelled set (benchmarks/bench_semantic.py,
#: section 1): chosen on the even-numbered answerable queries, reported on the odd ones. All
#: 26 fusions tried tie there at retrieve()'s operating point, so the textbook RRF stays.
HYBRID_FUSION = FusionSpec(method="rrf", k=60, weights=(1.0, 1.0), pool=20)

Mode = Literal["dense", "lexical", "hybrid"]


# -- the memory ----------------------------------------------------------------------------
class SemanticMemory(ModelLifecycle):
    """The memories of one user in one Qdrant collection, recalled by meaning.

    - ``path``: a folder for Qdrant Edge (default ``$GYA_DATA_DIR/qdrant``) or
      ``":memory:"``; ``url``/``api_key``: a Qdrant server instead (default: ``QDRANT_URL``
      and ``QDRANT_API_KEY`` when no path is given); ``store``: any
      :class:`gya_memory.semantic.stores.common.VectorStore` (the caller closes it).
    - ``embedder``: default :func:`gya_memory.semantic.embeddings.get_embedder` (``GYA_EMBEDDER``).
    - ``user_id``: every read, count and deletion is limited to this user's points.
    - ``collection``: the Qdrant collection; ``<collection>__fallback`` is the degraded one.
    - ``fallback``: fall back to TF-IDF when the service fails (default
      ``GYA_EMBED_FALLBACK``); ``clock``: timestamps ``created_at``/``updated_at``.
    - ``reembed``: if the collection was built by another embedder, re-embed it with this
      one instead of raising :class:`EmbedderMismatch`.
    - ``fusion``: how ``mode="hybrid"`` fuses (default :data:`HYBRID_FUSION`).

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
        store: VectorStore | None = None,
        fusion: FusionSpec = HYBRID_FUSION,
    ) -> None:
        from gya_memory.semantic.embeddings.base import EmbeddingUnavailable
        from gya_memory.semantic.embeddings import get_embedder

        self._closed = True  # until the store is open
        self.user_id = check_memory_user_id(user_id)
        if not isinstance(collection, str) or not COLLECTION_RE.fullmatch(collection):
            raise ValueError(
                f"collection must be 1-100 letters, digits, '_' or '-', got {collection!r}"
            )
        if collection.endswith(FALLBACK_SUFFIX) or "__v" in collection:
            raise ValueError(f"collection names ending in {FALLBACK_SUFFIX!r} or containing "
                             "'__v' are reserved")
        if sum(x is not None for x in (path, url, store)) > 1:
            raise ValueError("give either path= (embedded Qdrant) or url= (a server) or "
                             "store=, not two")
        if not isinstance(fusion, FusionSpec):
            raise ValueError(f"fusion must be a FusionSpec, got {fusion!r}")
        settings = get_settings()
        if path is None and url is None and store is None:
            url = settings.qdrant_url
            api_key = api_key if api_key is not None else settings.qdrant_api_key
        self.collection = collection
        self.fallback_collection = collection + FALLBACK_SUFFIX
        self.fallback = settings.embed_fallback if fallback is None else bool(fallback)
        self.clock = clock
        self.fusion = fusion
        self.degraded_reason: str | None = None

        # Where the points live.
        if store is not None:
            self.location = store.kind
            self._store: VectorStore = store
            self._finalizer = weakref.finalize(self, lambda: None)
        elif url is not None:
            self.location = "server"
            self._store = ClientStore(url=url, api_key=api_key)
            self._finalizer = weakref.finalize(self, close_store, self._store)
        elif str(path) == ":memory:":
            self.location = ":memory:"
            self._store = ClientStore(location=":memory:")
            self._finalizer = weakref.finalize(self, close_store, self._store)
        else:
            folder = check_folder(path if path is not None else default_path())
            self.location = folder.name
            self._store, key = open_folder(folder)
            self._finalizer = weakref.finalize(self, release_folder, key)
        self._closed = False

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
    def backend(self) -> VectorStore:
        """The vector store (shared by every memory of this process on the same folder)."""
        if self._closed:
            raise RuntimeError(f"{self!r} is closed; open a new SemanticMemory")
        return self._store

    def _where(self, *, ids: list[str] | None = None, **equal: Any) -> Where:
        """This user's points (every query goes through here), optionally only ``ids`` and
        those whose payload has the ``equal`` values."""
        return Where(user_id=self.user_id, ids=tuple(ids) if ids is not None else None,
                     equal=tuple(equal.items()))

    # -- writing ---------------------------------------------------------------------------
    def store(self, text: str, /, *, allow_instructions: bool = False, **metadata: Any) -> str:
        """Store one memory (with optional JSON metadata, e.g. ``subject="偏好"``); returns
        its id. Storing the same text again updates that memory instead of adding a copy.

        A text that reads like an instruction to the model is refused
        (:class:`~gya_memory.hermes.injection.InstructionRefused`, nothing written);
        ``allow_instructions=True`` stores it anyway (see :meth:`store_many`)."""
        return self.store_many([(text, metadata)], allow_instructions=allow_instructions)[0]

    def store_many(
        self, items: Iterable[str | tuple[str, Mapping[str, Any]]], *,
        batch_size: int = BATCH_SIZE, allow_instructions: bool = False,
    ) -> list[str]:
        """Store many memories, each a text or a ``(text, metadata)`` pair; returns the ids.

        Every item is checked before anything is written (an error names it: ``texts[64]``).
        That includes the injection scan (:func:`gya_memory.hermes.injection.check_for_store`): a
        text or string metadata value that reads like an instruction to the model ("ignore
        your earlier instructions", "note to the assistant: ...") raises
        :class:`~gya_memory.hermes.injection.InstructionRefused`. ``allow_instructions=True`` stores
        it as it is, for a record the caller vouches for (a quote of an attack the user read
        about); the context assembly still screens every memory before a prompt.
        Embedding and writing go in batches of ``batch_size``; the writes are flushed to
        disk before this returns. A text given twice is stored once (the last one wins).
        """
        batch_size = check_batch_size(batch_size)
        checked = check_items(items, self.user_id, allow_instructions=allow_instructions)
        rows = list(checked.items())
        for i in range(0, len(rows), batch_size):
            batch = rows[i : i + batch_size]
            vectors = self._embed_documents([text for _, (text, _) in batch])
            name = self._active  # after embedding: a failure there may have switched it
            ids = [pid for pid, _ in batch]
            known = {pid: p.get(CREATED_AT)
                     for pid, p in self.backend.payloads(name, ids, [CREATED_AT]).items()}
            payloads = []
            for pid, (text, metadata) in batch:
                now = self._now()
                payload = {TEXT: text, USER_ID: self.user_id, **metadata,
                           CREATED_AT: known.get(pid) or now, UPDATED_AT: now}
                if self.degraded:
                    payload[DEGRADED_WRITE] = True
                payloads.append(payload)
            self.backend.upsert(name, self._points(self._embedder, vectors, ids, payloads))
        if rows:
            self.backend.flush()
        return list(checked)

    def _now(self) -> str:
        return aware_now(self.clock).isoformat()

    # -- recall ----------------------------------------------------------------------------
    def _hit(self, found: Found, source: str) -> Hit:
        return Hit(id=found.id, score=found.score, text=str(found.payload.get(TEXT, "")),
                   payload=found.payload, degraded=self.degraded, source=source)

    def candidates(self, query: str, top_k: int = 10) -> list[Hit]:
        """The ``top_k`` nearest memories by cosine similarity, with no threshold (for tables
        and plots of the scores)."""
        query = check_memory_text("query", query)
        top_k = check_top_k(top_k)
        return self._nearest(self._embed_query(query), top_k)

    def similar(self, text: str, top_k: int = 10) -> list[Hit]:
        """The ``top_k`` memories nearest to ``text`` read as a passage, like a stored memory
        (e5's ``passage:`` side), not as a question: for a text that reads like an answer,
        e.g. a draft answer to an advice question (``gya_memory.lab.agent_levers.LabAgent``)."""
        text = check_memory_text("text", text)
        top_k = check_top_k(top_k)
        return self._nearest(self._embed_documents([text])[0], top_k)

    def _nearest(self, vector: Any, top_k: int) -> list[Hit]:
        """The ``top_k`` memories nearest to an embedded ``vector`` (dense search)."""
        name = self._active
        if not self._exists(name):
            return []
        return [self._hit(f, "dense")
                for f in self.backend.dense(name, vector.tolist(), top_k, self._where())]

    def lexical(self, query: str, top_k: int = 10) -> list[Hit]:
        """Memories sharing words (Chinese: characters and bigrams) or a month with
        ``query``, by BM25 (Qdrant's sparse index, IDF over this user's memories)."""
        query = check_memory_text("query", query)
        top_k = check_top_k(top_k)
        name = self._active
        if not self._exists(name):
            return []
        return [self._hit(f, "lexical")
                for f in self.backend.lexical(name, query_vector(query), top_k, self._where())]

    def retrieve(self, query: str, top_k: int = 3, min_score: float | None = None, *,
                 mode: Mode = "dense", judge: Any = None) -> list[Hit]:
        """The memories that pass the retrieval gate for ``query``, best first, at most
        ``top_k`` (:mod:`gya_memory.answer.gate`, the same gate :class:`MemoryAgent` uses).

        - ``dense``: cosine similarity of embeddings; hits below ``min_score`` (default: the
          gate's recall-first floor for the query's language, :func:`gate.floor_for`) are
          dropped.
        - ``lexical``: BM25 over the user's texts; only memories sharing a token come back.
        - ``hybrid``: the dense ranking (above ``min_score``) and the BM25 ranking fused by
          Qdrant in one query (:data:`HYBRID_FUSION`); ``score`` is the fused score.

        ``judge``: a chat model that reports token probabilities (``LocalLLM``); each hit is
        then also judged for relevance, and only those it says *yes* to come back. Without
        one, the floor alone decides: it cuts the clearly unrelated, and look-alikes pass.
        """
        from gya_memory.answer.gate import Gate, floor_for, passed, screen

        top_k = check_top_k(top_k)
        min_score = check_min_score(min_score)
        if mode == "lexical":
            return self.lexical(query, top_k)
        if mode not in ("dense", "hybrid"):
            raise ValueError(f"mode must be 'dense', 'lexical' or 'hybrid', got {mode!r}")
        query = check_memory_text("query", query)
        floor = floor_for(self._embedder, query, min_score=min_score)
        if mode == "dense":
            found = self.candidates(query, top_k)
        else:
            vector = self._embed_query(query)
            name = self._active
            if not self._exists(name):
                return []
            fusion = replace(self.fusion, pool=max(self.fusion.pool, top_k))
            found = [self._hit(f, "hybrid") for f in self.backend.hybrid(
                name, vector.tolist(), query_vector(query), top_k, self._where(), fusion, floor)]
            # fused scores are not cosines; the floor was applied to the dense side inside
            floor = floor_for(self._embedder, query, fused=True)
        decisions = screen(query, found, gate=Gate(pool=top_k), floor=floor, judge=judge)
        return passed(decisions)

    def count(self) -> int:
        """How many memories this user has (in the collection in use)."""
        if not self._exists(self._active):
            return 0
        return self.backend.count(self._active, self._where())

    def __len__(self) -> int:
        return self.count()

    def all(self) -> list[Memory]:
        """Every memory of this user, oldest first."""
        if not self._exists(self._active):
            return []
        records = list(self.backend.scroll(self._active, self._where()))
        records.sort(key=lambda r: (str(r.payload.get(CREATED_AT, "")), r.id))
        return [Memory(r.id, str(r.payload.get(TEXT, "")), r.payload) for r in records]

    # -- forgetting ------------------------------------------------------------------------
    def forget(self, id: str | None = None, *, text: str | None = None,
               everything: bool = False) -> int:
        """Delete one memory (by ``id`` or by its ``text``) or all of this user's
        (``everything=True``, which also rewrites the collections so no byte of the texts
        stays in the files); returns how many were deleted. Other users' memories are
        never touched. The deletion applies to the fallback collection too."""
        if sum([id is not None, text is not None, everything is True]) != 1:
            raise ValueError("forget() takes exactly one of id=, text= or everything=True")
        if id is not None:
            try:
                where = self._where(ids=[str(uuid.UUID(str(id)))])
            except ValueError:
                raise ValueError(f"{id!r} is not a memory id (a UUID string)") from None
        elif text is not None:
            where = self._where(ids=[point_id(self.user_id, text)])
        else:
            where = self._where()
        counts: dict[str, int] = {}
        for name in (self.collection, self.fallback_collection):
            if self._exists(name):
                counts[name] = self.backend.delete(name, where)
                if everything and counts[name]:
                    self.backend.compact(name)  # no byte left behind, as in erase_user()
        self.backend.flush()
        if not everything and not any(counts.values()):
            what = f"id {id!r}" if id is not None else f"text {text!r}"
            raise ValueError(f"no memory with {what} for user {self.user_id!r}")
        return counts.get(self._active, 0) or max(counts.values(), default=0)

    def erase_user(self) -> int:
        """Delete every memory of this user from every collection of the store (primary,
        fallback, unfinished migrations) and rewrite those collections, so that no byte of
        the deleted texts stays in the store's files (Edge: a fresh shard without them, the
        old shard and its write-ahead log removed). Returns how many memories (distinct
        point ids) were removed. A server is asked to delete them; it frees the space by
        itself."""
        where = self._where()
        removed: set[str] = set()
        for name in self.backend.names():
            ids = {r.id for r in self.backend.scroll(name, where)}
            if ids:
                self.backend.delete(name, where)
                removed |= ids
                self.backend.compact(name)
        self.backend.flush()
        return len(removed)

    def check_erasable(self) -> None:
        """Raise unless :meth:`erase_user` can run now (the store is open)."""
        if self._closed:
            raise RuntimeError(f"{self!r} is closed; open it again to forget {self.user_id!r}. "
                               "Nothing was deleted.")

    # -- closing ---------------------------------------------------------------------------
    def close(self) -> None:
        """Release the store (for a folder: unlock it once no memory of this process uses it)."""
        if not self._closed:
            self._closed = True
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
                f"collection={getattr(self, 'collection', '?')!r}, embedder={name!r}"
                f"{state}{closed})")
