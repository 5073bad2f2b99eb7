"""Which stored memory a new fact replaces (更新哪条记忆), by rule.

When the user says something new about a thing they told us before ("卖掉了卡罗拉，换了一辆
比亚迪海豹" after "开一辆2018年的卡罗拉"), the old memory should end and the new one take its
place. Asking the 1.5B model "same / replaces / new" replaced the wrong memory far more often
than the right one (README, "From conversation to memory"): it chained facts of one session
together and called unrelated notes of one user a replacement. This rule asks for three
visible things instead, and only then updates:

1. **a sign of change** in the new fact: 现在 / 已经 / 换了 / 改成 / 推迟到 / 涨到 …, "now",
   "switched", "moved", "no longer", "delayed to" … (:func:`change_marker`);
2. **an earlier session**: a fact never replaces one written in the same session (what the
   user says in one conversation is taken to be true together);
3. **the same thing named**: the old and the new fact share a key word (an English word or
   a Chinese character pair that is not a stop word, :func:`shared_keys`), e.g. 卡罗拉,
   "Golf", "battery", 工资, among the close memories about the same person.

The candidate with the most shared key words wins (ties: the closest by cosine). Without a
sign of change, or with no earlier memory sharing a key word, the new fact is added beside
the others, and the answer step lets the newer of two conflicting memories win.

>>> change_marker("卖掉了卡罗拉，换了一辆纯电的比亚迪海豹"), change_marker("开一辆2018年的卡罗拉")
('卖掉', None)
>>> change_marker("Emergency fund is now £6,000"), sorted(shared_keys("Replaced the Golf's battery", "The Golf still has its original battery"))
('now', ['battery', 'golf'])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

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
# Key words too common to say that two facts are about the same thing.
_COMMON = frozenset("一个 一辆 一台 一家 一只 每天 每月 每周 现在 已经 开始 平时 最近 "
                    "user user's has have had is was are now got new".split())


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


def keys(text: str) -> set[str]:
    """The key words of ``text``: English words of 3+ letters, Chinese character pairs, minus
    stop words and :data:`_COMMON`. Numbers (and Chinese pairs with a numeral) are not keys:
    they are what an update changes (工资一万二 → 一万四), and a year names no thing."""
    from gya_memory.semantic.lexical import tokenize

    out = set()
    for token in tokenize(text):
        han = re.fullmatch(r"[\u4e00-\u9fff]+", token) is not None
        if (len(token) == 2 and not _NUMERAL.search(token) if han
                else len(token) >= 3 and not token[0].isdigit()) and token not in _COMMON:
            out.add(token)
    return out


def shared_keys(new: str, old: str) -> set[str]:
    """The key words two facts share."""
    return keys(new) & keys(old)


def replaced_by(new: str, close: Sequence[Any], *, session_id: str | None,
                min_shared: int = 1) -> Any | None:
    """Which of ``close`` (stored memories about the same person, closest first; each with
    ``text``, ``score`` and ``payload``) the fact ``new`` replaces, or None (see the module
    docstring). ``session_id``: the session being written (its own memories are never
    replaced)."""
    if change_marker(new) is None:
        return None
    earlier = [h for h in close if session_id is None or h.payload.get("session_id") != session_id]
    scored = [(len(shared_keys(new, h.text)), float(h.score), h) for h in earlier]
    scored = [s for s in scored if s[0] >= min_shared]
    if not scored:
        return None
    return max(scored, key=lambda s: (s[0], s[1]))[2]
