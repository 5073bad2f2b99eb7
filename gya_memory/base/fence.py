"""The fence (围栏): one way to put stored text into a prompt as data, never as instructions.

Everything a store gives back (curated entries, session-search hits, recalled memories)
was written by someone, maybe by an attacker, and ends up inside a prompt. Scanning at
write time (:mod:`gya_memory.hermes.injection`) is one layer; this is the next one: whatever the
text says, it stays inside its fence.

:func:`neutralise` makes one stored text safe to place on one line of a fenced block:

- every kind of line break and run of whitespace becomes one space, so a text cannot
  start a line of its own (no fake ``## USER PROFILE`` heading, no fake ``user:`` turn);
- invisible and format characters are removed: bidi controls (U+202E ...), zero-width
  characters, variation selectors, the combining grapheme joiner, Hangul fillers, the
  braille blank, Unicode tags: what a human reviewer can't see, the prompt doesn't get;
- ``<`` and ``>`` and every look-alike (＜ ﹤ ‹ 〈 ⟨ ❮ ˂ ...) become ``(`` and ``)``, so no
  text can open or close a tag such as ``</memories>``;
- a bracketed number (``[2]``, ``［2］``, ``【2】``) becomes ``(2)``, so one entry cannot
  forge the next numbered entry.

:func:`fence` builds the block itself: an opening tag, one numbered line per item, a
closing tag.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

# Characters that render as nothing (or as blank space) but are not whitespace.
_INVISIBLE_EXTRA = frozenset(
    "\u034f"          # combining grapheme joiner
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers
    "\u2800"          # braille pattern blank
    "\u17b4\u17b5"    # Khmer inherent vowels
    "\u180b\u180c\u180d\u180f"  # Mongolian variation selectors
)


def is_invisible(ch: str) -> bool:
    """True for a character a reader cannot see: format characters (Unicode category Cf:
    bidi controls, zero-width joiners/spaces, tags, soft hyphen), variation selectors,
    Hangul fillers, the braille blank, the combining grapheme joiner."""
    code = ord(ch)
    return (
        unicodedata.category(ch) == "Cf"
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
        or 0xE0000 <= code <= 0xE007F
        or ch in _INVISIBLE_EXTRA
    )


def strip_invisible(text: str) -> str:
    """``text`` without the characters :func:`is_invisible` names."""
    return "".join(ch for ch in text if not is_invisible(ch))


# Angle brackets and their look-alikes. 《》 (book-title marks) are ordinary Chinese
# punctuation and stay.
_OPENERS = "<\uff1c\ufe64\u2039\u2329\u3008\u27e8\u276e\u276c\u02c2\u22d6\u227a\u1438\u2264"
_CLOSERS = ">\uff1e\ufe65\u203a\u232a\u3009\u27e9\u276f\u276d\u02c3\u22d7\u227b\u1433\u2265"
_BRACKETS = str.maketrans({**{c: "(" for c in _OPENERS}, **{c: ")" for c in _CLOSERS}})
_NUMBERED = re.compile(r"[\[［【〔⟦〖]\s*(\d+)\s*[\]］】〕⟧〗]")


def neutralise(text: str) -> str:
    """One line of plain text that cannot leave a fence (see the module docstring)."""
    visible = strip_invisible(str(text))
    flat = " ".join(visible.split())  # str.split() breaks at \n, \r, \u2028, \x85, \t ...
    return _NUMBERED.sub(r"(\1)", flat.translate(_BRACKETS))


def fence(tag: str, items: Sequence[str], *, header: str | None = None, start: int = 1,
          numbered: bool = True, prefixes: Sequence[str] | None = None) -> str:
    """``<tag>``, an optional neutralised header line, one neutralised line per item
    (``[n] text`` numbered from ``start``, or ``prefix text``), ``</tag>``."""
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", tag):
        raise ValueError(f"tag must be a lower-case name such as 'memories', got {tag!r}")
    lines = [f"<{tag}>"]
    if header is not None:
        lines.append(f"({neutralise(header)})")
    for i, item in enumerate(items):
        if prefixes is not None:
            lead = prefixes[i]
        elif numbered:
            lead = f"[{start + i}]"
        else:
            lead = "-"
        lines.append(f"{lead} {neutralise(item)}")
    lines.append(f"</{tag}>")
    return "\n".join(lines)
