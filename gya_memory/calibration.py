"""Threshold calibration (阈值校准): choose ``min_score`` per embedder on a labelled set.

The article filters weak candidates with ``min_score=0.5``. That number was measured with
bge-m3, whose unrelated pairs score around 0.4. A threshold belongs to one embedder: the
default e5 model here scores every pair of sentences in this set between about 0.71 and
0.93, so 0.5 lets every candidate through and "no hit" never happens. Each embedder therefore ships a
min_score chosen on data, and this module is how it is chosen.

The data is ``gya_memory/data/labelled_memories.json``, written for this project: six users
(three writing Chinese, three English), nine memories each over three sessions, and 105
queries, each asked within one user's memories. 78 have gold memories: mostly paraphrases that
share no content word with their memory (「我最近饮食上有什么要注意的吗？」 for
「最近在戒咖啡，想少喝一点」), some that hinge on a rare name, number, date or ID (``MU5137``,
``阿莫西林``, ``Okonkwo-Hale``), and the article's own four questions. 27 have no answer
among that user's memories, on a nearby topic (「用户去过哪里？」, an order number that
was never mentioned), so a retriever has to say "nothing" rather than return the least bad
memory. (The small e5 model does not manage that for 「用户去过哪里？」: its best wrong memory
scores 0.893, above the right memory of two of the article's questions.)

What is measured, for a ranking of one user's memories per query:

- recall@1, recall@3: share of answerable queries with a gold memory ranked first / in the
  top 3, with no threshold applied; MRR is the mean of 1/rank of the first gold memory.
- acceptance at a threshold ``t``: share of answerable queries whose best gold memory
  scores ``>= t`` (the right memory survives the filter).
- rejection at ``t``: share of no-answer queries whose best candidate scores ``< t``
  (the retriever correctly reports no hit).

How the threshold is chosen: every value on a 0.001 grid across the observed scores is a
candidate, and the threshold is the one that maximises balanced accuracy, the mean of
acceptance and rejection (the two classes count equally though answerable queries are about
three times as many). Ties go to the candidate farthest from any observed score: the middle
of the best gap between scores. The threshold is chosen on the same queries it is scored on,
so those two rates are optimistic; :attr:`CalibrationReport.heldout_acceptance` and
``heldout_rejection`` are the honest version: each user's queries scored with a threshold
chosen on the other users. The report also shows the recall-first alternative (the highest
threshold that keeps 90% of answers) and a threshold per language: e5 scores Chinese pairs a
few hundredths higher than English ones, so one threshold for both is a compromise, and
``embeddings.MIN_SCORE_BY_LANGUAGE`` ships one per language.

>>> labelled = load_labelled()
>>> len(labelled.memories), len(labelled.answerable), len(labelled.no_answer)
(54, 78, 27)

Run ``python -m gya_memory.calibration [--embedder local|tfidf|ollama|openai]`` to calibrate.
Nothing happens at import time: the data is read and models are loaded only when asked.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .embeddings import l2_normalise
from .text import HAN_RUN_RE, STOP_CJK_BIGRAMS, STOP_CJK_CHARS, STOP_WORDS

if TYPE_CHECKING:  # pandas is imported only when a table is asked for
    from .embeddings import Embedder
    import pandas as pd

DATA_PACKAGE = "gya_memory.data"
DATA_FILE = "labelled_memories.json"
ARTICLE_THRESHOLD = 0.5
LANGUAGES = ("zh", "en")
KINDS = ("article", "paraphrase", "rare-token", "no-answer")

#: ``rank(user, query)`` returns ``(memory_id, score)`` pairs for that user's memories,
#: higher score = more relevant. It may leave memories out (a keyword search that matches
#: nothing returns ``[]``); a left-out memory counts as never found and never accepted.
Ranker = Callable[[str, str], Sequence[tuple[str, float]]]
#: ``embed_documents(texts)`` -> ``(n, dim)`` array, one row per text.
EmbedDocuments = Callable[[list[str]], Any]
#: ``embed_query(text)`` -> ``(dim,)`` array.
EmbedQuery = Callable[[str], Any]


# -- the labelled set -------------------------------------------------------------------
@dataclass(frozen=True)
class Memory:
    """One stored memory of one user."""

    id: str
    user: str
    session: str
    lang: str
    text: str


@dataclass(frozen=True)
class Query:
    """One question asked within ``user``'s memories; ``gold`` empty means no answer."""

    id: str
    user: str
    lang: str
    kind: str
    text: str
    gold: tuple[str, ...]

    @property
    def answerable(self) -> bool:
        return bool(self.gold)


