"""Threshold maths: the acceptance and rejection rates at a threshold, and choosing one.

>>> rates_at([0.9, 0.8, 0.6], [0.7, 0.5], 0.75)
(0.6666666666666666, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

ARTICLE_THRESHOLD = 0.5
"""The article's ``min_score`` (measured with bge-m3)."""


# -- threshold maths --------------------------------------------------------------------
def as_scores(values: Iterable[float]) -> np.ndarray:
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
    pos, neg = as_scores(positive), as_scores(negative)
    acceptance = float(np.mean(pos >= threshold)) if pos.size else math.nan
    rejection = float(np.mean(neg < threshold)) if neg.size else math.nan
    return acceptance, rejection


def first_rank(ranking: Iterable[tuple[str, float]], wanted: Iterable[str]) -> int | None:
    """1-based rank of the first id in ``wanted`` in a best-first ``(id, score)`` ranking;
    ``None`` if none of them is there.

    >>> first_rank([("a", 0.9), ("b", 0.8)], {"b"}), first_rank([("a", 0.9)], {"z"})
    (2, None)
    """
    wanted = set(wanted)
    return next((rank for rank, (memory_id, _) in enumerate(ranking, start=1)
                 if memory_id in wanted), None)


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
    pos, neg = as_scores(positive), as_scores(negative)
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
    pos = np.sort(as_scores(positive))[::-1]
    if pos.size == 0:
        return 0.0
    needed = math.ceil(round(target * pos.size, 9))  # keep at least this many positives
    score = float(pos[needed - 1])
    if not math.isfinite(score):
        return -math.inf
    step = 10.0**-decimals
    return round(math.floor(round(score / step, 6)) * step, decimals)
