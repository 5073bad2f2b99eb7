"""What session search is made of: the stored values (:class:`SessionMessage`, :class:`SearchHit`,
:class:`SessionInfo`), the FTS5 trigram check, and turning a query into safe FTS5 terms
and snippets. :mod:`gya_memory.hermes.sessions` holds the store itself.
"""

from __future__ import annotations

import functools
import math
import re
import sqlite3
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gya_memory.base.checks import check_count, check_text
from gya_memory.base.fence import fence
from gya_memory.base.checks import MAX_ID_CHARS
from gya_memory.base.config import data_path
from gya_memory.base.errors import GyaMemoryError
from gya_memory.base.text import HAN
from gya_memory.base.text import ROLES


MAX_CONTENT_CHARS = 20_000
MAX_QUERY_CHARS = 1_000
MAX_QUERY_TERMS = 16
MAX_LIMIT = 100
MAX_CONTEXT = 20
DEFAULT_DB_NAME = "sessions.sqlite3"
MIN_SQLITE = (3, 34, 0)  # the trigram tokenizer
TRIGRAM = 3  # terms this long or longer use the index

SNIPPET_OPEN = "«"
SNIPPET_CLOSE = "»"
SNIPPET_ELLIPSIS = "…"
SNIPPET_TOKENS = 48  # FTS5 snippet() window (64 at most); with trigrams one token ~ one character
SNIPPET_CHARS = SNIPPET_TOKENS + TRIGRAM - 1  # the same width for LIKE-only hits