@dataclass(frozen=True)
class LabelledSet:
    """Memories and labelled queries, checked for consistency when built."""

    memories: tuple[Memory, ...]
    queries: tuple[Query, ...]
    version: int = 1

    def __post_init__(self) -> None:
        ids = [m.id for m in self.memories] + [q.id for q in self.queries]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"ids are used twice: {duplicates}")
        owner = {m.id: m.user for m in self.memories}
        for q in self.queries:
            if q.user not in self.users:
                raise ValueError(f"query {q.id} asks user {q.user!r}, who has no memories")
            for g in q.gold:
                if g not in owner:
                    raise ValueError(f"query {q.id}: gold memory {g!r} does not exist")
                if owner[g] != q.user:
                    raise ValueError(
                        f"query {q.id} is asked within {q.user!r}, but its gold memory {g} "
                        f"belongs to {owner[g]!r}"
                    )

    @property
    def users(self) -> tuple[str, ...]:
        """Users in order of first appearance."""
        return tuple(dict.fromkeys(m.user for m in self.memories))

    @property
    def answerable(self) -> tuple[Query, ...]:
        return tuple(q for q in self.queries if q.answerable)

    @property
    def no_answer(self) -> tuple[Query, ...]:
        return tuple(q for q in self.queries if not q.answerable)

    def memories_of(self, user: str) -> tuple[Memory, ...]:
        return tuple(m for m in self.memories if m.user == user)

    def memory(self, memory_id: str) -> Memory:
        for m in self.memories:
            if m.id == memory_id:
                return m
        raise KeyError(memory_id)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabelledSet:
        memories = tuple(
            Memory(m["id"], m["user"], m["session"], m["lang"], m["text"])
            for m in data["memories"]
        )
        queries = tuple(
            Query(
                id=q["id"],
                user=q["user"],
                lang=q["lang"],
                kind=q.get("kind", "paraphrase" if q["gold"] else "no-answer"),
                text=q["text"],
                gold=tuple(q["gold"]),
            )
            for q in data["queries"]
        )
        return cls(memories=memories, queries=queries, version=int(data.get("version", 1)))


def load_labelled(path: str | Path | None = None) -> LabelledSet:
    """Read the labelled set shipped in the package (or the JSON file at ``path``)."""
    if path is None:
        raw = resources.files(DATA_PACKAGE).joinpath(DATA_FILE).read_text(encoding="utf-8")
    else:
        raw = Path(path).read_text(encoding="utf-8")
    return LabelledSet.from_dict(json.loads(raw))


# -- word overlap, to check that paraphrases really are paraphrases ---------------------
_STOP_EN = STOP_WORDS
_STOP_ZH = STOP_CJK_CHARS | STOP_CJK_BIGRAMS
_HAN_RUN = HAN_RUN_RE
_LATIN_WORD = re.compile(r"[0-9a-zà-ÿ\u0100-\u024f]+(?:[-'][0-9a-zà-ÿ\u0100-\u024f]+)*")


def content_tokens(text: str) -> set[str]:
    """Content tokens of a text: Han-character bigrams and lowercased Latin words/numbers.

    Stop words (他, 什么, 用户, the, does ...) are dropped and an English plural or
    possessive ``s`` is stripped, so what is left is what a keyword search would match on.
    """
    tokens: set[str] = set()
    for run in _HAN_RUN.findall(text):
        grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        tokens.update(g for g in grams if g not in _STOP_ZH)
    for word in _LATIN_WORD.findall(text.lower()):
        word = word.removesuffix("'s")
        if word in _STOP_EN:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        if word not in _STOP_EN and (len(word) > 1 or word.isdigit()):
            tokens.add(word)
    return tokens


def lexical_overlap(query: str, text: str) -> float:
    """Share of the query's content tokens that also occur in ``text`` (0 = none)."""
    q = content_tokens(query)
    return len(q & content_tokens(text)) / len(q) if q else 0.0


# -- threshold maths --------------------------------------------------------------------
def _as_scores(values: Iterable[float]) -> np.ndarray:
    """Scores as float64; ``-inf`` stands for "nothing returned" and is below any threshold."""
    arr = np.asarray(list(values), dtype=np.float64).reshape(-1)
    return np.where(np.isnan(arr), -np.inf, arr)


