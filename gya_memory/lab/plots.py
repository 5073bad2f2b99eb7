"""Plots for the notebooks. Chinese labels render with the CJK font that mplfonts ships.

:func:`gya_memory.teaching.display.use_cjk_font` (re-exported here) registers the CJK font first.

Three figures explain a similarity threshold (相似度阈值) such as ``min_score``:

- :func:`score_bars`           one query's candidates as bars, hits and rejections coloured
- :func:`score_heatmap`        a query × memory grid of scores, cells over the threshold outlined
- :func:`score_distributions`  scores of true matches against no-answer queries, with the
                               acceptance and rejection rates at the threshold

Each returns a :class:`matplotlib.figure.Figure` and never calls ``plt.show()``. The figure is
built with ``Figure(...)``, not ``pyplot``, so pyplot never shows it by itself: in a notebook,
make the call the last expression of the cell and Jupyter shows it exactly once::

    score_bars(query, candidates, threshold=0.86)

(``fig = score_bars(...)`` on one line and ``fig`` on the last line works too.) Outside
Jupyter, save it with ``fig.savefig("scores.png")``.

Importing this module does no work: matplotlib is imported inside the functions.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from gya_memory.teaching.display import shorten
from gya_memory.teaching.display import use_cjk_font
from gya_memory.teaching.display import width

if TYPE_CHECKING:  # only for type checkers: importing matplotlib at runtime is deferred
    import numpy as np
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

COLORS: dict[str, str] = {
    "hit": "#2a9d57",        # green: at or above the threshold, returned
    "rejected": "#a8a8a8",   # grey: below the threshold, filtered out
    "threshold": "#d1495b",  # red: the calibrated threshold
    "other": "#555555",      # dark grey, dashed: other thresholds for comparison
    "positive": "#2f6db5",   # blue: gold matches
    "negative": "#e08a2c",   # orange: best score of no-answer queries
}
"""The palette shared by every figure here."""

LABEL_WIDTH = 28
"""Labels longer than this (in display columns, a Chinese character counts 2) end in "…"."""

_FONT_SIZE = 9


# -- helpers ----------------------------------------------------------------------------
class ScoredText(Protocol):
    """Anything with ``text`` and ``score``, e.g. a :class:`gya_memory.semantic.memory.Hit`."""

    text: str
    score: float


def wrap_label(text: str, columns: int = LABEL_WIDTH, lines: int = 2) -> str:
    """``text`` over at most ``lines`` lines of ``columns`` display columns, "…" if cut.

    Long labels (a whole question) stay readable instead of losing their end.

    >>> wrap_label("What does the user want to give up?", 24)
    'What does the user want\\nto give up?'
    >>> wrap_label("我最近饮食上有什么要注意的吗？", 20)
    '我最近饮食上有什么要\\n注意的吗？'
    """
    words = " ".join(str(text).split())
    out: list[str] = []
    rest = words
    while rest and len(out) < lines:
        if width(rest) <= columns:
            out.append(rest)
            rest = ""
            break
        if len(out) == lines - 1:  # the last line: cut it
            out.append(shorten(rest, columns))
            rest = ""
            break
        used, cut = 0, 0
        for k, ch in enumerate(rest):
            used += width(ch)
            if used > columns:
                break
            cut = k + 1
        space = rest.rfind(" ", 0, cut + 1)
        if space > 0 and not any(width(c) == 2 for c in rest[space:cut]):
            cut = space  # break at a space when the line ends inside a word
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return "\n".join(out)


def _fmt(value: float) -> str:
    """A threshold as written by a person: 0.86, 0.5, 0.861 (at most 3 decimals)."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _pct(rate: float) -> str:
    return "n/a" if math.isnan(rate) else f"{rate:.0%}"


def _activate_notebook_display() -> None:
    """Inside IPython, load the configured matplotlib backend once.

    The inline backend registers IPython's PNG formatter for ``Figure`` objects when it is
    loaded, which pyplot normally does on its first figure. The figures here bypass pyplot,
    so without this a notebook that never touched pyplot would show only the text
    ``<Figure size ... with 1 Axes>`` instead of the picture.
    """
    ipython = sys.modules.get("IPython")
    if ipython is None or ipython.get_ipython() is None:
        return
    import matplotlib
    from matplotlib.backends import backend_registry

    backend = matplotlib.get_backend(auto_select=False)
    if backend:  # None: nothing chosen yet (plain terminal IPython), nothing to prepare
        backend_registry.load_backend_module(backend)


