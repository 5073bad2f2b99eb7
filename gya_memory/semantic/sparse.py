"""Sparse lexical vectors (稀疏向量): the project's tokenizer, turned into what Qdrant indexes.

Qdrant ranks a sparse vector by the dot product of query and document weights. With the
``Idf`` modifier on the sparse vector, the engine multiplies each query weight by the token's
inverse document frequency, computed over the points a filter selects (here: one user's), so
the score is BM25:

- a document gets, per token, the BM25 term-frequency part
  ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / AVG_LEN))``;
- a query gets weight 1 per distinct token; the engine supplies the IDF.

Tokens are those of :func:`gya_memory.semantic.lexical.tokenize` (Chinese characters and bigrams,
English words, ids kept whole, stop words dropped). A token's index is its CRC-32, the same in
every process, so no vocabulary has to be stored.

A memory's date is findable too: :func:`document_vector` adds month tokens made from
``created_at`` (``@month:5`` and ``@month:2026-05``), and :func:`query_tokens` turns month
words in a question into the same tokens: "what did I tell you in May?", "我五月份跟你说过什么",
"5月", "2026-05". English "may" is a stop word (a modal verb far more often than a month), so
it only counts as the month after a preposition ("in May", "since may") or next to a number.
A calendar day works the same way (``@day:5-4``): from ``created_at`` and from any day the
memory's text names, and from a question that names one ("5月4日那天…", "On May 4th, …",
:func:`named_days`); the day tokens don't count in a memory's length, so every other score
stays what it was.

>>> query_tokens("What did I tell you in May?")
['tell', '@month:5']
>>> query_tokens("我五月份跟你说过什么")[-1]
'@month:5'
>>> document_tokens("用户叫张三", "2026-05-03T09:00:00+08:00")[-3:]
['@month:5', '@month:2026-05', '@day:5-3']
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from dataclasses import dataclass

from gya_memory.semantic.lexical import tokenize

K1 = 1.5
B = 0.75
#: Typical length of one memory in tokens (Chinese: characters + bigrams), for BM25's
#: length normalisation; the labelled set averages about 14.
AVG_LEN = 14.0

_MONTHS_EN = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
    "oct": 10, "nov": 11, "dec": 12,
}
_CN_NUM = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
           "十": 10, "十一": 11, "十二": 12}
_MONTH_ZH = re.compile(r"(十[一二]|[一二三四五六七八九十]|1[0-2]|0?[1-9])\s*月")
_MONTH_NUM = re.compile(r"\b(20\d\d)[-/.](0?[1-9]|1[0-2])\b")
# "may" is a month only after one of these words, or next to a number ("May 3", "3 May").
_MAY_CONTEXT = re.compile(
    r"\b(?:in|since|during|until|till|by|of|from|last|this|next|early|late|mid|before|after)"
    r"\s+may\b|\bmay\s+\d|\d\s+may\b", re.IGNORECASE)
_EN_WORD = re.compile(r"[A-Za-z]+")
_MON = r"(" + "|".join(sorted(_MONTHS_EN, key=len, reverse=True)) + r")\b\.?"
_DD = r"(3[01]|[12]\d|0?[1-9])"
_DAY_ZH = re.compile(rf"(1[0-2]|0?[1-9])\s*月\s*{_DD}\s*[日号]")
_TH = r"(?:st|nd|rd|th)?"
_DAY_EN = re.compile(rf"\b{_MON}\s+{_DD}{_TH}\b|\b{_DD}{_TH}\s+(?:of\s+)?{_MON}", re.IGNORECASE)
_MAY_VERB = re.compile(r"\b(i|you|we|they|he|she|it|this|that|who|which)\s+may$", re.I)
_DAY_ISO = re.compile(r"\b20\d\d-(0?[1-9]|1[0-2])-(3[01]|[12]\d|0?[1-9])\b")


def month_token(month: int, year: int | None = None) -> str:
    """The token of a month (``@month:5``) or of a month of a year (``@month:2026-05``)."""
    return f"@month:{month}" if year is None else f"@month:{year:04d}-{month:02d}"


def query_months(text: str) -> list[str]:
    """The month tokens a question asks about, in order of appearance, without repeats."""
    found: list[str] = []
    for m in _MONTH_NUM.finditer(text):
        found.append(month_token(int(m.group(2)), int(m.group(1))))
        found.append(month_token(int(m.group(2))))
    for m in _MONTH_ZH.finditer(text):
        raw = m.group(1)
        found.append(month_token(_CN_NUM[raw] if raw in _CN_NUM else int(raw)))
    for m in _EN_WORD.finditer(text):
        word = m.group(0).lower()
        if word in _MONTHS_EN and word != "may":
            found.append(month_token(_MONTHS_EN[word]))
    if _MAY_CONTEXT.search(text):
        found.append(month_token(5))
    return list(dict.fromkeys(found))


def named_days(text: str) -> set[tuple[int, int]]:
    """The calendar days (month, day) a text names: ``5月4日``, "May 4th", "4 May",
    ``2026-05-04``; the year is left out, as people leave it out when they ask.

    >>> sorted(named_days("5月4日那天，我们聊到了 May 10th 和 2026-06-01"))
    [(5, 4), (5, 10), (6, 1)]
    """
    found = {(int(m[1]), int(m[2])) for m in (*_DAY_ZH.finditer(text), *_DAY_ISO.finditer(text))}
    for m in _DAY_EN.finditer(text):
        month, day = (m[1], m[2]) if m[1] else (m[4], m[3])
        if m[1] and month.lower() == "may" and _MAY_VERB.search(text, 0, m.start() + 3):
            continue  # "I may 2x it" is the verb
        found.add((_MONTHS_EN[month.lower()], int(day)))
    return found


DAY_PREFIX = "@day:"


def day_token(month: int, day: int) -> str:
    """The token of a calendar day, any year (``@day:5-4``)."""
    return f"{DAY_PREFIX}{month}-{day}"


def query_tokens(text: str, *, dates: bool = True) -> list[str]:
    """The distinct tokens of a question (and its month and day tokens when ``dates``)."""
    tokens = list(dict.fromkeys(tokenize(text)))
    if not dates:
        return tokens
    return tokens + query_months(text) + [day_token(*d) for d in sorted(named_days(text))]


def document_tokens(text: str, created_at: str | None = None, *, dates: bool = True) -> list[str]:
    """The tokens of a memory, plus the month and day tokens of its ``created_at`` (ISO 8601)
    and the day tokens of the days its text names."""
    tokens = tokenize(text)
    if not dates:
        return tokens
    days = named_days(text)
    m = re.match(r"(\d{4})-(\d{2})-(\d{2})", created_at or "")
    if m:
        year, month = int(m.group(1)), int(m.group(2))
        tokens += [month_token(month), month_token(month, year)]
        days.add((month, int(m.group(3))))
    return tokens + [day_token(*d) for d in sorted(days)]


def token_index(token: str) -> int:
    """The sparse-vector index of ``token``: its CRC-32 (an unsigned 32-bit int)."""
    return zlib.crc32(token.encode("utf-8"))


@dataclass(frozen=True)
class Sparse:
    """A sparse vector: sorted, distinct ``indices`` and their ``values``."""

    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.indices)


def _pack(weights: dict[int, float]) -> Sparse:
    items = sorted(weights.items())
    return Sparse(tuple(i for i, _ in items), tuple(float(v) for _, v in items))


def document_vector(text: str, created_at: str | None = None, *, dates: bool = True,
                    k1: float = K1, b: float = B, avg_len: float = AVG_LEN) -> Sparse:
    """BM25 term-frequency weights of a memory's tokens (the engine adds the IDF)."""
    counts = Counter(document_tokens(text, created_at, dates=dates))
    length = sum(n for t, n in counts.items() if not t.startswith(DAY_PREFIX))  # days: no length
    norm = k1 * (1 - b + b * length / avg_len)
    weights: dict[int, float] = {}
    for token, tf in counts.items():
        index = token_index(token)
        weights[index] = weights.get(index, 0.0) + tf * (k1 + 1) / (tf + norm)
    return _pack(weights)


def query_vector(text: str, *, dates: bool = True) -> Sparse:
    """Weight 1 for each distinct token of a question (the engine multiplies by IDF)."""
    return _pack({token_index(t): 1.0 for t in query_tokens(text, dates=dates)})