def rates_at(
    positive: Iterable[float], negative: Iterable[float], threshold: float
) -> tuple[float, float]:
    """``(acceptance, rejection)`` at ``threshold``: positives ``>= t``, negatives ``< t``.

    An empty class gives ``nan`` for its rate.

    >>> rates_at([0.9, 0.8, 0.6], [0.7, 0.5], 0.75)
    (0.6666666666666666, 1.0)
    """
    pos, neg = _as_scores(positive), _as_scores(negative)
    acceptance = float(np.mean(pos >= threshold)) if pos.size else math.nan
    rejection = float(np.mean(neg < threshold)) if neg.size else math.nan
    return acceptance, rejection


def _round_within(value: float, low: float, high: float, decimals: int) -> float:
    """``value`` rounded to ``decimals`` (or more, if needed) while staying in ``(low, high]``."""
    for d in range(decimals, 10):
        r = round(value, d)
        if low < r <= high:
            return r
    return value


def choose_threshold(
    positive: Iterable[float],
    negative: Iterable[float],
    candidates: Iterable[float] | None = None,
    *,
    decimals: int = 3,
) -> float:
    """The threshold that maximises balanced accuracy (see the module docstring).

    ``candidates`` defaults to a grid with step ``10**-decimals`` from just below the lowest
    observed score to just above the highest (or, for a score range too wide for such a
    grid, the midpoints between neighbouring scores, rounded to ``decimals`` where that
    lets the same scores through). Among equally good candidates the one farthest from
    every observed score wins: the middle of the best gap.

    >>> choose_threshold([0.91, 0.88, 0.86], [0.84, 0.80])
    0.85
    """
    pos, neg = _as_scores(positive), _as_scores(negative)
    observed = np.unique(np.concatenate([pos, neg]))
    observed = observed[np.isfinite(observed)]
    if observed.size == 0:
        return 0.0
    step = 10.0**-decimals
    lo, hi = float(observed[0]), float(observed[-1])
    on_grid = candidates is None and (hi - lo) / step <= 200_000
    if candidates is not None:
        cands = np.unique(np.asarray(list(candidates), dtype=np.float64))
        if cands.size == 0:
            raise ValueError("candidates is empty")
    elif on_grid:
        first, last = math.floor(lo / step) - 1, math.ceil(hi / step) + 1
        cands = np.round(np.arange(first, last + 1) * step, decimals)
    else:
        pad = 0.01 * (hi - lo)
        cands = np.concatenate([[lo - pad], (observed[:-1] + observed[1:]) / 2, [hi + pad]])
    n_classes = (pos.size > 0) + (neg.size > 0)
    accepted = (pos[None, :] >= cands[:, None]).mean(axis=1) if pos.size else 0.0
    rejected = (neg[None, :] < cands[:, None]).mean(axis=1) if neg.size else 0.0
    balanced = (accepted + rejected) / max(n_classes, 1)
    best = np.flatnonzero(balanced >= balanced.max() - 1e-12)
    margins = np.min(np.abs(cands[best][:, None] - observed[None, :]), axis=1)
    t = float(cands[best[int(np.argmax(margins))]])
    if candidates is not None or on_grid:
        return t
    below, above = observed[observed < t], observed[observed >= t]
    low = float(below[-1]) if below.size else -math.inf
    high = float(above[0]) if above.size else math.inf
    return _round_within(t, low, high, decimals)


def threshold_for_acceptance(
    positive: Iterable[float], target: float = 0.9, *, decimals: int = 3
) -> float:
    """The highest threshold (rounded down to ``decimals``) that still accepts ``target`` of
    the positives: the recall-first alternative to :func:`choose_threshold`.

    >>> threshold_for_acceptance([0.91, 0.88, 0.86, 0.80], 0.75)
    0.86
    """
    if not 0 < target <= 1:
        raise ValueError(f"target must be in (0, 1], got {target}")
    pos = np.sort(_as_scores(positive))[::-1]
    if pos.size == 0:
        return 0.0
    needed = math.ceil(round(target * pos.size, 9))  # keep at least this many positives
    score = float(pos[needed - 1])
    if not math.isfinite(score):
        return -math.inf
    step = 10.0**-decimals
    return round(math.floor(round(score / step, 6)) * step, decimals)


