"""Example data shared by the notebooks and tests, in Chinese and English.

The Chinese facts are the article's three preset facts (name, the coffee preference,
occupation), written in session A. The English user is a second, independent user in the
same file, to show that recall is scoped per user.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .clock import CHINA_TZ, FixedClock

USER_ZH = "user-zh-001"
USER_EN = "user-en-001"
SESSION_A = "session-A"

# (subject, fact, session_id)
FACTS_ZH: list[tuple[str, str, str]] = [
    ("姓名", "用户叫张三", SESSION_A),
    ("偏好", "最近在戒咖啡，想少喝一点", SESSION_A),
    ("职业", "用户是一名后端工程师", SESSION_A),
]
FACTS_EN: list[tuple[str, str, str]] = [
    ("name", "The user's name is Alice", SESSION_A),
    ("preference", "Cutting back on sugar lately; wants fewer sweet drinks", SESSION_A),
    ("occupation", "The user works as a data analyst", SESSION_A),
]

# The question exact recall cannot answer: no field or word of it was ever stored.
DIET_QUESTION_ZH = "我最近饮食上有什么要注意的吗？"
DIET_QUESTION_EN = "Is there anything I should watch in my diet these days?"


def notebook_clock() -> FixedClock:
    """The clock every notebook uses: 2026-09-01 09:00 UTC+8, one minute per write."""
    return FixedClock(datetime(2026, 9, 1, 9, 0, tzinfo=CHINA_TZ), step=timedelta(minutes=1))