def _new_figure(figsize: tuple[float, float]) -> Figure:
    """A figure with the CJK font and constrained layout, outside pyplot's registry."""
    _activate_notebook_display()
    use_cjk_font()
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def _style(ax: Axes) -> None:
    ax.tick_params(labelsize=_FONT_SIZE)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _as_pair(candidate: tuple[str, float] | ScoredText) -> tuple[str, float]:
    if hasattr(candidate, "text") and hasattr(candidate, "score"):
        text, score = candidate.text, candidate.score
    else:
        text, score = candidate
    return str(text), float(score)


# -- (a) one query's candidates ---------------------------------------------------------
def score_bars(
    query: str,
    candidates: Sequence[tuple[str, float] | ScoredText],
    threshold: float,
    *,
    title: str | None = None,
    other_thresholds: Mapping[str, float] | None = None,
    figsize: tuple[float, float] | None = None,
) -> Figure:
    """One query's candidate memories as horizontal bars, best on top.

    Bars at or above ``threshold`` (hits, 命中) are green, the others (rejected, 拒绝) grey;
    each score is printed at the end of its bar with three decimals. The threshold is a solid
    red line labelled ``min_score <threshold>``; ``other_thresholds`` adds dashed lines for
    comparison, e.g. ``{"article's 0.5": 0.5}`` (the key is the legend label).

    The x axis does not start at 0: it spans the scores and every threshold line with some
    room, so compressed scores (0.84 against 0.89) stay readable while a 0.5 line stays visible.

    Args:
        query: the question, shown in the default title.
        candidates: ``(memory text, score)`` pairs (or objects with ``text`` and ``score``,
            such as ``SemanticMemory.candidates(...)``), in any order. Long texts are shortened.
        threshold: the ``min_score`` that separates hits from rejections.
        title: replaces the default title.
        other_thresholds: extra labelled thresholds drawn dashed.
        figsize: default ``(7, 1.6 + 0.4 per candidate)``, at least 3 inches high.

    Returns:
        The figure (one Axes). Nothing is shown: leave it as the cell's last expression.
    """
    pairs = sorted((_as_pair(c) for c in candidates), key=lambda p: p[1], reverse=True)
    others = dict(other_thresholds or {})
    n = len(pairs)
    fig = _new_figure(figsize or (7.0, min(max(3.0, 1.6 + 0.4 * n), 8.0)))
    ax = fig.add_subplot()
    _style(ax)

    scores = [s for _, s in pairs]
    colors = [COLORS["hit"] if s >= threshold else COLORS["rejected"] for s in scores]
    y = list(range(n))
    bars = ax.barh(y, scores, color=colors, height=0.6)
    ax.bar_label(bars, fmt="%.3f", padding=3, fontsize=_FONT_SIZE)
    ax.set_yticks(y, [shorten(t) for t, _ in pairs])
    ax.invert_yaxis()  # best on top
    if n == 0:
        ax.text(0.5, 0.5, "no candidates 无候选记忆", transform=ax.transAxes,
                ha="center", va="center", fontsize=_FONT_SIZE, color=COLORS["other"],
                bbox=dict(fc="white", ec="none"))

    ax.axvline(threshold, color=COLORS["threshold"], lw=1.8, label=f"min_score {_fmt(threshold)}")
    for label, value in others.items():
        ax.axvline(value, color=COLORS["other"], lw=1.2, ls="--", label=label)

    values = [*scores, threshold, *others.values()]
    low, high = min(values), max(values)
    span = high - low
    left = low - max(0.03, 0.12 * span)            # the lowest bar keeps a visible length
    right = max([*scores, low]) + max(0.03, 0.16 * span)  # room for the score text
    right = max(right, high + max(0.01, 0.04 * span))   # and for a threshold above every score
    if low >= 0 > left:
        left = 0.0
    ax.set_xlim(left, right)
    note = f" (the axis starts at {left:.2f})" if left > 0 else ""
    ax.set_xlabel(f"相似度 score{note}", fontsize=_FONT_SIZE)

    from matplotlib.patches import Patch

    handles = [
        Patch(color=COLORS["hit"], label=f"hit 命中 (≥ {_fmt(threshold)})"),
        Patch(color=COLORS["rejected"], label=f"rejected 拒绝 (< {_fmt(threshold)})"),
        *ax.get_legend_handles_labels()[0],
    ]
    ax.legend(handles=handles, fontsize=_FONT_SIZE - 1, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), frameon=False)
    hits = sum(s >= threshold for s in scores)
    ax.set_title(title if title is not None else
                 f"「{shorten(query, 40)}」: {n} candidates, {hits} at or above min_score 达到阈值",
                 fontsize=_FONT_SIZE + 1)
    return fig


