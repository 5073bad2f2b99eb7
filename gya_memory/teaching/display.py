"""Display helpers for the notebooks: model text in guillemets, tables that read left to right,
lines that fit, and the CJK font for figures.

matplotlib does not know mplfonts' font files until they are registered (``mplfonts init``
would write into site-packages), so :func:`use_cjk_font` registers the shipped Noto Sans CJK
file and puts it first in the sans-serif list: no boxes, no missing-glyph warnings.

JupyterLab right-aligns every table cell with its own CSS. That suits numbers and ruins
sentences, Chinese ones most of all. ``table()`` writes the alignment into each cell, which
wins over any stylesheet: text to the left, numbers to the right.

>>> quote("hi «there»")
'«hi ‹there›»'
>>> print(table([{"memory": "对花生过敏", "score": 0.912}]))
memory      score
对花生过敏  0.912
"""

from __future__ import annotations

import html
import unicodedata
from functools import lru_cache
from pathlib import Path
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gya_memory.base.checks import is_number
from gya_memory.base.text import quote

__all__ = ["quote", "table", "Table", "wrap", "show", "shorten", "width", "use_cjk_font"]

CJK_FONT_FILE = "NotoSansCJKsc-Regular.otf"


def width(text: str) -> int:
    """Columns the text takes in a terminal: Chinese characters count two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap(text: str, columns: int = 100) -> str:
    """Lines of at most ``width`` columns, so Lab never breaks a word: English is broken at
    spaces, Chinese anywhere; a continued line keeps the indentation of its first part.

    >>> print(wrap("alpha beta gamma", 11))
    alpha beta
    gamma
    >>> print(wrap("  记忆库里关于我的资料", 12))
      记忆库里关
      于我的资料
    """
    out = []
    for line in text.split("\n"):
        indent = line[: len(line) - len(line.lstrip(" "))]
        while width(line) > columns:
            cut, cols, space = 0, 0, None
            for i, ch in enumerate(line):
                cols += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
                if cols > columns:
                    break
                cut = i + 1
                if ch == " " and i > len(indent):
                    space = i
            if space is not None and unicodedata.east_asian_width(line[cut - 1]) not in "WF":
                cut = space
            out.append(line[:cut].rstrip())
            line = indent + line[cut:].lstrip(" ")
        out.append(line)
    return "\n".join(out)


def show(*texts: object, columns: int = 100) -> None:
    """``print`` for long text: each argument on its own, wrapped by :func:`wrap`."""
    for text in texts:
        print(wrap(str(text), columns))


def _pad(text: str, cols: int, right: bool) -> str:
    fill = " " * (cols - width(text))
    return fill + text if right else text + fill


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return "" if value is None else str(value)


@dataclass(frozen=True)
class Table:
    """Rows under named columns; shown as left-aligned HTML in Lab and as plain text elsewhere."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    digits: int = 3

    def numeric(self) -> list[bool]:
        """Per column: does it hold only numbers (right-aligned), not text (left-aligned)?"""
        out = []
        for j in range(len(self.columns)):
            values = [r[j] for r in self.rows if r[j] is not None]
            out.append(bool(values) and all(is_number(v) for v in values))
        return out

    def __repr__(self) -> str:
        right = self.numeric()
        cells = [list(self.columns)] + [[_cell(v, self.digits) for v in r] for r in self.rows]
        widths = [max(width(row[j]) for row in cells) for j in range(len(self.columns))]
        return "\n".join("  ".join(_pad(row[j], widths[j], right[j]) for j in range(len(row))).rstrip()
                         for row in cells)

    def _repr_html_(self) -> str:
        align = ["right" if r else "left" for r in self.numeric()]
        head = "".join(f"<th style='text-align:{align[j]}'>{html.escape(c)}</th>"
                       for j, c in enumerate(self.columns))
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:{align[j]};white-space:pre-wrap'>"
                             f"{html.escape(_cell(v, self.digits))}</td>"
                             for j, v in enumerate(r)) + "</tr>"
            for r in self.rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def table(data: Any, columns: Sequence[str] | None = None, *, digits: int = 3) -> Table:
    """A table from a pandas DataFrame, a list of dicts or a list of tuples (with ``columns``).

    Floats are rounded to ``digits`` places, so stored outputs stay stable.
    """
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # a DataFrame
        cols = tuple(str(c) for c in data.columns)
        rows = tuple(tuple(r) for r in data.itertuples(index=False, name=None))
        return Table(cols, rows, digits)
    items = list(data) if isinstance(data, Iterable) else []
    if items and isinstance(items[0], Mapping):
        cols = tuple(columns or dict.fromkeys(k for item in items for k in item))
        return Table(cols, tuple(tuple(item.get(c) for c in cols) for item in items), digits)
    if columns is None:
        raise ValueError("table(): rows given as tuples need columns=[...] to name them")
    rows = tuple(tuple(r) for r in items)
    if any(len(r) != len(columns) for r in rows):
        raise ValueError(f"table(): every row needs {len(columns)} values, one per column")
    return Table(tuple(columns), rows, digits)


def shorten(text: str, columns: int = 28) -> str:
    """``text`` on one line, cut to ``columns`` display columns with a trailing "…".

    A Chinese character takes two columns, so the cut labels have about the same length on
    screen whatever their language.

    >>> shorten("用户的博客主要写 AI Agent 的工程实践", 20)
    '用户的博客主要写 AI…'
    >>> shorten("short")
    'short'
    """
    text = " ".join(str(text).split())
    if width(text) <= columns:
        return text
    out, used = [], 1  # one column is kept for the ellipsis
    for ch in text:
        used += width(ch)
        if used > columns:
            break
        out.append(ch)
    return "".join(out).rstrip() + "…"


@lru_cache(maxsize=1)
def use_cjk_font() -> str:
    """Register mplfonts' CJK font with matplotlib, make it the default, return its name."""
    import matplotlib as mpl
    import mplfonts
    from matplotlib import font_manager

    path = Path(mplfonts.__file__).parent / "fonts" / CJK_FONT_FILE
    if not path.exists():
        raise FileNotFoundError(f"mplfonts does not ship {CJK_FONT_FILE}; reinstall requirements.txt")
    font_manager.fontManager.addfont(str(path))
    name = font_manager.FontProperties(fname=str(path)).get_name()
    mpl.rcParams["font.family"] = "sans-serif"
    mpl.rcParams["font.sans-serif"] = [name, *mpl.rcParams["font.sans-serif"]]
    mpl.rcParams["axes.unicode_minus"] = False  # the CJK font has no U+2212 minus sign
    return name