# -- evaluation -------------------------------------------------------------------------
@dataclass(frozen=True)
class QueryResult:
    """How one query was ranked."""

    query_id: str
    user: str
    lang: str
    kind: str
    text: str
    gold: tuple[str, ...]
    ranking: tuple[tuple[str, float], ...]  # (memory id, score), best first

    @property
    def answerable(self) -> bool:
        return bool(self.gold)

    @property
    def best_score(self) -> float:
        """Score of the top candidate; ``-inf`` if nothing was returned."""
        return self.ranking[0][1] if self.ranking else -math.inf

    @property
    def gold_rank(self) -> int | None:
        """1-based rank of the first gold memory; ``None`` if none was returned."""
        for rank, (memory_id, _) in enumerate(self.ranking, start=1):
            if memory_id in self.gold:
                return rank
        return None

    @property
    def gold_score(self) -> float:
        """Best score of a gold memory; ``-inf`` if none was returned (or no gold)."""
        scores = [s for memory_id, s in self.ranking if memory_id in self.gold]
        return max(scores) if scores else -math.inf

    @property
    def top_id(self) -> str | None:
        return self.ranking[0][0] if self.ranking else None

    def hit_at(self, k: int) -> bool:
        rank = self.gold_rank
        return rank is not None and rank <= k


@dataclass(frozen=True)
class GroupMetrics:
    """The metrics of one slice of the queries (all, one language, one kind)."""

    name: str
    answerable: int
    no_answer: int
    recall_at_1: float
    recall_at_3: float
    mrr: float
    acceptance: float
    rejection: float


def _group(name: str, results: Sequence[QueryResult], threshold: float) -> GroupMetrics:
    ans = [r for r in results if r.answerable]
    neg = [r for r in results if not r.answerable]

    def mean(values: list[float]) -> float:
        return float(np.mean(values)) if values else math.nan

    acceptance, rejection = rates_at(
        [r.gold_score for r in ans], [r.best_score for r in neg], threshold
    )
    return GroupMetrics(
        name=name,
        answerable=len(ans),
        no_answer=len(neg),
        recall_at_1=mean([float(r.hit_at(1)) for r in ans]),
        recall_at_3=mean([float(r.hit_at(3)) for r in ans]),
        mrr=mean([1.0 / r.gold_rank if r.gold_rank else 0.0 for r in ans]),
        acceptance=acceptance,
        rejection=rejection,
    )


def _fmt(x: float, digits: int = 3) -> str:
    return "  n/a" if x is None or math.isnan(x) else f"{x:.{digits}f}"


