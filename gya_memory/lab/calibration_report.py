"""What a calibration run reports: per-query results, per-group metrics, the chosen threshold."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gya_memory.lab.scoring import ARTICLE_THRESHOLD, as_scores, choose_threshold, first_rank, rates_at

if TYPE_CHECKING:  # pandas is imported only when a table is asked for
    import pandas as pd


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
        return first_rank(self.ranking, self.gold)

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


def group_metrics(name: str, results: Sequence[QueryResult], threshold: float) -> GroupMetrics:
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

        overall = group_metrics("all", self.results, self.threshold)
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


def leave_one_user_out(results: Sequence[QueryResult]) -> tuple[float, float]:
    users = list(dict.fromkeys(r.user for r in results))
    accepted = rejected = n_pos = n_neg = 0
    for user in users:
        train = [r for r in results if r.user != user]
        test = [r for r in results if r.user == user]
        t = choose_threshold(
            [r.gold_score for r in train if r.answerable],
            [r.best_score for r in train if not r.answerable],
        )
        pos = as_scores(r.gold_score for r in test if r.answerable)
        neg = as_scores(r.best_score for r in test if not r.answerable)
        accepted += int(np.sum(pos >= t))
        rejected += int(np.sum(neg < t))
        n_pos += pos.size
        n_neg += neg.size
    return (
        accepted / n_pos if n_pos else math.nan,
        rejected / n_neg if n_neg else math.nan,
    )
