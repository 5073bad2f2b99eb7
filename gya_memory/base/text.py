"""Text facts shared by the whole package: which characters are Chinese, the chat roles,
and the stop words. One definition each, so every module cuts text the same way.

``HAN`` is a character-class body (for ``[...]`` in a regex): the CJK ideographs, basic,
extension A, compatibility and extensions B and later. Kana and hangul are *not* Han: a
Japanese or Korean word is a word, not a run of Chinese characters to cut into bigrams.

>>> has_han("用户喜欢 tea"), has_han("tea"), has_han("ひらがな")
(True, False, False)
>>> language_of("他住在上海"), language_of("He lives in Shanghai")
('zh', 'en')
>>> HAN_RUN_RE.findall("A7-2291 是他的工号")
['是他的工号']
"""

from __future__ import annotations

import re
from typing import Literal

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
"""Han ideographs as a regex character-class body: ``re.compile(f"[{HAN}]")``."""

CJK_PUNCT = "\u3000-\u303f\uff00-\uffef"
"""CJK symbols and punctuation (。，、「」) and the full-width forms, as a class body."""

HAN_RE = re.compile(f"[{HAN}]")
HAN_RUN_RE = re.compile(f"[{HAN}]+")


def has_han(text: str) -> bool:
    """True if ``text`` has at least one Chinese character."""
    return HAN_RE.search(text) is not None


def language_of(text: str) -> str:
    """``zh`` if the text has any Chinese character, else ``en`` (good enough for thresholds)."""
    return "zh" if has_han(text) else "en"


# -- chat roles ---------------------------------------------------------------------------
Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")
"""The roles of a chat message, in the order a transcript shows them."""

Message = dict[str, str]
"""One chat message as the model reads it: ``{"role": ..., "content": ...}``."""


# -- stop words ---------------------------------------------------------------------------
# Chosen on the labelled set in gya_memory/data (they cut false matches on questions that
# have no answer without losing the rare names, ids and dates).
STOP_CJK_CHARS = frozenset("的了是在有我你他她它们这那什么吗呢吧啊和与也都就要会能把被给对用户个一上下里哪谁几怎样")
STOP_CJK_BIGRAMS = frozenset(
    "什么 怎么 哪里 哪个 哪些 哪儿 有没 没有 是不 是什 么事 么用 他的 她的 他们 她们 用户 一个 "
    "这个 那个 最近 现在 平时 一般 的吗 了吗 是谁 是哪".split()
)
STOP_WORDS = frozenset(
    "a an the is are was were be been being am do does did what which who whom whose when "
    "where why how i me my we our you your he him his she her it its they them their this "
    "that these those there here of in on at to for from with by about as into over under "
    "and or but not no any some can could should would will shall may might must have has "
    "had if then so than too very just also up down out off again ever anything something "
    "lately days user users s".split()
)
"""English stop words (lowercase)."""


def quote(text: str) -> str:
    """Model text, marked as such: «...». Notebooks show every model answer this way, so the
    nbval sanitizer for other CPUs can mask exactly the model's words (see README, Tests)."""
    return f"«{text.replace('«', '‹').replace('»', '›')}»"
