"""Tests for gya_memory.lab.plots: what each figure holds, that Chinese renders, lazy imports."""

from __future__ import annotations

import io
import subprocess
import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import same_color  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gya_memory.lab import plots  # noqa: E402
from gya_memory.lab.plots import COLORS, score_bars, score_distributions, score_heatmap
from gya_memory.teaching.display import shorten
from tests.conftest import PYTHON, ROOT, child_env  # noqa: E402

QUERY = "用户想戒掉什么？"
MEMORIES = [
    "用户叫张三",
    "最近在戒咖啡，想少喝一点",
    "用户是一名后端工程师",
    "用户的博客主要写 AI Agent 的工程实践",
]
SCORES = [0.861, 0.887, 0.842, 0.875]
CANDIDATES = list(zip(MEMORIES, SCORES))
ARTICLE = {"article's 0.5": 0.5}


def render(fig: Figure) -> bytes:
    """The figure as PNG; any warning (a missing CJK glyph, say) is an error."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.savefig(buf, format="png", dpi=60)
    return buf.getvalue()


def lines_labelled(ax, prefix: str) -> list:
    return [ln for ln in ax.lines if str(ln.get_label()).startswith(prefix)]


# -- import -----------------------------------------------------------------------------
def test_import_does_not_import_matplotlib() -> None:
    code = ("import sys, gya_memory.lab.plots; "
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported'; print('ok')")
    out = subprocess.run([PYTHON, "-c", code], env=child_env(), capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# -- labels -----------------------------------------------------------------------------
def test_shorten() -> None:
    assert shorten("用户叫张三") == "用户叫张三"
    long = shorten(MEMORIES[3])
    assert long.endswith("…") and long.startswith("用户的博客")
    assert sum(2 if "\u4e00" <= ch <= "\u9fff" else 1 for ch in long) <= plots.LABEL_WIDTH
    assert shorten("a" * 40) == "a" * 27 + "…"
    assert shorten("two\nlines  here") == "two lines here"


# -- (a) bars ---------------------------------------------------------------------------
def test_score_bars_bars_colours_and_order() -> None:
    fig = score_bars(QUERY, CANDIDATES, 0.86, other_thresholds=ARTICLE)
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    bars = list(ax.containers[0])
    assert len(bars) == 4
    widths = [b.get_width() for b in bars]
    assert widths == sorted(SCORES, reverse=True)
    # best on top: the first bar sits highest on screen
    assert ax.yaxis_inverted() and bars[0].get_y() < bars[1].get_y()
    hit = [same_color(b.get_facecolor(), COLORS["hit"]) for b in bars]
    rejected = [same_color(b.get_facecolor(), COLORS["rejected"]) for b in bars]
    assert hit == [w >= 0.86 for w in widths] == [True, True, True, False]
    assert rejected == [not h for h in hit]
    # scores printed at the bar ends with three decimals
    printed = [t.get_text() for t in ax.texts]
    assert printed == ["0.887", "0.875", "0.861", "0.842"]
    # labels: memory texts, the long one shortened
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "最近在戒咖啡，想少喝一点"
    assert labels[1].endswith("…") and labels[1] == shorten(MEMORIES[3])


def test_score_bars_threshold_lines_and_limits() -> None:
    fig = score_bars(QUERY, CANDIDATES, 0.86, other_thresholds=ARTICLE)
    ax = fig.axes[0]
    (line,) = lines_labelled(ax, "min_score")
    assert line.get_label() == "min_score 0.86"
    assert list(line.get_xdata()) == [0.86, 0.86]
    (article,) = lines_labelled(ax, "article's")
    assert article.get_linestyle() == "--"
    left, right = ax.get_xlim()
    assert left < 0.5 and right > 0.887  # the 0.5 line is on the axis
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("min_score 0.86" in t for t in legend) and "article's 0.5" in legend

    # without the 0.5 line the axis zooms in on the compressed scores
    left, right = score_bars(QUERY, CANDIDATES, 0.86).axes[0].get_xlim()
    assert 0.7 < left < 0.842 and 0.887 < right < 1.0


def test_score_bars_accepts_hits_and_empty() -> None:
    class Hit:
        def __init__(self, text: str, score: float) -> None:
            self.text, self.score = text, score

    fig = score_bars(QUERY, [Hit(t, s) for t, s in CANDIDATES], 0.86, title="自定义 title")
    assert [b.get_width() for b in fig.axes[0].containers[0]][0] == 0.887
    assert fig.axes[0].get_title() == "自定义 title"
    empty = score_bars(QUERY, [], 0.86)
    assert len(empty.axes[0].containers[0]) == 0
    render(empty)


# -- (b) heatmap ------------------------------------------------------------------------
QUERIES = [QUERY, "用户做什么工作？", "What is the user's name? Asked in a rather long way"]
GRID = np.array([
    [0.861, 0.887, 0.842, 0.875],
    [0.845, 0.830, 0.902, 0.871],
    [0.880, 0.790, 0.810, 0.800],
])


def test_score_heatmap_cells_and_outlines() -> None:
    fig = score_heatmap(QUERIES, MEMORIES, GRID, threshold=0.86)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    (image,) = ax.images
    assert image.get_array().shape == (3, 4)
    cells = [t.get_text() for t in ax.texts]
    assert len(cells) == 12 and cells[:4] == ["0.86", "0.89", "0.84", "0.88"]
    outlined = [p for p in ax.patches if p.get_gid() == "over-threshold"]
    assert len(outlined) == int((GRID >= 0.86).sum()) == 6
    assert all(same_color(p.get_edgecolor(), COLORS["threshold"]) for p in outlined)
    corners = {(round(p.get_x() + p.get_width() / 2), round(p.get_y() + p.get_height() / 2))
               for p in outlined}
    rows, cols = np.nonzero(GRID >= 0.86)
    assert corners == set(zip(cols.tolist(), rows.tolist()))
    columns = ax.get_xticklabels()
    assert [t.get_text() for t in columns] == [shorten(m, 20) for m in MEMORIES]
    assert all(t.get_rotation() == 30 for t in columns)
    assert ax.get_yticklabels()[2].get_text().endswith("…")


def test_score_heatmap_without_threshold_and_bad_shape() -> None:
    fig = score_heatmap(QUERIES, MEMORIES, GRID)
    assert not [p for p in fig.axes[0].patches if p.get_gid() == "over-threshold"]
    with pytest.raises(ValueError, match="shape"):
        score_heatmap(QUERIES, MEMORIES, GRID.T)


# -- (c) distributions ------------------------------------------------------------------
POSITIVE = [0.91, 0.89, 0.88, 0.87, 0.86, 0.85, 0.90, 0.93, 0.88, 0.84]  # 8 of 10 >= 0.86
NEGATIVE = [0.84, 0.83, 0.85, 0.87, 0.82, float("nan")]  # 5 of 6 < 0.86 (nan: nothing found)


def test_score_distributions_rates_and_lines() -> None:
    fig = score_distributions(POSITIVE, NEGATIVE, 0.86, extra_thresholds=ARTICLE)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    (line,) = lines_labelled(ax, "min_score")
    assert list(line.get_xdata()) == [0.86, 0.86]
    texts = {t.get_gid(): t.get_text() for t in ax.texts}
    assert "accepts 接受 80%" in texts["acceptance"]
    assert "rejects 拒绝 83%" in texts["rejection"]
    # the article's 0.5 is far from the scores: marked at the edge, its rates in the legend
    assert "article's 0.5" in texts["off-axis-threshold"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(t.startswith("article's 0.5: accepts 100%, rejects 17%") for t in legend)
    assert any("n=6, 1 with no score" in t for t in legend)
    left, right = ax.get_xlim()
    assert left > 0.7 and right > 0.93


def test_score_distributions_share_bins() -> None:
    fig = score_distributions(POSITIVE, NEGATIVE, 0.86,
                              extra_thresholds={"strict 0.9": 0.9})
    ax = fig.axes[0]
    first, second = ax.containers[:2]
    assert [b.get_x() for b in first] == [b.get_x() for b in second]
    assert sum(b.get_height() for b in first) == len(POSITIVE)
    assert sum(b.get_height() for b in second) == len(NEGATIVE) - 1  # nan is not drawn
    assert same_color(first[0].get_facecolor()[:3], COLORS["positive"])
    (strict,) = lines_labelled(ax, "strict 0.9")  # near the scores: drawn to scale
    assert list(strict.get_xdata()) == [0.9, 0.9]


# -- in Jupyter -------------------------------------------------------------------------
def test_notebook_shows_a_returned_figure_once() -> None:
    """One kernel run (a few seconds): a returned figure is one PNG, never shown twice.

    The figures bypass pyplot, so they only render as images once the inline backend has
    registered IPython's Figure formatter; plots._activate_notebook_display sees to that even
    in a kernel that never imported pyplot.
    """
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [
        "from gya_memory.lab.plots import score_bars\n"
        f"score_bars({QUERY!r}, {CANDIDATES!r}, 0.86)",
        "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()",
        f"fig = score_bars({QUERY!r}, {CANDIDATES!r}, 0.86)",
        "fig",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120,
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [c.outputs for c in nb.cells]
    shown, pyplot_cell, assigned, bare = outputs
    assert [o.output_type for o in shown] == ["execute_result"]
    assert set(shown[0].data) == {"image/png", "text/plain"}
    assert shown[0].data["text/plain"] == "<Figure size 700x320 with 1 Axes>"
    assert [o.output_type for o in pyplot_cell] == ["display_data"]  # only pyplot's own figure
    assert assigned == []
    assert [o.output_type for o in bare] == ["execute_result"] and "image/png" in bare[0].data


# -- every figure -----------------------------------------------------------------------
FIGURES = {
    "bars": lambda: score_bars(QUERY, CANDIDATES, 0.86, other_thresholds=ARTICLE),
    "heatmap": lambda: score_heatmap(QUERIES, MEMORIES, GRID, threshold=0.86),
    "distributions": lambda: score_distributions(POSITIVE, NEGATIVE, 0.86,
                                                 extra_thresholds=ARTICLE),
}


@pytest.mark.parametrize("name", FIGURES)
def test_renders_chinese_without_warnings(name: str) -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    fig = FIGURES[name]()
    png = render(fig)
    assert png.startswith(b"\x89PNG") and len(png) > 5_000
    # built outside pyplot: plt.show() or Jupyter's inline backend never shows it by itself
    assert plt.get_fignums() == before
    assert fig.get_layout_engine() is not None
    assert plots.use_cjk_font() == matplotlib.rcParams["font.sans-serif"][0]
