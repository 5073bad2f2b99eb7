"""Plots for the notebooks. Chinese labels render with the CJK font that mplfonts ships.

matplotlib does not know mplfonts' font files until they are registered (``mplfonts init``
would write into site-packages), so :func:`use_cjk_font` registers the shipped Noto Sans CJK
file and puts it first in the sans-serif list: no boxes, no missing-glyph warnings.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

CJK_FONT_FILE = "NotoSansCJKsc-Regular.otf"


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
