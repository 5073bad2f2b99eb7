"""Relative dates resolved against the conversation's date (相对日期 → 绝对日期).

"下周三要去深圳" said on Monday 2026-03-02 is a fact about 2026-03-11; stored as said, it is
wrong a week later. A small chat model is poor at calendar arithmetic, so the program does
it: :func:`resolve` writes the date after each relative expression it knows, and the model
copies what it reads.

Conventions (written down because people differ): "next Wednesday" / "下周三" is the
Wednesday of the following calendar week (weeks start on Monday); "this Wednesday" /
"这周三" / "周三" alone is the one in the current week (it may be in the past); "next month"
/ "下个月" is written as a month (``2026-04``).

>>> from datetime import date
>>> resolve("下周三要去深圳出差", date(2026, 3, 2))
'下周三（2026-03-11）要去深圳出差'
>>> resolve("Flying to Oslo next Wednesday, back tomorrow", date(2026, 3, 2))
'Flying to Oslo next Wednesday (2026-03-11), back tomorrow (2026-03-03)'
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_ZH_DAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_EN_DAYS = {d: i for i, d in enumerate(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
_ZH_OFFSETS = {"今天": 0, "明天": 1, "后天": 2, "大后天": 3, "昨天": -1, "前天": -2}
_EN_OFFSETS = {"today": 0, "tomorrow": 1, "yesterday": -1, "the day after tomorrow": 2}

_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
        "a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_ZH = re.compile(r"(下下|下个?|这个?|本|上个?)?(?:周|星期|礼拜)([一二三四五六日天])|(大后天|后天|明天|今天|昨天|前天)"
                 r"|(下个?月|上个?月)(?:(\d{1,2})[号日])?|([一两二三四五六七八九十\d]{1,2})(天|周|个星期|个月)[以之]?后")
_EN = re.compile(r"\b(?:(next|this|last) )?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
                 r"( next week)?\b|\b(the day after tomorrow|tomorrow|yesterday|today)\b|\b(next|last) month\b"
                 r"|\bin (a|one|two|three|four|five|six|\d{1,2}) (days?|weeks?|months?)\b", re.I)


def _week_day(today: date, weekday: int, weeks: int) -> date:
    monday = today - timedelta(days=today.weekday())
    return monday + timedelta(weeks=weeks, days=weekday)


def _month(today: date, months: int) -> str:
    m = today.month - 1 + months
    return f"{today.year + m // 12:04d}-{m % 12 + 1:02d}"


def _later(today: date, n: int, unit: str) -> str:
    """``n`` days, weeks or months after ``today`` (a month later: the same day of the month,
    or the month's last day)."""
    if unit.startswith(("day", "天")):
        return (today + timedelta(days=n)).isoformat()
    if unit.startswith(("week", "周", "个星期")):
        return (today + timedelta(weeks=n)).isoformat()
    year, month = divmod(today.month - 1 + n, 12)
    for day in (today.day, 30, 29, 28):
        try:
            return date(today.year + year, month + 1, day).isoformat()
        except ValueError:
            continue
    raise AssertionError("unreachable")


def _number(word: str) -> int:
    """``3``, ``三``, ``十二``, ``二十``, ``two`` as a number."""
    if word.isdigit():
        return int(word)
    if word.lower() in _NUM:
        return _NUM[word.lower()]
    tens, _, ones = word.partition("十")  # 十二 -> ("", 十, 二); 二十 -> (二, 十, "")
    return _NUM.get(tens, 1) * 10 + _NUM.get(ones, 0)


def _zh(match: re.Match[str], today: date) -> str:
    prefix, day, offset, month, of_month, n, unit = match.groups()
    if n:
        return _later(today, _number(n), unit)
    if month:
        ym = _month(today, 1 if month.startswith("下") else -1)
        return f"{ym}-{int(of_month):02d}" if of_month else ym
    if offset:
        return (today + timedelta(days=_ZH_OFFSETS[offset])).isoformat()
    weeks = {"下下": 2, "下": 1, "下个": 1, "上": -1, "上个": -1}.get(prefix or "", 0)
    return _week_day(today, _ZH_DAYS[day], weeks).isoformat()


def _en(match: re.Match[str], today: date) -> str:
    which, day, next_week, offset, month, n, unit = match.groups()
    if n:
        return _later(today, _number(n), unit.lower())
    if month:
        return _month(today, 1 if month.lower() == "next" else -1)
    if offset:
        return (today + timedelta(days=_EN_OFFSETS[offset.lower()])).isoformat()
    weeks = 1 if next_week else {"next": 1, "last": -1}.get((which or "").lower(), 0)
    return _week_day(today, _EN_DAYS[day.lower()], weeks).isoformat()


def resolve(text: str, today: date) -> str:
    """``text`` with the date written after each relative date expression it contains:
    ``下周三（2026-03-11）``, ``next Wednesday (2026-03-11)``."""
    text = _ZH.sub(lambda m: f"{m.group(0)}（{_zh(m, today)}）", text)
    return _EN.sub(lambda m: f"{m.group(0)} ({_en(m, today)})", text)
