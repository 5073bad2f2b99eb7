"""Lexical recall: the tokenizer, BM25 from scratch, and reciprocal rank fusion (RRF).

:func:`tokenize` is what the semantic memory indexes: :mod:`gya_memory.semantic.sparse` turns its
tokens into sparse vectors, and Qdrant computes BM25 (IDF included) and fuses it with the
dense ranking inside the engine. :class:`BM25` and :func:`rrf` below are the same ideas
written out in plain Python, to read and to test against; ``SemanticMemory`` does not use
them.

Dense vectors match meaning ("饮食" finds the coffee memory) but blur what has no meaning
to a language model: order ids, rare names, numbers, dates. BM25 is the opposite: it
scores a memory by the query tokens it shares with it, weighting rare tokens more. Fusing
the two rankings with :func:`rrf` keeps the strengths of both.

The tokenizer works for Chinese without a dictionary: a run of CJK characters becomes its
single characters and its character bigrams (戒咖啡 → 戒, 咖, 啡, 戒咖, 咖啡); Latin words are
lowercased; numbers and ids stay whole (``A7-2291`` → ``a7-2291``, plus its parts ``a7`` and
``2291`` so a partial id still matches). Stop words are dropped: question words, pronouns
and particles (什么, 他, 的, 吗; what, she, the, is) say nothing about *which* memory is meant,
and with a few memories per user BM25's IDF is too coarse to silence them.

>>> tokenize("最近在戒咖啡")
['最', '近', '戒', '咖', '啡', '近在', '在戒', '戒咖', '咖啡']
>>> tokenize("Order A7-2291 shipped 2026-09-01")
['order', 'a7-2291', 'a7', '2291', 'shipped', '2026-09-01', '2026', '09', '01']
>>> rrf([["a", "b", "c"], ["c", "a"]], k=60)[0][0]
'a'
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gya_memory.base.text import HAN
from gya_memory.base.text import STOP_CJK_BIGRAMS
from gya_memory.base.text import STOP_CJK_CHARS
from gya_memory.base.text import STOP_WORDS

# Han characters are cut into characters and bigrams (kana and hangul are words: see text.py).
_CJK = HAN
# A word, number or id: letters/digits, optionally joined by - _ . : / (A7-2291, v1.2, 09:30).
_WORD = r"[^\W_]+(?:[-_.:/][^\W_]+)*"
_TOKEN_RE = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>{_WORD})")
_WORD_CJK_RE = re.compile(rf"[{_CJK}]+|[^{_CJK}]+")
_PARTS_RE = re.compile(r"[-_.:/]")


def tokenize(text: str, *, stop_words: bool = True) -> list[str]:
    """Cut ``text`` into BM25 tokens (see the module docstring). Punctuation is dropped,
    and stop words too unless ``stop_words=False``."""
    text = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        if match.group("cjk"):
            tokens.extend(_cjk_tokens(match.group("cjk"), stop_words))
        else:
            # \w also matches CJK, so a word like "ai智能" is split into its script runs.
            for run in _WORD_CJK_RE.findall(match.group("word")):
                if re.match(rf"[{_CJK}]", run):
                    tokens.extend(_cjk_tokens(run, stop_words))
                else:
                    tokens.extend(_word_tokens(run, stop_words))
    return tokens


def _cjk_tokens(run: str, stop_words: bool) -> list[str]:
    grams = list(run) + [run[i : i + 2] for i in range(len(run) - 1)]
    if not stop_words:
        return grams
    return [g for g in grams if g not in STOP_CJK_CHARS and g not in STOP_CJK_BIGRAMS]


def _word_tokens(word: str, stop_words: bool) -> list[str]:
    word = word.strip("-_.:/")
    if not word or (stop_words and word in STOP_WORDS):
        return []
    parts = [p for p in _PARTS_RE.split(word) if p]
    return [word] + (parts if len(parts) > 1 else [])


@dataclass(frozen=True)
class LexicalHit:
    """One BM25 result: the document's key and its score (higher is better, always > 0)."""

    id: str
    score: float


class BM25:
    """Okapi BM25 over a fixed set of documents, keyed by id.

    >>> index = BM25({"m1": "用户叫张三", "m2": "订单 A7-2291 已发货"})
    >>> [h.id for h in index.search("A7-2291 到哪了")]
    ['m2']
    """

    def __init__(self, docs: Mapping[str, str] | Iterable[tuple[str, str]], *,
                 k1: float = 1.5, b: float = 0.75) -> None:
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1, self.b = k1, b
        items = list(docs.items() if isinstance(docs, Mapping) else docs)
        self.ids: list[str] = [doc_id for doc_id, _ in items]
        if len(set(self.ids)) != len(self.ids):
            raise ValueError("BM25 got the same document id twice")
        self._tf: list[Counter[str]] = [Counter(tokenize(text)) for _, text in items]
        self._len = [sum(tf.values()) for tf in self._tf]
        self._avg_len = (sum(self._len) / len(self._len)) if self._len else 0.0
        df: Counter[str] = Counter()
        for tf in self._tf:
            df.update(tf.keys())
        n = len(items)
        # Lucene's IDF: always positive, so a token in every document still counts a little.
        self.idf: dict[str, float] = {
            tok: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for tok, d in df.items()
        }

    def __len__(self) -> int:
        return len(self.ids)

    def scores(self, query: str) -> list[float]:
        """The BM25 score of every document for ``query``, in document order."""
        q_tokens = set(tokenize(query)) & self.idf.keys()
        out = []
        for tf, length in zip(self._tf, self._len):
            norm = self.k1 * (1 - self.b + self.b * length / self._avg_len) if self._avg_len else 0
            score = 0.0
            for tok in q_tokens:
                f = tf.get(tok, 0)
                if f:
                    score += self.idf[tok] * f * (self.k1 + 1) / (f + norm)
            out.append(score)
        return out

    def search(self, query: str, top_k: int | None = None) -> list[LexicalHit]:
        """Documents sharing at least one token with ``query``, best first (ties: doc order)."""
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        scored = [(s, i) for i, s in enumerate(self.scores(query)) if s > 0]
        scored.sort(key=lambda si: (-si[0], si[1]))
        return [LexicalHit(self.ids[i], s) for s, i in scored[:top_k]]


def rrf(rankings: Sequence[Sequence[str]], k: float = 60,
        weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: ``score(d) = Σ 1 / (k + rank of d in each list)``, rank from 1;
    with ``weights``, each list's terms are multiplied by its weight.

    A document missing from a list adds nothing for it. Returns ``(id, score)`` best first;
    ties keep the order in which the ids were first seen. ``k=60`` is the value of the
    original paper (Cormack et al., 2009): it damps the gap between rank 1 and rank 2.

    >>> rrf([["a", "b"], ["b", "c"]], k=1)
    [('b', 0.8333333333333333), ('a', 0.5), ('c', 0.3333333333333333)]
    """
    if k < 0:
        raise ValueError(f"rrf needs k >= 0, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    elif len(weights) != len(rankings) or any(not w >= 0 for w in weights):
        raise ValueError(f"rrf needs one weight >= 0 per ranking, got {list(weights)!r}")
    fused: dict[str, float] = {}
    for weight, ranking in zip(weights, rankings):
        if isinstance(ranking, str):
            raise ValueError("rrf takes a list of rankings (lists of ids), not a string")
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"a ranking lists the same id twice: {list(ranking)!r}")
        for rank, doc_id in enumerate(ranking, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + weight / (k + rank)
    order = {doc_id: i for i, doc_id in enumerate(fused)}
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))
