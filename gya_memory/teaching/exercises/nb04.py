"""Self-checks for notebook 04 (semantic retrieval). Pure numpy: no model is called."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gya_memory.teaching.exercises.verdict import UNANSWERED, Verdict, unanswered, verdict
from gya_memory.teaching.exercises.verdict import call as _call





def _vectors(seed: int, n: int, dim: int = 8, unit: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, dim))
    if unit:
        v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def exercise_04_1(answer: Any) -> Verdict:
    """``answer`` is a function ``cosine(a, b) -> float``."""
    if unanswered(answer):
        return verdict("04.1", [UNANSWERED + " (answer = cosine)"])
    if not callable(answer):
        return verdict("04.1", [f"answer should be your function cosine, got {type(answer).__name__}"])
    problems = []
    a, b = _vectors(1, 2)
    cases = [
        ("two random vectors", a, b),
        ("a vector with itself", a, a),
        ("a vector and its opposite", a, -a),
        ("a vector and 3 times another (length must not matter)", a, 3 * b),
        ("two orthogonal vectors", np.array([1.0, 0.0]), np.array([0.0, 2.0])),
    ]
    for label, x, y in cases:
        want = float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))
        got, error = _call(answer, x, y)
        if error:
            return verdict("04.1", [f"{label}: {error}"])
        try:
            got = float(got)
        except (TypeError, ValueError):
            return verdict("04.1", [f"{label}: cosine should return one number, got {got!r}"])
        if not math.isclose(got, want, abs_tol=1e-6):
            hint = ""
            if math.isclose(got, float(x @ y), abs_tol=1e-6):
                hint = " (that is the plain dot product: divide by both lengths)"
            problems.append(f"{label}: expected {want:.4f}, got {got:.4f}{hint}")
    return verdict("04.1", problems, "cosine is right, for vectors of any length")


def _reference_top_k(query: np.ndarray, matrix: np.ndarray, k: int,
                     min_score: float | None) -> list[tuple[int, float]]:
    scores = matrix @ query
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
    return [(i, float(scores[i])) for i in order if min_score is None or scores[i] >= min_score]


def exercise_04_2(answer: Any) -> Verdict:
    """``answer`` is a function ``top_k(query, matrix, k, min_score=None)`` returning
    ``(row index, score)`` pairs, best first."""
    if unanswered(answer):
        return verdict("04.2", [UNANSWERED + " (answer = top_k)"])
    if not callable(answer):
        return verdict("04.2", [f"answer should be your function top_k, got {type(answer).__name__}"])
    matrix = _vectors(2, 12, unit=True)
    query = _vectors(3, 1, unit=True)[0]
    scores = matrix @ query
    cut = float(np.sort(scores)[-2])  # exactly two memories reach it
    cases = [
        ("k=3", (query, matrix, 3), None),
        ("k=1", (query, matrix, 1), None),
        ("k=20, more than the 12 rows", (query, matrix, 20), None),
        ("k=5 with min_score keeping two", (query, matrix, 5, cut), cut),
        ("k=5 with min_score=0.99 (nothing that close)", (query, matrix, 5, 0.99), 0.99),
    ]
    problems = []
    for label, args, min_score in cases:
        want = _reference_top_k(query, matrix, args[2], min_score)
        got, error = _call(answer, *args)
        if error:
            return verdict("04.2", [f"{label}: {error}"])
        try:
            pairs = [(int(i), float(s)) for i, s in got]
        except (TypeError, ValueError):
            return verdict("04.2", [f"{label}: return a list of (row index, score) pairs, "
                                    f"got {got!r:.80}"])
        if [i for i, _ in pairs] != [i for i, _ in want]:
            problems.append(f"{label}: expected rows {[i for i, _ in want]}, "
                            f"got {[i for i, _ in pairs]}")
        elif any(not math.isclose(s, w, abs_tol=1e-5) for (_, s), (_, w) in zip(pairs, want)):
            problems.append(f"{label}: the right rows, but the scores should be their cosines "
                            "with the query (matrix @ query)")
    return verdict("04.2", problems, "a brute-force search: score all, sort, keep k, drop the low ones")


def exercise_04_3(answer: Any) -> Verdict:
    """``answer`` is a function ``separable(right, wrong) -> bool``: is there a threshold
    that keeps every ``right`` score (score >= t) and drops every ``wrong`` one (score < t)?"""
    if unanswered(answer):
        return verdict("04.3", [UNANSWERED + " (answer = separable)"])
    if not callable(answer):
        return verdict("04.3", [f"answer should be your function separable, got {type(answer).__name__}"])
    cases = [
        ("bge-m3-like: right 0.60–0.78, wrong 0.37", [0.753, 0.783, 0.704, 0.604], [0.373], True),
        ("overlap: one wrong score above a right one", [0.892, 0.886, 0.907], [0.894], False),
        ("a tie: wrong equals the lowest right score", [0.9, 0.8], [0.8], False),
        ("just apart", [0.9, 0.801], [0.8, 0.5], True),
        ("no wrong scores at all", [0.9, 0.7], [], True),
    ]
    problems = []
    for label, right, wrong, want in cases:
        got, error = _call(answer, list(right), list(wrong))
        if error:
            return verdict("04.3", [f"{label}: {error}"])
        if not isinstance(got, (bool, np.bool_)):
            return verdict("04.3", [f"{label}: separable should return True or False, got {got!r}"])
        if bool(got) != want:
            problems.append(f"{label} (right={right}, wrong={wrong}): expected {want}, got {bool(got)}")
    return verdict("04.3", problems, "one threshold works only if every right score beats every wrong one")
