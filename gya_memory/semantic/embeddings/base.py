"""The embedder interface: :class:`Embedder`, its checks, its errors, its fingerprint."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from gya_memory.base.checks import redact_url
from gya_memory.base.errors import GyaMemoryError
from gya_memory.base.text import language_of
from gya_memory.semantic.embeddings.thresholds import MIN_SCORE_BY_LANGUAGE, min_score_for



BATCH_SIZE = 64
"""Texts per request (and per call into the local model)."""

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"


class EmbeddingUnavailable(RuntimeError, GyaMemoryError):
    """The embedding service could not give an answer; the message names the URL and why.

    ``url`` is the endpoint that failed (also in the message), for a warning to show.
    """

    def __init__(self, message: str, url: str | None = None) -> None:
        super().__init__(redact_url(message))  # never a user:password@ in a message
        self.url = url

    @property
    def url(self) -> str | None:
        return self._url

    @url.setter
    def url(self, value: str | None) -> None:
        self._url = None if value is None else redact_url(value)


@dataclass(frozen=True)
class Fingerprint:
    """What a vector collection records about the vectors in it.

    Two embedders whose fingerprints differ produce vectors that must not be compared.
    """

    model: str
    dim: int
    distance: str = "cosine"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- input checks and output normalisation ----------------------------------------------
def check_input(text: object, what: str = "text") -> str:
    """A non-empty ``str`` that can be sent as UTF-8; otherwise a ValueError naming ``what``."""
    if not isinstance(text, str):
        raise ValueError(f"{what} must be a string, got {type(text).__name__}: {text!r}")
    if not text.strip():
        raise ValueError(f"{what} is empty; give it some text")
    if "\x00" in text:
        raise ValueError(f"{what} contains a NUL character (\\x00) at {text.index(chr(0))}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{what} is not valid Unicode: a lone surrogate at position {exc.start}"
        ) from None
    return text


def check_inputs(texts: object) -> list[str]:
    """A list (or tuple) of non-empty strings; a ValueError names the first bad item."""
    if isinstance(texts, str):
        raise ValueError("texts must be a list of strings, not one string; wrap it: [text]")
    if not isinstance(texts, (list, tuple)):
        raise ValueError(f"texts must be a list of strings, got {type(texts).__name__}")
    return [check_input(t, f"texts[{i}]") for i, t in enumerate(texts)]


def l2_normalise(matrix: np.ndarray, *, source: str = "embedder") -> np.ndarray:
    """Rows scaled to unit length, as float32. A row of zeros or non-numbers is an error."""
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"{source} gave an array of shape {m.shape}; expected (n, dim)")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{source} gave a vector containing NaN or infinity")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    if m.shape[0] and not np.all(norms > 0):
        row = int(np.argmin(norms[:, 0]))
        raise ValueError(f"{source} gave an all-zero vector (row {row}); it has no direction")
    return (m / norms).astype(np.float32) if m.shape[0] else m.astype(np.float32)


# -- the interface --------------------------------------------------------------------
class Embedder(ABC):
    """One embedding model. Subclasses implement :meth:`_embed`; the rest is shared.

    ``_embed(texts, query=...)`` gets a checked, non-empty list and returns an
    ``(len(texts), dim)`` array; rows are normalised here.
    """

    name: str
    dim: int
    degraded: bool = False
    _min_score: float | None = None

    @property
    def fixed_min_score(self) -> float | None:
        """The ``min_score=`` this embedder was built with, if one was given by hand (it
        then overrides every calibrated threshold and floor), else None."""
        return self._min_score

    @property
    def default_min_score(self) -> float:
        """Score below which a hit counts as unrelated (see :data:`DEFAULT_MIN_SCORE`)."""
        return self._min_score if self._min_score is not None else min_score_for(self.name)

    def threshold(self, query: str) -> float:
        """The ``min_score`` to use for this query: ``min_score=`` if one was given, else
        the calibrated per-language value where this model has one, else the default."""
        if self._min_score is None:
            by_language = MIN_SCORE_BY_LANGUAGE.get(self.name)
            if by_language and language_of(query) in by_language:
                return by_language[language_of(query)]
        return self.default_min_score

    @property
    def fingerprint(self) -> Fingerprint:
        return Fingerprint(model=self.name, dim=self.dim)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, unit rows. For what is stored (e5: ``passage: ``)."""
        checked = check_inputs(texts)
        if not checked:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._finish(self._embed(checked, query=False), len(checked))

    def embed_query(self, text: str) -> np.ndarray:
        """``(dim,)`` float32, unit length. For what is asked (e5: ``query: ``)."""
        checked = check_input(text)
        return self._finish(self._embed([checked], query=True), 1)[0]

    def check(self) -> None:
        """Embed one short text; raises :class:`EmbeddingUnavailable` if that fails."""
        self.embed_query("ping")

    @abstractmethod
    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray: ...

    def _finish(self, matrix: np.ndarray, n: int) -> np.ndarray:
        out = l2_normalise(matrix, source=self.name)
        if out.shape != (n, self.dim):
            raise ValueError(f"{self.name} gave shape {out.shape}, expected {(n, self.dim)}")
        return out

    def _describe(self) -> str:
        return f"dim={self.dim}"

    def __repr__(self) -> str:
        flag = ", degraded=True" if self.degraded else ""
        return f"{type(self).__name__}({self._describe()}{flag})"