@dataclass(frozen=True, eq=False)
class CalibrationReport:
    """Retrieval quality and the chosen threshold of one retriever on the labelled set.

    ``positive_scores`` holds, per answerable query, the best score of a gold memory;
    ``negative_scores`` holds, per no-answer query, the best score of any memory. Plot the
    two to see how well a single threshold can separate them (``-inf`` marks "not
    returned"; drop it with ``np.isfinite`` before plotting).
    """

    name: str
    threshold: float
    threshold_rule: str
    recall_at_1: float
    recall_at_3: float
    mrr: float
    acceptance: float
    rejection: float
    acceptance_at_article: float
    rejection_at_article: float
    heldout_acceptance: float
    heldout_rejection: float
    keep90_threshold: float
    keep90_rejection: float
    thresholds_by_language: dict[str, float]
    score_min: float
    score_max: float
    positive_scores: np.ndarray
    negative_scores: np.ndarray
    by_language: dict[str, GroupMetrics]
    by_kind: dict[str, GroupMetrics]
    results: tuple[QueryResult, ...]
    n_memories: int
    n_users: int
    article_threshold: float = ARTICLE_THRESHOLD

    @property
    def balanced_accuracy(self) -> float:
        return (self.acceptance + self.rejection) / 2

    def at(self, threshold: float) -> tuple[float, float]:
        """``(acceptance, rejection)`` if ``threshold`` were used instead."""
        return rates_at(self.positive_scores, self.negative_scores, threshold)

    def summary(self) -> str:
        """A few lines for a terminal or a notebook cell."""
        pos = self.positive_scores[np.isfinite(self.positive_scores)]
        neg = self.negative_scores[np.isfinite(self.negative_scores)]

        def span(a: np.ndarray) -> str:
            return f"{a.min():.3f}–{a.max():.3f}" if a.size else "none"

        lines = [
            f"{self.name}: {self.n_memories} memories of {self.n_users} users; "
            f"{len(self.positive_scores)} answerable + {len(self.negative_scores)} no-answer "
            "queries",
            f"  ranking     recall@1 {_fmt(self.recall_at_1)}   recall@3 "
            f"{_fmt(self.recall_at_3)}   MRR {_fmt(self.mrr)}",
            f"  threshold   {self.threshold:g} ({self.threshold_rule})",
            f"    at it     answerable accepted {_fmt(self.acceptance)}   no-answer rejected "
            f"{_fmt(self.rejection)}   balanced {_fmt(self.balanced_accuracy)}",
            f"    held out  accepted {_fmt(self.heldout_acceptance)}   rejected "
            f"{_fmt(self.heldout_rejection)}   (threshold chosen on the other users)",
            f"  keep 90%    threshold {self.keep90_threshold:g} keeps 90% of answers; "
            f"no-answer rejected {_fmt(self.keep90_rejection)}",
            "  per language "
            + "   ".join(f"{k} {v:g}" for k, v in self.thresholds_by_language.items())
            + "   (each chosen on that language alone)",
            f"  article {self.article_threshold:g}  answerable accepted "
            f"{_fmt(self.acceptance_at_article)}   no-answer rejected "
            f"{_fmt(self.rejection_at_article)}",
            f"  scores      all pairs {self.score_min:.3f}–{self.score_max:.3f}; gold "
            f"{span(pos)}; best no-answer {span(neg)}",
        ]
        for title, groups in (("by language", self.by_language), ("by kind", self.by_kind)):
            lines.append(f"  {title}:")
            for g in groups.values():
                lines.append(
                    f"    {g.name:<11} n={g.answerable:>2}+{g.no_answer:<2}  recall@1 "
                    f"{_fmt(g.recall_at_1)}  recall@3 {_fmt(g.recall_at_3)}  MRR "
                    f"{_fmt(g.mrr)}  accepted {_fmt(g.acceptance)}  rejected "
                    f"{_fmt(g.rejection)}"
                )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def to_frame(self) -> pd.DataFrame:
        """The metrics as a table: one row for all queries, one per language and per kind."""
        import pandas as pd

        overall = _group("all", self.results, self.threshold)
        groups = [overall, *self.by_language.values(), *self.by_kind.values()]
        frame = pd.DataFrame(
            [
                {
                    "group": g.name,
                    "answerable": g.answerable,
                    "no-answer": g.no_answer,
                    "recall@1": g.recall_at_1,
                    "recall@3": g.recall_at_3,
                    "MRR": g.mrr,
                    "accepted": g.acceptance,
                    "rejected": g.rejection,
                }
                for g in groups
            ]
        )
        return frame.set_index("group")

    def per_query_frame(self) -> pd.DataFrame:
        """One row per query: its top memory, the gold memory's rank and score, and whether
        the threshold did the right thing (``ok``: gold accepted, or no-answer rejected)."""
        import pandas as pd

        rows = []
        for r in self.results:
            score = r.gold_score if r.answerable else r.best_score
            rows.append(
                {
                    "query": r.query_id,
                    "user": r.user,
                    "lang": r.lang,
                    "kind": r.kind,
                    "text": r.text,
                    "gold": ",".join(r.gold),
                    "top": r.top_id,
                    "top_score": r.best_score,
                    "gold_rank": r.gold_rank,
                    "gold_score": r.gold_score if r.answerable else math.nan,
                    "ok": bool(score >= self.threshold) == r.answerable,
                }
            )
        return pd.DataFrame(rows).set_index("query")


def _leave_one_user_out(results: Sequence[QueryResult]) -> tuple[float, float]:
    users = list(dict.fromkeys(r.user for r in results))
    accepted = rejected = n_pos = n_neg = 0
    for user in users:
        train = [r for r in results if r.user != user]
        test = [r for r in results if r.user == user]
        t = choose_threshold(
            [r.gold_score for r in train if r.answerable],
            [r.best_score for r in train if not r.answerable],
        )
        pos = _as_scores(r.gold_score for r in test if r.answerable)
        neg = _as_scores(r.best_score for r in test if not r.answerable)
        accepted += int(np.sum(pos >= t))
        rejected += int(np.sum(neg < t))
        n_pos += pos.size
        n_neg += neg.size
    return (
        accepted / n_pos if n_pos else math.nan,
        rejected / n_neg if n_neg else math.nan,
    )


