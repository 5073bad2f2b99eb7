"""Semantic memory (语义记忆, layer 3): memories found by meaning, in Qdrant.

- ``memory``      :class:`SemanticMemory`: store, recall (dense, lexical, hybrid), forget
- ``values``      its values and checks: :class:`Hit`, point ids, errors, input checks
- ``lifecycle``   which embedding model built a collection, re-embedding, the degraded mode
- ``embeddings/`` text to vectors: local e5, Ollama, OpenAI-compatible, the TF-IDF fallback
- ``stores/``     the vector store under it: Qdrant Edge in-process, or qdrant-client
- ``lexical``     the tokenizer for Chinese and English; BM25 and RRF written out
- ``sparse``      sparse lexical vectors (BM25 weights, month and day tokens) for Qdrant

Where the points live:

- by default in Qdrant Edge, Qdrant's engine running inside this process, on the data
  folder (``$GYA_DATA_DIR/qdrant``), so memories survive a kernel restart
  (:class:`gya_memory.semantic.stores.edge.EdgeStore`: HNSW, payload indexes, a write-ahead log). The
  folder is locked while a process has it open (the WAL's lock). In one process, every
  :class:`SemanticMemory` on the same folder shares one store, so re-running a notebook
  cell or opening two users side by side just works; another kernel gets
  :class:`StoreLocked` until this one calls :meth:`SemanticMemory.close`.
- ``":memory:"``: qdrant-client's local mode, in RAM only (tests, throw-away demos).
- a Qdrant server when ``QDRANT_URL`` (and ``QDRANT_API_KEY``) is set, or ``url=`` is given
  (:class:`gya_memory.semantic.stores.client.ClientStore`): the same code, several processes at once.

Point ids are ``uuid5(user_id + normalised text)``: storing the same memory again updates
that point (in any process), where ``abs(hash(text)) % 10**12`` would change with every
process, because Python salts string hashes, and pile up duplicates.

Which embedding model built a collection, ``reembed()`` with another one, and the degraded
mode (⚠️: TF-IDF in ``<collection>__fallback`` while the embedding service is down, every
hit ``degraded=True``, ``recover()`` afterwards) are in :mod:`gya_memory.semantic.lifecycle`.
"""

from __future__ import annotations

from gya_memory.base.lazy import lazy_names

# public name -> the module that defines it (imported on first use)
_EXPORTS: dict[str, str] = {
    "SemanticMemory": "gya_memory.semantic.memory",
    "Hit": "gya_memory.semantic.values",
    "point_id": "gya_memory.semantic.values",
    "DegradedWarning": "gya_memory.semantic.values",
    "EmbedderMismatch": "gya_memory.semantic.values",
    "get_embedder": "gya_memory.semantic.embeddings",
    "Embedder": "gya_memory.semantic.embeddings.base",
    "EmbeddingUnavailable": "gya_memory.semantic.embeddings.base",
    "LocalE5Embedder": "gya_memory.semantic.embeddings.local",
    "OllamaEmbedder": "gya_memory.semantic.embeddings.http",
    "OpenAIEmbedder": "gya_memory.semantic.embeddings.http",
    "TFIDFEmbedder": "gya_memory.semantic.embeddings.tfidf",
    "MIN_SCORE_BY_LANGUAGE": "gya_memory.semantic.embeddings.thresholds",
    "document_vector": "gya_memory.semantic.sparse",
    "query_vector": "gya_memory.semantic.sparse",
    "query_tokens": "gya_memory.semantic.sparse",
    "named_days": "gya_memory.semantic.sparse",
    "VectorStore": "gya_memory.semantic.stores.common",
    "CollectionSpec": "gya_memory.semantic.stores.common",
    "PointData": "gya_memory.semantic.stores.common",
    "Where": "gya_memory.semantic.stores.common",
    "Found": "gya_memory.semantic.stores.common",
    "StoreLocked": "gya_memory.semantic.stores.common",
    "EdgeStore": "gya_memory.semantic.stores.edge",
    "ClientStore": "gya_memory.semantic.stores.client",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
