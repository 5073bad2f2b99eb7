"""What a fact question asks for (问的是哪一项), and whether a memory can say it.

Two look-alikes fool the judge of a 1.5B model more than any other, and both can be seen
in the words:

- **the asked detail is missing**: "我对哪种抗生素过敏？" next to "对花粉过敏"; "What time
  is my dentist appointment?" next to "Has a dentist appointment next month". A question
  that asks *how much / how many / what time / which day* needs a number or a date in the
  memory that answers it; a memory without one can only be a look-alike.
- **a plan asked as done**: "我去年在日本待了几天？" next to "打算明年去日本看樱花";
  "Which sailing club did I join?" next to "Wants to learn to sail". A memory that states
  an intention (打算 / 想 / 计划 / plans to / wants to) does not answer a question about
  what happened.

Both rules apply to fact questions only (advice can rest on a plan: "下周要去深圳" matters
for "周末能约饭吗？"). They drop a candidate before the judge; the trace says which rule.

>>> missing_slot("我上次体检的总胆固醇具体是多少？", "体检查出总胆固醇偏高")
'a number'
>>> missing_slot("我每个月房贷还多少？", "每个月房贷还6800元") is None
True
>>> plan_asked_as_done("我去年在日本待了几天？", "打算明年春天去日本看樱花")
True
>>> plan_asked_as_done("Which sailing club did I join?", "Joined the Bayside sailing club in May")
False
"""

from __future__ import annotations

import re

_NUMBER = re.compile(r"\d|[一二两三四五六七八九十百千万半]|\b(one|two|three|four|five|six|seven|"
                     r"eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|"
                     r"thousand|half|dozen|once|twice)\b", re.I)
_TIME = re.compile(r"\d|[点时分早晚午]|周[一二三四五六日天末]|星期|月|号|日|年|"
                   r"\b(am|pm|noon|midnight|morning|evening|night|monday|tuesday|wednesday|"
                   r"thursday|friday|saturday|sunday|weekend|january|february|march|april|may|"
                   r"june|july|august|september|october|november|december|spring|summer|autumn|"
                   r"fall|winter|week|month|year|today|tomorrow)\b", re.I)

# What the question asks for, and what an answering memory must contain.
_ASKS_NUMBER = re.compile(r"多少|几[个次天年岁位片粒颗本张块台辆公斤斤级分米层口只杯瓶节套]|多大|多高|多重|多久|多长|"
                          r"\bhow (many|much|old|tall|long|far|often)\b|\bwhat (dose|size|score|grade|number|"
                          r"percentage|rating|amount|price)\b", re.I)
# "when" asks for a time as a question word ("When is my…", "…, when did I…"), not as a
# conjunction ("so they can call me when supplies run low")
_ASKS_TIME = re.compile(r"几号|哪天|哪一天|什么时候|哪个月|哪年|几月|星期几|周几|"
                        r"^\s*when\b|\bwhen (do|did|does|is|are|was|were|will|am|should|can|have|has)\b|"
                        r"\bwhat (day|date|month|year)\b|\bwhich (day|date|month|year)\b",
                        re.I)
_ASKS_CLOCK = re.compile(r"几点|\bwhat time\b|\bat what time\b", re.I)
_CLOCK = re.compile(r"\d|[点时分]|半|\b(am|pm|a\.m\.|p\.m\.|noon|midnight|o'clock|morning|evening|"
                    r"afternoon|night)\b", re.I)

_PLAN = re.compile(r"打算|计划|想要?|准备|考虑|希望|梦想|盼着|将来|以后|明年|下个?月|下周|"
                   r"\b(plans? to|planning|wants? to|would like to|hopes? to|thinking (of|about)|"
                   r"considering|someday|next (year|month|week|spring|summer|fall|autumn|winter)|"
                   r"intends? to|dreams? of|on (his|her|my) (bucket|wish) list)\b", re.I)
_DONE = re.compile(r"过|了(?![吗呢吧啊？?。！!\s]*$)|上次|上回|那次|去年|前年|当时|已经|\b(did|was|were|had|have you|"
                   r"last (year|time|month|week|summer|spring|fall|winter)|ago|joined|bought|"
                   r"booked|stayed|visited|went|got|finished|sold|named|adopted|won|passed|"
                   r"earned|scored|paid|made|took)\b", re.I)


def missing_slot(question: str, memory: str) -> str | None:
    """``"a number"`` or ``"a time"`` when ``question`` asks for one and ``memory`` has
    none (so it can't be the answer), else ``None``."""
    if _ASKS_CLOCK.search(question) and not _CLOCK.search(memory):
        return "a time"
    if _ASKS_TIME.search(question) and not _TIME.search(memory):
        return "a time"
    if _ASKS_NUMBER.search(question) and not _NUMBER.search(memory):
        return "a number"
    return None


def plan_asked_as_done(question: str, memory: str) -> bool:
    """Does ``question`` ask what happened while ``memory`` only states a plan or a wish?"""
    return bool(_PLAN.search(memory)) and bool(_DONE.search(question)) \
        and not _FUTURE.search(question) and not _DONE_IN_MEMORY.search(memory)


# A question about the future ("我女儿明年上几年级了？") may be answered by a plan.
_FUTURE = re.compile(r"明年|下周|下个?月|将来|以后|打算|计划|\b(next|will|going to|plan|planning|"
                     r"upcoming|coming)\b", re.I)


# A memory that reports the plan as carried out ("想了很久，终于报了名") is not only a plan.
_DONE_IN_MEMORY = re.compile(r"已经|终于|报了名|去过|买了|订了|\b(already|finally|booked|joined|"
                             r"bought|signed up|enrolled|went|visited)\b", re.I)