# -- (b) query × memory -----------------------------------------------------------------
def score_heatmap(
    queries: Sequence[str],
    memories: Sequence[str],
    scores: np.ndarray,
    *,
    threshold: float | None = None,
    title: str | None = None,
    figsize: tuple[float, float] | None = None,
) -> Figure:
    """Scores of every query (rows) against every memory (columns) as an annotated heatmap.

    Each cell shows its score with two decimals. The colour scale spans the scores shown, so
    small differences between compressed scores stay visible; the colour bar marks the
    threshold. With ``threshold``, cells at or above it are outlined in red (what
    ``min_score`` would return).

    Args:
        queries: row labels (shortened when long).
        memories: column labels (shortened and rotated).
        scores: array of shape ``(len(queries), len(memories))``.
        threshold: outline cells ``>= threshold``; ``None`` outlines nothing.
        title: replaces the default title.
        figsize: default 7 wide, height growing with the number of queries.

    Returns:
        The figure (the heatmap Axes and its colour bar). Nothing is shown.
    """
    import numpy as np

    grid = np.asarray(scores, dtype=float)
    if grid.shape != (len(queries), len(memories)):
        raise ValueError(f"scores has shape {grid.shape}, expected "
                         f"({len(queries)}, {len(memories)}) = (queries, memories)")
    rows, cols = grid.shape
    fig = _new_figure(figsize or (7.0, min(max(3.0, 1.9 + 0.5 * rows), 9.0)))
    ax = fig.add_subplot()
    ax.tick_params(labelsize=_FONT_SIZE, length=0)

    finite = grid[np.isfinite(grid)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if vmax - vmin < 1e-9:
        vmin, vmax = vmin - 0.01, vmax + 0.01
    image = ax.imshow(grid, cmap="YlGnBu", vmin=vmin, vmax=vmax, aspect="auto")
    colorbar = fig.colorbar(image, ax=ax, shrink=0.9, pad=0.02)
    colorbar.set_label("相似度 score", fontsize=_FONT_SIZE)
    colorbar.ax.tick_params(labelsize=_FONT_SIZE - 1)

    for i in range(rows):
        for j in range(cols):
            value = grid[i, j]
            if not np.isfinite(value):
                continue
            dark = (value - vmin) / (vmax - vmin) > 0.55  # dark cells get white text
            ax.text(j, i, f"{value:.2f}", ha="center", va="center",
                    fontsize=_FONT_SIZE - (1 if cols > 6 else 0),
                    color="white" if dark else "black")

    ax.set_xticks(range(cols), [shorten(m, 20) for m in memories],
                  rotation=30, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(rows), [wrap_label(q, 24) for q in queries])  # two lines, not cut short
    ax.set_xticks(np.arange(cols + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(rows + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", lw=1.5)
    ax.tick_params(which="minor", length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)

    if threshold is not None:
        from matplotlib.patches import Rectangle

        for i, j in zip(*np.nonzero(grid >= threshold)):
            box = Rectangle((j - 0.46, i - 0.44), 0.92, 0.88, fill=False,
                            edgecolor=COLORS["threshold"], lw=2.0, gid="over-threshold")
            ax.add_patch(box)
        if vmin <= threshold <= vmax:
            colorbar.ax.axhline(threshold, color=COLORS["threshold"], lw=2.0)
        kept = int(np.sum(grid >= threshold))
        note = f"red boxes 红框: ≥ min_score {_fmt(threshold)} ({kept} of {grid.size})"
    else:
        note = None
    ax.set_title(title if title is not None else "query × memory similarity 查询 × 记忆 相似度",
                 fontsize=_FONT_SIZE + 1)
    if note:
        ax.set_xlabel(note, fontsize=_FONT_SIZE, color=COLORS["threshold"])
    return fig


# -- (c) true matches against no-answer queries -----------------------------------------
def score_distributions(
    positive: Sequence[float],
    negative: Sequence[float],
    threshold: float,
    *,
    labels: tuple[str, str] = ("gold matches 正确答案", "no-answer best 无答案最高分"),
    extra_thresholds: Mapping[str, float] | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = (7.0, 3.8),
) -> Figure:
    """Overlaid histograms (shared bins) of two score groups, with the threshold.

    ``positive`` are the scores of true matches (the gold memory of answerable queries);
    ``negative`` the best score of queries that have no answer. A threshold should keep the
    first and drop the second. The threshold is a red line with the two rates written beside
    it: acceptance (接受, share of ``positive >= threshold``) on its right, rejection (拒绝,
    share of ``negative < threshold``) on its left. ``extra_thresholds`` are dashed lines
    whose legend label carries their own rates, e.g. ``{"article's 0.5": 0.5}``.

    ``nan`` or ``-inf`` stands for "nothing returned": it counts as rejected but cannot be
    drawn; the legend says how many were left out.

    Args:
        positive: scores that should be accepted.
        negative: scores that should be rejected.
        threshold: the calibrated ``min_score``.
        labels: legend labels of the two groups.
        extra_thresholds: labelled thresholds for comparison.
        title: replaces the default title.
        figsize: the figure size in inches.

    Returns:
        The figure (one Axes). Nothing is shown.
    """
    import numpy as np

    from gya_memory.lab.scoring import rates_at

    def clean(values: Sequence[float]) -> np.ndarray:
        arr = np.asarray(list(values), dtype=float).reshape(-1)
        return np.where(np.isnan(arr), -np.inf, arr)

    pos, neg = clean(positive), clean(negative)

    def rates(t: float) -> tuple[float, float]:
        return rates_at(pos, neg, t)

    extras = dict(extra_thresholds or {})
    fig = _new_figure(figsize)
    ax = fig.add_subplot()
    _style(ax)

    drawn = [a[np.isfinite(a)] for a in (pos, neg)]
    data = np.concatenate(drawn)
    if data.size:
        data_low, data_high = float(data.min()), float(data.max())
    else:
        data_low, data_high = threshold - 0.05, threshold + 0.05
    if data_high - data_low < 1e-6:
        data_low, data_high = data_low - 0.01, data_high + 0.01
    n_bins = int(np.clip(2 * np.sqrt(max(data.size, 1)), 10, 40))
    bins = np.linspace(data_low, data_high, n_bins + 1)
    for values, full, label, key in zip(drawn, (pos, neg), labels, ("positive", "negative")):
        missing = full.size - values.size
        note = f", {missing} with no score, not drawn" if missing else ""
        ax.hist(values, bins=bins, color=COLORS[key], alpha=0.55, edgecolor=COLORS[key],
                linewidth=0.8, label=f"{label} (n={full.size}{note})")

    # The x axis spans the scores and the threshold. An extra threshold far from the scores
    # (the article's 0.5 against scores near 0.85) would squash the histograms into a corner,
    # so it is marked at the edge of the axis instead of drawn to scale.
    data_span = data_high - data_low
    low, high = min(data_low, threshold), max(data_high, threshold)
    near = {k: v for k, v in extras.items()
            if data_low - 0.5 * data_span <= v <= data_high + 0.5 * data_span}
    for value in near.values():
        low, high = min(low, value), max(high, value)
    pad = 0.06 * (high - low)
    ax.set_xlim(low - pad, high + pad)

    ax.axvline(threshold, color=COLORS["threshold"], lw=2.0, label=f"min_score {_fmt(threshold)}")
    for label, value in extras.items():
        acc, rej = rates(value)
        text = f"{label}: accepts {_pct(acc)}, rejects {_pct(rej)}"
        if label in near:
            ax.axvline(value, color=COLORS["other"], lw=1.2, ls="--", label=text)
            continue
        side = "left" if value < low else "right"
        ax.plot([], [], color=COLORS["other"], lw=1.2, ls="--",
                label=f"{text} (off the axis, {side})")
        ax.annotate(f"← {label}" if side == "left" else f"{label} →",
                    xy=(0.01 if side == "left" else 0.99, 0.5), xycoords="axes fraction",
                    ha=side, va="center", fontsize=_FONT_SIZE - 1, color=COLORS["other"],
                    gid="off-axis-threshold")

    top = ax.get_ylim()[1]
    ax.set_ylim(0, top * 1.45)  # headroom for the rates written next to the line
    acceptance, rejection = rates(threshold)
    x_low, x_high = ax.get_xlim()
    where = (threshold - x_low) / (x_high - x_low)
    # Rejection is written left of the line, acceptance right of it; near an edge of the
    # axis both go on the roomy side, one under the other.
    left = (-4, 0) if where >= 0.35 else (4, -26)
    right = (4, 0) if where <= 0.65 else (-4, -26)
    common = dict(xy=(threshold, top * 1.38), textcoords="offset points", va="top",
                  fontsize=_FONT_SIZE,
                  bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.85))
    ax.annotate(f"accepts 接受 {_pct(acceptance)} →\n{labels[0]}", xytext=right,
                ha="left" if right[0] > 0 else "right", color=COLORS["positive"],
                gid="acceptance", **common)
    ax.annotate(f"← rejects 拒绝 {_pct(rejection)}\n{labels[1]}", xytext=left,
                ha="right" if left[0] < 0 else "left", color=COLORS["negative"],
                gid="rejection", **common)

    ax.set_xlabel("相似度 score", fontsize=_FONT_SIZE)
    ax.set_ylabel("queries 查询数", fontsize=_FONT_SIZE)
    ax.yaxis.get_major_locator().set_params(integer=True)
    fig.legend(fontsize=_FONT_SIZE - 1, loc="outside lower center", ncols=2, frameon=False)
    ax.set_title(title if title is not None else
                 f"Can one threshold separate them? 一个阈值能分开吗？ (min_score {_fmt(threshold)})",
                 fontsize=_FONT_SIZE + 1)
    return fig
