"""Worked solutions for notebook 04 (semantic retrieval). Each returns what its check takes."""

from __future__ import annotations

import numpy as np


def exercise_04_1():
    def cosine(a, b):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        return float(np.sum(a * b) / (np.sqrt(np.sum(a * a)) * np.sqrt(np.sum(b * b))))

    return cosine


def exercise_04_2():
    def top_k(query, matrix, k, min_score=None):
        scores = np.asarray(matrix) @ np.asarray(query)  # cosine, for unit vectors
        best = np.argsort(-scores, kind="stable")[:k]     # best first; ties: lower row first
        return [(int(i), float(scores[i])) for i in best
                if min_score is None or scores[i] >= min_score]

    return top_k


def exercise_04_3():
    def separable(right, wrong):
        # a threshold t with every right >= t and every wrong < t exists
        # exactly when the lowest right score beats the highest wrong one
        return not wrong or min(right) > max(wrong)

    return separable
