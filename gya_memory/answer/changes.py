"""Signs that a fact has changed (变化的信号), and the numbers a fact states.

When the user says something new about a thing they told us before ("卖掉了卡罗拉，换了一辆
比亚迪海豹" after "开一辆2018年的卡罗拉"), the new fact carries a visible sign of change:
现在 / 已经 / 换了 / 改成 / 推迟到 / 涨到 …, "now", "switched", "moved", "no longer", "delayed
to" … (:func:`change_marker`). The write path uses it the other way round: a proposal with no
sign of change and no number the stored memory lacks (:func:`numbers`) may only say that
memory again (``writing.RESTATE_MIN``). An update rule built on these signs (an earlier
session, a shared key word) was measured and kept off: ``gya_memory.lab.writing_levers.by_rule``.

>>> change_marker("卖掉了卡罗拉，换了一辆纯电的比亚迪海豹"), change_marker("开一辆2018年的卡罗拉")
('卖掉', None)
>>> change_marker("Emergency fund is now £6,000")
'now'
"""

from __future__ import annotations

import re

CHANGE_ZH = re.compile(
    r"现在|如今|目前|已经|又开始|重新|不再|不[吃喝用去做抽养住开]了|改(成|为|吃|用|喝|到|在|去)|换(了|成|到)|"
    r"跳槽|辞职|离职|退休|搬(到|去|家)|卖(掉|了)|停(了|掉)|推迟|延期|提前(到|了)|改期|"
    r"降(到|了|下来)|涨(到|了|薪)|升(到|职|了)|攒到|拿到|变成|新的|新买|刚买|换新|"
    r"从[^，,。]{1,12}(改|换|变)"
)
CHANGE_EN = re.compile(
    r"\b(now|no longer|any ?more|switched|switching|moved|moving to|changed|replaced|new|"
    r"got the|starting|started|stopped|quit|left|sold|delayed|postponed|brought forward|"
    r"rescheduled|pushed back|moved up|got (worse|better)|upgraded|promoted|again|instead)\b",
    re.I,
)
_NUMERAL = re.compile("[零一二两三四五六七八九十百千万亿]")


_NUMBERS = re.compile(
    rf"\d+(?:[.,]\d+)?|{_NUMERAL.pattern}{{2,}}|[十百千万亿]"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
    r"fifty|sixty|seventy|eighty|ninety|hundred|thousand|half|once|twice)\b", re.I)


def numbers(text: str) -> set[str]:
    """The numbers ``text`` states: digits, Chinese numerals of two characters or more (三千五;
    a lone 一 is mostly a word: 一点, 一起) and English number words.

    >>> sorted(numbers("Has nine years of no-claims")), sorted(numbers("房租还是三千五，一点没变"))
    (['nine'], ['三千五'])
    """
    return {m.group(0).lower() for m in _NUMBERS.finditer(text)}


def change_marker(text: str) -> str | None:
    """The first sign in ``text`` that it changes an earlier fact, or None."""
    pattern = CHANGE_ZH if re.search(r"[\u4e00-\u9fff]", text) else CHANGE_EN
    found = pattern.search(text)
    return found.group(0) if found else None