def evaluate_ranker(
    rank: Ranker,
    labelled: LabelledSet | None = None,
    threshold: float | None = None,
    *,
    thresholds: Iterable[float] | None = None,
    name: str = "ranker",
) -> CalibrationReport:
    """Score ``rank`` on the labelled set and choose (or apply) a threshold.

    ``rank(user, query)`` must rank only that user's memories. With ``threshold`` given,
    the report uses it as is (nothing is chosen); otherwise the threshold is chosen from
    ``thresholds`` (default: a 0.001 grid across the observed scores) by
    :func:`choose_threshold`. The report also gives the leave-one-user-out rates, the
    threshold that keeps 90% of answers (:func:`threshold_for_acceptance`), a threshold per
    language and the rates at the article's 0.5.
    """
    labelled = labelled or load_labelled()
    owner = {m.id: m.user for m in labelled.memories}
    results: list[QueryResult] = []
    all_scores: list[float] = []
    for q in labelled.queries:
        pairs = [(str(i), float(s)) for i, s in rank(q.user, q.text)]
        ids = [i for i, _ in pairs]
        if len(set(ids)) != len(ids):
            raise ValueError(f"ranker returned a memory twice for query {q.id}: {ids}")
        for memory_id in ids:
            if owner.get(memory_id) != q.user:
                raise ValueError(
                    f"ranker returned {memory_id!r} for query {q.id} of user {q.user!r}; "
                    "rank only that user's memories"
                )
        pairs.sort(key=lambda p: -p[1])  # stable: equal scores keep the ranker's order
        all_scores.extend(s for _, s in pairs if math.isfinite(s))
        results.append(
            QueryResult(q.id, q.user, q.lang, q.kind, q.text, q.gold, tuple(pairs))
        )
    positive = _as_scores(r.gold_score for r in results if r.answerable)
    negative = _as_scores(r.best_score for r in results if not r.answerable)
    if threshold is None:
        chosen = choose_threshold(positive, negative, thresholds)
        rule = "max balanced accuracy, middle of the best gap"
    else:
        chosen, rule = float(threshold), "given"
    acceptance, rejection = rates_at(positive, negative, chosen)
    acc_article, rej_article = rates_at(positive, negative, ARTICLE_THRESHOLD)
    heldout = _leave_one_user_out(results)
    keep90 = threshold_for_acceptance(positive, 0.9)
    overall = _group("all", results, chosen)
    langs = [lang for lang in LANGUAGES if any(r.lang == lang for r in results)]
    langs += sorted({r.lang for r in results} - set(langs))
    kinds = [k for k in KINDS if any(r.kind == k for r in results)]
    kinds += sorted({r.kind for r in results} - set(kinds))
    return CalibrationReport(
        name=name,
        threshold=chosen,
        threshold_rule=rule,
        recall_at_1=overall.recall_at_1,
        recall_at_3=overall.recall_at_3,
        mrr=overall.mrr,
        acceptance=acceptance,
        rejection=rejection,
        acceptance_at_article=acc_article,
        rejection_at_article=rej_article,
        heldout_acceptance=heldout[0],
        heldout_rejection=heldout[1],
        keep90_threshold=keep90,
        keep90_rejection=rates_at(positive, negative, keep90)[1],
        thresholds_by_language={
            lang: choose_threshold(
                [r.gold_score for r in results if r.lang == lang and r.answerable],
                [r.best_score for r in results if r.lang == lang and not r.answerable],
            )
            for lang in langs
        },
        score_min=min(all_scores) if all_scores else math.nan,
        score_max=max(all_scores) if all_scores else math.nan,
        positive_scores=positive,
        negative_scores=negative,
        by_language={
            lang: _group(lang, [r for r in results if r.lang == lang], chosen) for lang in langs
        },
        by_kind={k: _group(k, [r for r in results if r.kind == k], chosen) for k in kinds},
        results=tuple(results),
        n_memories=len(labelled.memories),
        n_users=len(labelled.users),
    )


