"""Self-checks for notebook 09, evaluating memory. Pure Python on small hand-made cases: no
model, no stored results (so they hold whatever a new benchmark run measures)."""

from __future__ import annotations

import math
from typing import Any

from gya_memory.teaching.exercises.verdict import UNANSWERED, Verdict, unanswered, verdict
from gya_memory.teaching.exercises.verdict import call as _call


# Four questions: (the memory ids ranked best first, the relevant ids). The relevant memory
# is 1st, 2nd, 4th, and missing (the user's store was empty). The fifth has two relevant ids.
CASES = [
    (["m1", "m2", "m3"], {"m1"}),
    (["m3", "m1", "m2"], {"m1"}),
    (["m4", "m5", "m6", "m1"], {"m1"}),
    ([], {"m1"}),
    (["m3", "m2", "m1"], {"m2", "m1"}),
]




def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _first_rank(ranking: list[str], relevant: set[str]) -> int | None:
    return next((i for i, m in enumerate(ranking, 1) if m in relevant), None)


def _expected_recall(results: list, k: int) -> float:
    ranks = [_first_rank(r, rel) for r, rel in results]
    return sum(1 for x in ranks if x is not None and x <= k) / len(results)


def _expected_mrr(results: list) -> float:
    ranks = [_first_rank(r, rel) for r, rel in results]
    return sum(1 / x if x else 0.0 for x in ranks) / len(results)


def exercise_09_1(answer: Any) -> Verdict:
    """``recall_at_k(results, k)``: the share of questions with a relevant id in the top k."""
    if unanswered(answer):
        return verdict("09.1", [UNANSWERED])
    if not callable(answer):
        return verdict("09.1", ["answer should be your function recall_at_k (the name, no "
                                "brackets)"])
    problems: list[str] = []
    for results, k, note in [
        (CASES[:4], 1, "only the first question has its relevant memory at rank 1"),
        (CASES[:4], 3, "ranks 1 and 2 are in the top 3; rank 4 is not, and an empty ranking "
                       "never is"),
        (CASES[:4], 10, "an empty ranking counts as a miss, not as a skipped question"),
        (CASES[4:], 1, "with two relevant ids, either one in the top k counts"),
        (CASES[4:], 2, "with two relevant ids, either one in the top k counts"),
    ]:
        got, error = _call(answer, results, k)
        if error:
            return verdict("09.1", [error])
        want = _expected_recall(results, k)
        if not _number(got):
            return verdict("09.1", [f"return a number (a share from 0 to 1), got {got!r}"])
        if not math.isclose(got, want, abs_tol=1e-9):
            hint = note
            if math.isclose(got, _expected_recall(results, k + 1), abs_tol=1e-9) and want != got:
                hint = "you count the first k + 1 memories: ranking[:k] is the top k"
            problems.append(f"{len(results)} question(s), k={k}: expected {want:g}, got "
                            f"{got!r} ({hint})")
    return verdict("09.1", problems, "recall@k on every small case, including an empty "
                   "ranking and two relevant memories")


def exercise_09_2(answer: Any) -> Verdict:
    """``mrr(results)``: the mean of 1/rank of the first relevant id (0 when it is missing)."""
    if unanswered(answer):
        return verdict("09.2", [UNANSWERED])
    if not callable(answer):
        return verdict("09.2", ["answer should be your function mrr (the name, no brackets)"])
    problems: list[str] = []
    for results in (CASES[:1], CASES[:2], CASES[:4], CASES):
        got, error = _call(answer, results)
        if error:
            return verdict("09.2", [error])
        if not _number(got):
            return verdict("09.2", [f"return a number, got {got!r}"])
        want = _expected_mrr(results)
        if math.isclose(got, want, abs_tol=1e-9):
            continue
        ranks = [_first_rank(r, rel) for r, rel in results]
        found = [x for x in ranks if x]
        if found and math.isclose(got, sum(1 / x for x in found) / len(found), abs_tol=1e-9):
            hint = "you left out the question whose relevant memory is not ranked: it counts 0"
        elif math.isclose(got, sum(1 / (x + 1) if x else 0.0 for x in ranks) / len(results),
                          abs_tol=1e-9):
            hint = "ranks start at 1: the first memory has reciprocal rank 1/1, not 1/2"
        else:
            hint = "use the rank of the first relevant id, counted from 1"
        problems.append(f"{len(results)} question(s) (first relevant ranks {ranks}): expected "
                        f"{want:.4f}, got {got!r}: {hint}")
    return verdict("09.2", problems, "MRR on every small case")


def exercise_09_3(answer: Any) -> Verdict:
    """``false_hit_rate(best_scores, threshold)``: share of no-hit questions where a memory
    passes, i.e. the best score is at or above the threshold (``None``: nothing stored)."""
    if unanswered(answer):
        return verdict("09.3", [UNANSWERED])
    if not callable(answer):
        return verdict("09.3", ["answer should be your function false_hit_rate (the name, no "
                                "brackets)"])
    problems: list[str] = []
    for scores, threshold, want, note in [
        ([0.91, 0.86, 0.80, 0.79], 0.85, 0.5, "two of four best scores reach 0.85"),
        ([0.91, 0.86, 0.80, 0.79], 0.86, 0.5, "a score equal to the threshold passes (>=)"),
        ([0.91, 0.86, 0.80, 0.79], 0.95, 0.0, "nothing reaches 0.95"),
        ([0.88, None, 0.70], 0.8, 1 / 3, "None (no memory stored) is never a false hit, but "
                                          "the question still counts"),
    ]:
        got, error = _call(answer, list(scores), threshold)
        if error:
            return verdict("09.3", [f"{error} ({note})"])
        if not _number(got) or not math.isclose(got, want, abs_tol=1e-9):
            problems.append(f"scores {scores}, threshold {threshold}: expected {want:.3g}, got "
                            f"{got!r} ({note})")
    return verdict("09.3", problems, "the false-hit rate, boundaries included")


CHOICES = {
    "a": "the test split is too small to sweep",
    "b": "a threshold picked on the test split fits those questions, so the test score no "
         "longer predicts questions the system has not seen",
    "c": "the judge gives different P(yes) values on the test split",
}


def exercise_09_4(answer: Any) -> Verdict:
    """Why ``judge_min`` is not chosen on the test split: 'a', 'b' or 'c'."""
    if unanswered(answer):
        return verdict("09.4", [UNANSWERED])
    letter = str(answer).strip().lower().strip("()")
    if letter not in CHOICES:
        return verdict("09.4", [f"answer with 'a', 'b' or 'c', got {answer!r}"])
    if letter == "a":
        return verdict("09.4", ["the sweep runs on any split; the tune split is even smaller. "
                                "Think about what the test score is for"])
    if letter == "c":
        return verdict("09.4", ["P(yes) for a pair is the same whichever split it is in. "
                                "Think about what choosing does to the test score"])
    return verdict("09.4", [], "choose on tune, report on test: once a test score has chosen "
                   "something, it is a tune score")
