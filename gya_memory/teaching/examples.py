"""Example data shared by the notebooks and tests, in Chinese and English; the article's
procedural example (``DIETARY_ADVICE``, registered as a runner when this module is imported).

The Chinese facts are the article's three preset facts (name, the coffee preference,
occupation), written in session A. The English user is a second, independent user in the
same file, to show that recall is scoped per user.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from gya_memory.base.clock import CHINA_TZ, FixedClock
from gya_memory.base.text import has_han
from gya_memory.procedural.memory import Procedure, register_runner

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


# -- the series' example: advice under a dietary restriction ---------------------------------
_SWAPS = {  # a word in the restriction -> (what to watch, an easy swap)
    "咖啡": ("咖啡、浓茶这类含咖啡因的饮品", "温水或花草茶"),
    "糖": ("奶茶、果汁和甜点", "无糖茶或气泡水"),
    "coffee": ("coffee and strong tea (caffeine)", "decaf or herbal tea"),
    "sugar": ("soda, milk tea and desserts", "unsweetened tea or sparkling water"),
    "sweet": ("soda, milk tea and desserts", "unsweetened tea or sparkling water"),
}


def dietary_advice(restriction: str, occasion: str) -> str:
    """How to give advice under a dietary restriction (the article's procedural example)."""
    watch, swap = next((v for k, v in _SWAPS.items() if k in restriction.lower()), (None, None))
    if has_han(restriction + occasion):
        return (f"{occasion}时记得你想{restriction}：留意{watch or '相关的饮食'}，"
                f"可以换成{swap or '你能接受的选项'}。")
    return (f"At the {occasion}, remember you want {restriction}: watch out for "
            f"{watch or 'anything related'}; {swap or 'something you are fine with'} is an easy swap.")


DIETARY_ADVICE = Procedure(
    name="dietary_advice",
    description="如何根据饮食限制给出建议 / how to give advice under a dietary restriction",
    steps=("确认限制 name the restriction",
           "列出这个场合常见的相关饮食 list what the occasion serves that conflicts with it",
           "给一个容易做到的替代 offer an easy swap",
           "语气温和，不说教 keep it friendly, no lecturing"),
    run="gya_memory.teaching.examples:dietary_advice",
)
register_runner("gya_memory.teaching.examples:dietary_advice", dietary_advice)
# the name it had before the package tree moved: procedures files saved then still load
register_runner("gya_memory.examples:dietary_advice", dietary_advice)