def embedding_ranker(
    embed_documents: EmbedDocuments,
    embed_query: EmbedQuery,
    labelled: LabelledSet | None = None,
) -> Ranker:
    """A :data:`Ranker` that ranks a user's memories by cosine similarity.

    Every memory is embedded once, in one ``embed_documents`` call; each query is embedded
    with ``embed_query``. Vectors are L2-normalised here as well, so the score is the cosine
    even if an embedder forgets to.
    """
    labelled = labelled or load_labelled()
    texts = [m.text for m in labelled.memories]
    docs = np.asarray(embed_documents(texts), dtype=np.float32)
    if docs.ndim != 2 or docs.shape[0] != len(texts):
        raise ValueError(
            f"embed_documents returned shape {docs.shape} for {len(texts)} texts; "
            "expected (n_texts, dim)"
        )
    docs = l2_normalise(docs)
    by_user: dict[str, tuple[list[str], np.ndarray]] = {}
    for user in labelled.users:
        idx = [i for i, m in enumerate(labelled.memories) if m.user == user]
        by_user[user] = ([labelled.memories[i].id for i in idx], docs[idx])

    def rank(user: str, query: str) -> list[tuple[str, float]]:
        ids, vectors = by_user[user]
        q = l2_normalise(np.asarray(embed_query(query), dtype=np.float32).reshape(1, -1))[0]
        if q.shape[0] != vectors.shape[1]:
            raise ValueError(f"query vector has {q.shape[0]} dims, documents {vectors.shape[1]}")
        scores = vectors @ q
        order = np.argsort(-scores, kind="stable")
        return [(ids[i], float(scores[i])) for i in order]

    return rank


def evaluate(
    embed_documents: EmbedDocuments,
    embed_query: EmbedQuery,
    labelled: LabelledSet | None = None,
    *,
    threshold: float | None = None,
    thresholds: Iterable[float] | None = None,
    embed_queries: EmbedDocuments | None = None,
    name: str = "embedder",
) -> CalibrationReport:
    """Calibrate an embedder: rank each user's memories by cosine, then choose min_score.

    ``embed_documents(list[str]) -> (n, dim)`` and ``embed_query(str) -> (dim,)``, e.g. the
    two methods of an embedder from :mod:`gya_memory.embeddings`. Query/passage prefixes
    (e5's ``query: `` / ``passage: ``) are the embedder's business. ``embed_queries``, if
    given, embeds all query texts in one batch (faster than one call per query; same
    vectors). ``threshold`` and ``thresholds`` are as in :func:`evaluate_ranker`.
    """
    labelled = labelled or load_labelled()
    if embed_queries is not None:
        texts = list(dict.fromkeys(q.text for q in labelled.queries))
        vectors = np.asarray(embed_queries(texts), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(
                f"embed_queries returned shape {vectors.shape} for {len(texts)} texts"
            )
        cache = dict(zip(texts, vectors, strict=True))
        single = embed_query

        def embed_query(text: str) -> Any:
            return cache[text] if text in cache else single(text)

    rank = embedding_ranker(embed_documents, embed_query, labelled)
    return evaluate_ranker(rank, labelled, threshold, thresholds=thresholds, name=name)


# -- command line -----------------------------------------------------------------------
def calibrate(
    embedder: Embedder | None = None,
    labelled: LabelledSet | None = None,
    *,
    threshold: float | None = None,
) -> CalibrationReport:
    """Evaluate an embedder (default: the configured one, see ``GYA_EMBEDDER``) on the
    labelled set and choose its threshold (or report at ``threshold``)."""
    from .embeddings import get_embedder

    embedder = get_embedder() if embedder is None else embedder
    return evaluate(embedder.embed_documents, embedder.embed_query, labelled,
                    threshold=threshold, name=embedder.name)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gya_memory.calibration``: calibrate an embedder on the labelled set."""
    parser = argparse.ArgumentParser(
        prog="python -m gya_memory.calibration",
        description="Calibrate min_score for an embedder on the labelled set.",
    )
    parser.add_argument("--embedder", choices=("local", "ollama", "openai", "tfidf"),
                        help="which embedder (default: GYA_EMBEDDER, else local)")
    parser.add_argument("--threshold", type=float, help="report at this threshold instead")
    parser.add_argument("--queries", action="store_true", help="also print every query")
    args = parser.parse_args(argv)
    from .embeddings import get_embedder

    report = calibrate(get_embedder(args.embedder), threshold=args.threshold)
    print(report.summary())
    if args.queries:
        import pandas as pd

        with pd.option_context("display.width", 200, "display.max_rows", None):
            print(report.per_query_frame().drop(columns=["user"]).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