# Han characters are written without spaces, so a query is also cut where they meet others.
_CJK = HAN
_SCRIPT_RUN_RE = re.compile(rf"[{_CJK}]+|[^{_CJK}]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_MARKED_RE = re.compile(f"({re.escape(SNIPPET_OPEN)}[^{SNIPPET_CLOSE}]*{re.escape(SNIPPET_CLOSE)})")


class FTS5Unavailable(RuntimeError, GyaMemoryError):
    """This Python's SQLite has no FTS5, or no trigram tokenizer (needs SQLite 3.34+)."""


@dataclass(frozen=True)
class SessionMessage:
    """One stored message, exactly as it was said."""

    id: int
    user_id: str
    session_id: str
    seq: int
    role: str
    content: str
    created_at: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SearchHit:
    """One matching message, with the messages around it in its session.

    ``snippet`` is part of the message with each match between ``«`` and ``»`` and ``…``
    where it was cut; ``score`` is BM25 over this user's messages (higher is better; see
    :class:`BM25`) when the query had a
    term of three or more characters, else 0.0; ``before`` and ``after`` hold up to
    ``context`` messages of the same session, in order.
    """

    message: SessionMessage
    snippet: str
    score: float
    before: list[SessionMessage] = field(default_factory=list)
    after: list[SessionMessage] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        return self.message.session_id

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def as_text(self) -> str:
        """The hit as a small transcript, ready to put into a prompt: the matching
        message is marked with ``>``. The stored text is fenced as data
        (:mod:`gya_memory.base.fence`): one line per message, nothing in it can close the fence
        or look like a heading or a new message."""
        m = self.message
        msgs = (*self.before, m, *self.after)
        return fence("session_hit", [msg.content for msg in msgs],
                     header=f"session {m.session_id}, {m.created_at}",
                     prefixes=[f"{'>' if msg.id == m.id else ' '} {msg.role}:" for msg in msgs])


@dataclass(frozen=True)
class SessionInfo:
    """One session of the user: when it started and ended, and how many messages it has."""

    session_id: str
    started_at: str
    ended_at: str
    messages: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- checks ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _probe_trigram(version: str) -> str | None:
    """None if an FTS5 table with the trigram tokenizer can be made, else SQLite's error."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x, tokenize='trigram')")
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        conn.close()
    return None


def check_fts5_trigram() -> None:
    """Raise :class:`FTS5Unavailable` unless SQLite has FTS5 with the trigram tokenizer."""
    version = sqlite3.sqlite_version
    if tuple(sqlite3.sqlite_version_info) < MIN_SQLITE:
        raise FTS5Unavailable(
            f"session search needs SQLite {'.'.join(map(str, MIN_SQLITE))} or newer for FTS5's "
            f"trigram tokenizer; this Python uses SQLite {version}. Use a newer Python build "
            "(or the pysqlite3-binary package)."
        )
    error = _probe_trigram(version)
    if error is not None:
        raise FTS5Unavailable(
            f"this Python's SQLite {version} cannot create an FTS5 table with "
            f"tokenize='trigram' ({error}); it was built without FTS5. Use a Python whose "
            "SQLite has FTS5 (the python.org and most Linux builds do)."
        )


def check_id(name: str, value: object) -> str:
    return check_text(name, value, MAX_ID_CHARS)


def check_content(value: object) -> str:
    """Stored as given (not stripped): these are the raw messages."""
    return check_text("content", value, MAX_CONTENT_CHARS, strip=False)


def check_role(value: object) -> str:
    if value not in ROLES or not isinstance(value, str):
        raise ValueError(f"role must be one of {', '.join(ROLES)}; got {value!r}")
    return value


def check_int(name: str, value: object, low: int, high: int) -> int:
    return check_count(name, value, low, high)


def _is_separator(ch: str) -> bool:
    """Whitespace, and punctuation outside ASCII (，。、？！「」《》…): ASCII punctuation
    stays part of a term so that ``50%``, ``my_notes.txt`` and ``C++`` are searchable."""
    return ch.isspace() or (ord(ch) > 127 and unicodedata.category(ch).startswith("P"))


def query_terms(query: object) -> list[str]:
    """The literal terms a query is split into (see the module docstring).

    >>> query_terms("咖啡 decaf")
    ['咖啡', 'decaf']
    >>> query_terms("Qdrant报错了？")
    ['Qdrant', '报错了']
    >>> query_terms('"50%" OR NEAR(x)')
    ['"50%"', 'OR', 'NEAR(x)']
    """
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}: {query!r}")
    if not query.strip():
        raise ValueError("query is empty; give it some words to look for")
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(f"query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    if "\x00" in query:
        raise ValueError("query contains a NUL character (\\x00)")
    check_text("query", query, MAX_QUERY_CHARS, strip=False)  # e.g. a lone surrogate
    cleaned = "".join(" " if _is_separator(ch) else ch for ch in query)
    terms: list[str] = []
    seen: set[str] = set()
    for piece in cleaned.split():
        for term in _SCRIPT_RUN_RE.findall(piece):
            key = term.translate(_ASCII_LOWER)
            if key not in seen:
                seen.add(key)
                terms.append(term)
    if not terms:
        raise ValueError(f"query {query!r} has no search terms, only punctuation")
    if len(terms) > MAX_QUERY_TERMS:
        raise ValueError(f"query has {len(terms)} terms; the limit is {MAX_QUERY_TERMS}")
    return terms


def fts_phrase(term: str) -> str:
    """A term as an FTS5 phrase: in double quotes, inner quotes doubled. Inside a
    phrase nothing is syntax, so user input cannot make MATCH fail."""
    return '"' + term.replace('"', '""') + '"'


def _spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Where the terms occur in text (ASCII case folded, like LIKE), overlaps merged."""
    folded = text.translate(_ASCII_LOWER)
    found = []
    for term in terms:
        t = term.translate(_ASCII_LOWER)
        start = folded.find(t)
        while start != -1:
            found.append((start, start + len(t)))
            start = folded.find(t, start + 1)
    merged: list[tuple[int, int]] = []
    for a, b in sorted(found):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _mark(text: str, spans: Sequence[tuple[int, int]], lo: int = 0, hi: int | None = None) -> str:
    hi = len(text) if hi is None else hi
    out, pos = [], lo
    for a, b in spans:
        a, b = max(a, lo), min(b, hi)
        if a >= b:
            continue
        out += [text[pos:a], SNIPPET_OPEN, text[a:b], SNIPPET_CLOSE]
        pos = b
    out.append(text[pos:hi])
    return "".join(out)


def like_snippet(text: str, terms: Sequence[str], width: int = SNIPPET_CHARS) -> str:
    """A snippet for a LIKE hit: about ``width`` characters around the first match, every
    match in it between « and », … where the message was cut."""
    spans = _spans(text, terms)
    first = spans[0][0] if spans else 0
    lo = max(0, first - width // 4)
    hi = min(len(text), lo + width)
    lo = max(0, min(lo, hi - width))
    return ((SNIPPET_ELLIPSIS if lo > 0 else "") + _mark(text, spans, lo, hi)
            + (SNIPPET_ELLIPSIS if hi < len(text) else ""))


def mark_outside(snippet: str, terms: Sequence[str]) -> str:
    """Mark short terms in an FTS5 snippet, leaving its «...» parts alone."""
    if not terms:
        return snippet
    parts = _MARKED_RE.split(snippet)
    return "".join(p if i % 2 else _mark(p, _spans(p, terms)) for i, p in enumerate(parts))


# -- ranking with this user's statistics ---------------------------------------------------
BM25_K1 = 1.2  # FTS5's bm25() constants
BM25_B = 0.75


@dataclass(frozen=True)
class UserStats:
    """What BM25 needs to know about one user's messages: how many there are, their
    average length in trigrams (the index's tokens), and how many contain each term."""

    messages: int
    avg_tokens: float
    containing: dict[str, int]


def trigram_tokens(text: str) -> int:
    """How many tokens the trigram tokenizer makes of ``text``: one per run of 3 characters."""
    return max(len(text) - TRIGRAM + 1, 0)


def _count(haystack: str, needle: str, overlapping: bool) -> int:
    if not overlapping:
        return haystack.count(needle)  # the same count as below, in C
    count, start = 0, haystack.find(needle)
    while start != -1:
        count += 1
        start = haystack.find(needle, start + 1)
    return count


class BM25:
    """FTS5's BM25 score (higher is better) for ``terms``, computed over one user's
    messages (``stats``) instead of every user's.

    FTS5's own ``bm25()`` takes N, the average length and each term's document frequency
    from the whole index, so another user's messages would move this user's scores and
    order (and so leak how often another user wrote a word). The formula is FTS5's: IDF
    ``log((N - n + 0.5) / (n + 0.5))`` (at least 1e-6), ``k1 = 1.2``, ``b = 0.75``.
    """

    def __init__(self, terms: Sequence[str], stats: UserStats) -> None:
        self.avg = stats.avg_tokens or 1.0
        self.terms = []
        for term in terms:
            n = stats.containing.get(term, 0)
            idf = max(math.log((stats.messages - n + 0.5) / (n + 0.5)), 1e-6)
            needle = term.lower()
            overlapping = any(needle[:k] == needle[-k:] for k in range(1, len(needle)))
            self.terms.append((needle, overlapping, idf))

    def __call__(self, content: str) -> float:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * trigram_tokens(content) / self.avg)
        folded = content.lower()
        score = 0.0
        for needle, overlapping, idf in self.terms:
            tf = max(_count(folded, needle, overlapping), 1)  # the index matched: once at least
            score += idf * tf * (BM25_K1 + 1) / (tf + norm)
        return score


def default_path() -> Path:
    """Where sessions live when no path is given: ``$GYA_DATA_DIR/sessions.sqlite3``."""
    return data_path(DEFAULT_DB_NAME)
