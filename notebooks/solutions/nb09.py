"""Solutions to the exercises of notebook 09, evaluating memory."""

from __future__ import annotations


def _first_rank(ranking, relevant):
    """1-based rank of the first relevant id, or None when none is ranked."""
    return next((i for i, memory_id in enumerate(ranking, 1) if memory_id in relevant), None)


def exercise_09_1():
    def recall_at_k(results, k):
        hits = [any(m in relevant for m in ranking[:k]) for ranking, relevant in results]
        return sum(hits) / len(hits)

    return recall_at_k


def exercise_09_2():
    def mrr(results):
        ranks = [_first_rank(ranking, relevant) for ranking, relevant in results]
        return sum(1 / r if r else 0.0 for r in ranks) / len(ranks)

    return mrr


def exercise_09_3():
    def false_hit_rate(best_scores, threshold):
        hits = [s is not None and s >= threshold for s in best_scores]
        return sum(hits) / len(hits)

    return false_hit_rate


def exercise_09_4():
    return "b"
