"""The embedding model behind a semantic memory: which model built a collection, re-embedding
with another one, and the degraded mode (⚠️) when the embedding service is down.

A collection holds vectors of one embedding model only; its fingerprint (model, dim,
distance) is kept in the collection's metadata. :meth:`reembed` builds the new collection
under a temporary name and switches to it atomically, so a kill at any point leaves the old
collection or the new one complete. In degraded mode reads and writes use TF-IDF in the
separate ``<collection>__fallback`` collection until :meth:`recover`.

:class:`ModelLifecycle` is a part of :class:`gya_memory.semantic.memory.SemanticMemory` (a mixin):
it uses the memory's store, user filter and collection names, and is not used on its own.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from gya_memory.base.payload import CREATED_AT, DEGRADED_WRITE, TEXT
from gya_memory.semantic.values import DegradedWarning, EmbedderMismatch, as_matrix, check_batch_size
from gya_memory.semantic.sparse import document_vector
from gya_memory.semantic.stores.common import CollectionSpec, PointData, VectorStore, Where

if TYPE_CHECKING:
    import numpy as np

    from gya_memory.semantic.embeddings.base import Embedder, Fingerprint

BATCH_SIZE = 64
_META_KEY = "gya_memory"


class ModelLifecycle:
    """Collections per embedding model, ``reembed()``, the fallback and ``recover()``."""

    # Set by SemanticMemory.__init__ (declared here for readers and type checkers).
    collection: str
    fallback_collection: str
    fallback: bool
    degraded_reason: str | None
    _primary: Embedder
    _embedder: Embedder
    _active: str

    @property
    def backend(self) -> VectorStore:  # provided by SemanticMemory
        raise NotImplementedError

    @property
    def degraded(self) -> bool:  # provided by SemanticMemory
        raise NotImplementedError

    def _where(self, *, ids: list[str] | None = None, **equal: Any) -> Where:
        raise NotImplementedError

    # -- collections -----------------------------------------------------------------------
    def _exists(self, name: str) -> bool:
        return self.backend.exists(name)

    def _stored_fingerprint(self, name: str) -> Fingerprint | None:
        from gya_memory.semantic.embeddings.base import Fingerprint

        meta = self.backend.spec(name).metadata
        recorded = meta.get(_META_KEY, {}).get("fingerprint")
        return Fingerprint(**recorded) if recorded else None

    @staticmethod
    def _spec(embedder: Embedder) -> CollectionSpec:
        fp = embedder.fingerprint
        return CollectionSpec(fp.dim, fp.distance.lower(),
                              {_META_KEY: {"fingerprint": asdict(fp), "format": 2}})

    def _ensure_collection(self, name: str, embedder: Embedder, *, reembed: bool = False) -> None:
        """Create ``name`` for ``embedder``, or check that it was built by the same model."""
        wanted = embedder.fingerprint
        if not self._exists(name):
            self.backend.create(name, self._spec(embedder))
            return
        stored = self._stored_fingerprint(name)
        if stored == wanted:
            return
        if reembed:
            self._migrate(name, embedder)
            return
        if stored is None:
            from gya_memory.semantic.embeddings.base import Fingerprint

            stored = Fingerprint(model="<no fingerprint recorded>", dim=-1, distance="?")
        raise EmbedderMismatch(name, stored, wanted)

    def _points(self, embedder: Embedder, vectors: np.ndarray, ids: list[str],
                payloads: list[dict[str, Any]]) -> list[PointData]:
        return [PointData(pid, vec, document_vector(str(p[TEXT]), p.get(CREATED_AT)), p)
                for pid, vec, p in zip(ids, vectors, payloads)]

    def _migrate(self, name: str, embedder: Embedder, batch_size: int = BATCH_SIZE) -> int:
        """Re-embed every point of ``name`` (all users) with ``embedder``; returns how many.

        The new collection is built under a temporary name while the old one stays as it
        was; only once the new one holds every point does ``name`` switch to it (atomically)
        and the old one go. A failure or a kill at any point leaves the old one in use.
        """
        records = list(self.backend.scroll(name)) if self._exists(name) else []
        payloads = [r.payload for r in records]
        if any(not isinstance(p.get(TEXT), str) for p in payloads):
            raise ValueError(f"collection {name!r} has points without a 'text' payload; "
                             "they can't be re-embedded")
        temp = self.backend.build(name, self._spec(embedder))
        try:
            for i in range(0, len(records), batch_size):
                batch = payloads[i : i + batch_size]
                texts = [p[TEXT] for p in batch]
                vectors = as_matrix(embedder.embed_documents(texts), len(texts), embedder)
                self.backend.upsert(temp, self._points(
                    embedder, vectors, [r.id for r in records[i : i + batch_size]], batch))
            self.backend.switch(name, temp, expected=len(records))
        except BaseException:
            if self.backend.exists(temp):
                self.backend.drop(temp)
            raise
        return len(records)

    def reembed(self, embedder: Embedder, *, batch_size: int = BATCH_SIZE) -> int:
        """Re-embed the whole collection (every user's memories) with ``embedder`` and use it
        from now on. Returns how many memories were migrated."""
        batch_size = check_batch_size(batch_size)
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
        from gya_memory.semantic.embeddings.tfidf import fallback_embedder

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
        # The fallback collection is derived data: re-embed it if the TF-IDF model changed.
        # Copying is an upsert of the same ids, so a copy cut short is completed next time.
        name = self.fallback_collection
        self._ensure_collection(name, fb, reembed=True)
        if self._exists(self.collection):
            # Copy this user's memories from the primary collection (payloads need no
            # embedding service), except the writes made there during an earlier outage.
            outage = {r.id for r in self.backend.scroll(name, self._where(degraded_write=True))}
            records = [r for r in self.backend.scroll(self.collection, self._where())
                       if r.id not in outage]
            for i in range(0, len(records), BATCH_SIZE):
                batch = records[i : i + BATCH_SIZE]
                texts = [str(r.payload[TEXT]) for r in batch]
                vectors = as_matrix(fb.embed_documents(texts), len(texts), fb)
                self.backend.upsert(name, self._points(fb, vectors, [r.id for r in batch],
                                                       [r.payload for r in batch]))
            self.backend.flush()
        self._embedder = fb
        self._active = name

    def recover(self, embedder: Embedder | None = None) -> int:
        """Leave degraded mode: embed the memories written during the outage with the
        primary embedder (or ``embedder``), store them in the primary collection and use it
        again. Returns how many were moved; raises EmbeddingUnavailable if still down.

        Each batch is written to the primary collection before its ``degraded_write`` marks
        are cleared, so a recovery cut short is finished by the next ``recover()``."""
        if not self.degraded:
            return 0
        primary = embedder if embedder is not None else self._primary
        if primary.degraded:
            raise ValueError("this memory started on the fallback; give the working "
                             "embedder: recover(embedder=...)")
        self._ensure_collection(self.collection, primary)
        records = list(self.backend.scroll(self.fallback_collection,
                                           self._where(degraded_write=True)))
        for i in range(0, len(records), BATCH_SIZE):
            batch = records[i : i + BATCH_SIZE]
            payloads = [{k: v for k, v in r.payload.items() if k != DEGRADED_WRITE}
                        for r in batch]
            vectors = as_matrix(primary.embed_documents([p[TEXT] for p in payloads]),
                                 len(batch), primary)
            ids = [r.id for r in batch]
            self.backend.upsert(self.collection, self._points(primary, vectors, ids, payloads))
            self.backend.flush()
            self.backend.delete_payload(self.fallback_collection, ids, [DEGRADED_WRITE])
        self.backend.flush()
        self._primary = self._embedder = primary
        self._active = self.collection
        self.degraded_reason = None
        return len(records)

    # -- embedding, with the fallback ------------------------------------------------------
    def _embed_documents(self, texts: list[str]) -> np.ndarray:
        from gya_memory.semantic.embeddings.base import EmbeddingUnavailable

        try:
            vectors = self._embedder.embed_documents(texts)
        except EmbeddingUnavailable as exc:
            self._fall_back(exc)
            vectors = self._embedder.embed_documents(texts)
        return as_matrix(vectors, len(texts), self._embedder)

    def _embed_query(self, text: str) -> np.ndarray:
        from gya_memory.semantic.embeddings.base import EmbeddingUnavailable

        try:
            vector = self._embedder.embed_query(text)
        except EmbeddingUnavailable as exc:
            self._fall_back(exc)
            vector = self._embedder.embed_query(text)
        return as_matrix(vector.reshape(1, -1), 1, self._embedder)[0]
