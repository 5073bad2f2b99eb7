"""What kind of question this is (问题的类型), which decides what an honest answer looks like
when no memory answers it.

- **fact**: asks for a personal fact the agent would have to remember ("我女儿在哪上学？",
  "What's my dentist's name?"). With nothing stored on it, the only honest answer is "I
  don't know, you haven't told me".
- **advice**: asks for help whose right answer depends on the person ("我今晚能吃火锅吗？",
  "Should I rent a car for the trip?"). With nothing stored, the agent still helps, and says
  where knowing the user would change the advice, without assuming anything about them.
- **general**: needs no personal fact at all ("感冒一般几天能好？", "How long do I boil an egg
  for a runny yolk?"). The agent just answers.

The rule is short and visible: a question that asks *what / which / where / when / who* of
something of the user's ("我的…是什么", "my … name", "where do I …", "did I …", "来着") is a
fact; a question that asks for a judgement or a plan ("能…吗", "该…", "怎么办", "should I",
"any tips") is advice if it has a personal marker (我 / my / I) and general if it doesn't.
Two exceptions: someone asking the user for a fact of theirs ("保安问我车是什么牌子，我该怎么说？",
"she's asking what I take. What should I tell her?") is a fact, and so is anything with 来着;
so is an English fact asked as a task or about someone of the user's ("Which city should I put
on the envelope for my brother?", "What does my son usually order?"), while a which/what that
asks for a judgement stays advice ("Which wine would go with the steak I'm cooking?",
"给我妈带什么礼物好？"). (The same relays in Chinese, 该填哪个 / 多大码 / 提醒他什么, were tried and
left out: read as facts, they meet the strict reader, which rejected the stored fact that
answers them, 对青霉素过敏 for "我需要提醒他什么？".)
"How much/long/often should I …?" and a how-to ("How can I tell when running shoes are worn
out?") with no my/me are general knowledge; a how-to about the asker's own body or habits
("How can I sleep better?") stays advice.

A question with no 我 / my can still be about the user's world: "豆豆现在吃的是哪个牌子的狗粮？",
"What brand is Farah's lunchbox?" name the user's dog and daughter. Read alone, they look
general, and with nothing stored the model then makes an answer up ("Farah's lunchbox is made
by…"). Given the texts of the user's memories (``known``), a name the question shares with
them (a capitalised word in English, 豆豆 / 老郑 / 小宝 in Chinese) is read as the user's own
("my Farah", "我家豆豆") and the rule runs again. A place after a preposition ("visit Bali")
is not taken for a name.
Its errors are measured on the evaluation set (``evaluation.classifier_table``); the cost
of one is small by design: retrieval runs for every kind, so the kind only picks the words
of the no-hit answer.

>>> question_kind("我女儿在哪个学校上学来着？"), question_kind("今晚火锅我能吃吗？"), question_kind("感冒一般几天能好？")
('fact', 'advice', 'general')
>>> question_kind("What's my dentist's name?"), question_kind("Should I rent a car for the trip?")
('fact', 'advice')
>>> question_kind("How long should you boil an egg for a runny yolk?")
'general'
>>> question_kind("Which city should I put on the envelope for my brother?")
'fact'
>>> question_kind("Which wine would go with the steak I'm cooking?"), question_kind("给我妈带什么礼物好？")
('advice', 'advice')
>>> question_kind("What brand is Farah's lunchbox?"), question_kind("What brand is Farah's lunchbox?", known=["Bought Farah a purple backpack"])
('general', 'fact')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

Kind = Literal["fact", "advice", "general"]
KINDS: tuple[str, ...] = ("fact", "advice", "general")

# 想…/打算… at the start leaves out 我 ("想在笔记本上装…"); 来着 and 家里 ask about the user's own
_PERSONAL_ZH = re.compile(r"[我咱]|^(想|打算|准备|计划)|来着|家里")
_PERSONAL_EN = re.compile(r"\b(i|me|my|mine|myself|i'm|i've|i'll|i'd|we|our|us)\b", re.I)

# Asking for a stored fact. Chinese: a question word with 我/我的 before it, or 来着 / 记得 /
# 是不是 of the past; English: wh-words about my things, did/have/am I, do I have. "when" asks
# only as a question word (at the start, or "when did/is …"), not as a conjunction ("is it
# normal for my knees to crack when I squat?"), as in the slot rules.
_FACT_ZH = re.compile(
    r"来着|还记得|记不记得|你知道我|提醒我一下|"
    r"我(的|家|们家|们)?[^，,。？?！!]{0,14}(什么|啥|哪|几|多少|谁|多大|多久|多长|多高|多重|是不是|有没有)|"
    r"我(是不是|有没有|是否|去没去|去过|做过|买过|报过|参加过|考过|吃过)[^，,。？?！!]{0,16}[吗？?]"
)
_FACT_EN = re.compile(
    r"(\b(what|what's|which|where|who|who's|whose|how many|how much|how old|how long|how tall)\b"
    r"|(^|[.?!,;]\s*)when\b|\bwhen (do|did|does|is|are|was|were|will|am|have|has)\b)"
    r"[^.?!]{0,40}\b(my|mine|i|i've|i'm|we|our|us)\b"
    r"|^\s*(do|did|does|have|has|am|was|were|is|are)\s+(i|my|we|our)\b"
    r"|\bremind me\b|\bdo you (remember|know) (what|which|where|when|who|my|if i)\b",
    re.I,
)
# Someone asks the user for a fact of theirs and the user asks what to reply ("保安问我车是什么牌子，
# 我该怎么说？", "The pharmacist is asking what I'm taking. What should I tell her?"): a fact
# phrased as a task. 来着 ("what was it again") always asks for a remembered fact.
_RELAY_ZH = re.compile(r"来着|问我[^，,。？?！!]{0,14}(什么|啥|哪|几|多少|谁)")
_RELAY_EN = re.compile(
    r"\b(asking|asks|asked|wants to know|want to know)\b( me)?( for)? (what|which|where|when|who|how "
    r"(many|much|old|long))\b|\bwhat('s| is) the name of\b[^.?!]{0,40}\b(i|my)\b"
    r"|\b(needs|wants|asks for|asking for|requires) (my|the \w+( \w+)? of my)\b"
    r"|\b(what|which)\b[^.?!]{0,40}\b(should|do|shall) (i|we) (put|write|fill in|enter|address|give (her|him|them))\b"
    r"|\b(what|which|where|when|who)\b[^.?!]{0,60}\b(usual|usually|normally|again)\b"
    r"|\b(what|which|where|when|who)\b[^.?!]{0,40}\b(does|did|is|was) (she|he|they)\b(?![^.?!]{0,30}\bshould\b)",
    re.I,
)
# "How much should I tip in a restaurant?", "How do I unclog a sink?": a how-much or how-to
# question whose only personal word is a generic I/we asks for general knowledge (my/me/our or
# a statement about myself make it personal again; so do sleep / eat / lose / "better", which
# are about the asker's own body or habits).
_GENERIC_HOW_EN = re.compile(
    r"(^\s*|[,;] (and )?)how ((often|long|much|many|far|soon)( \w+){0,2} (should|do|would|can|must) (i|we)\b"
    r"|(can|should|do) (i|we)\b(?! (sleep|eat|train|run|lose|gain|feel|recover|stay|be|get (fit|well)))"
    r"(?![^?]*\b(better|faster|healthier|stronger|fitter)\b))[^.?!]*\?\s*$", re.I)
_OWN_EN = re.compile(r"\b(me|my|mine|myself|i'm|i've|i'll|i'd|our|us)\b|\bi (have|am|was|had|got)\b", re.I)
# A judgement or a plan: these make a question advice even when it also asks "what".
_ADVICE_ZH = re.compile(
    r"能不能|可不可以|行不行|好不好|要不要|该不该|合不合适|适不适合|怎么办|怎么(安排|选|挑|准备|弄|做|处理|应对|调整|搭配)|"
    r"[能可]以?[^，,。？?！!]{0,10}吗|应该|该怎么|该(选|买|带|吃|穿|去|做|注意)|需要注意|要注意|注意什么|"
    r"建议|推荐|合适|适合|值得|划算|有什么(办法|好办法|讲究|要注意|需要注意)|帮我|给我(推荐|建议)|"
    r"[能该可要][^，,。？?！!]{0,6}(啥|什么|哪些)|你觉得|怎样才|如何|"
    r"[得要该](先|提前)?(注意|准备|想好|带|考虑)些?(什么|啥|哪些)|"
    r"(什么|哪|啥)[^，,。？?！!]{0,8}(好|合适)[？?]?$|会(高兴|喜欢|开心)|能(避开|避免|让我|省)"
)
_ADVICE_EN = re.compile(
    r"\b(should|shall|can|could|may|might)\s+(i|we)\b|\bis it (ok|okay|safe|fine|wise|a good idea)\b|"
    r"\bany (tips|advice|ideas|suggestions|recommendations)\b|\b(recommend|suggest|advise)\b|"
    r"\bwhat (should|would you|do you suggest)\b|\bhow (do|can|should) (i|we)\b|\bgood idea\b|"
    r"\bhelp me\b|\bworth it\b|\bwhat to (bring|pack|wear|order|buy|get|cook|eat|do)\b|"
    r"\bok (for me|to)\b|\bam i (fine|ok|okay|good)\b|\bi should\b|\bdo i need\b|"
    r"\bhow much (can|should|could|will) i\b|\b(ideas|tips) for\b|\bwrite me\b|\bdraft\b|"
    r"\b(which|what)\b[^.?!]{0,40}\bwould (go|make|suit|work|be (good|best|better|nice))\b",
    re.I,
)


# Names: a capitalised word inside an English sentence (not after a preposition: "in Bali" is
# a place), and in Chinese the common forms of a pet's or a person's name (豆豆, 老郑, 小宝).
_EN_NAME = re.compile(r"(?<!\S)(?=(\S*[a-z,;:]) ([A-Z][a-z]+)\b(?!-))")  # (word before, name)
_PLACE_BEFORE = frozenset("in to at from into near visit visiting via across".split())
_NOT_NAMES = frozenset("I Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February "
                       "March April May June July August September October November December".split())
_ZH_NAME = re.compile(r"([\u4e00-\u9fff])\1|[老小阿][\u4e00-\u9fff]")
_ZH_NOT_NAMES = frozenset("天天 常常 刚刚 慢慢 渐渐 偏偏 往往 稍稍 好好 明明 仅仅 纷纷 多多 少少 早早 统统 "
                          "处处 人人 个个 样样 时时 年年 月月 步步 宝宝 小时 小区 小心 小孩 小学 小吃 小朋 "
                          "小型 小于 小便 小说 小组 老师 老人 老家 老板 老公 老婆 老年 老是 老化 老鼠 阿姨".split())


def names_in(question: str) -> list[str]:
    """Words of ``question`` that read as a name (see the module docstring).

    >>> names_in("What brand is Farah's lunchbox?"), names_in("老郑家的猫叫什么名字？")
    (['Farah'], ['老郑'])
    >>> names_in("What's the best month to visit Bali?"), names_in("我天天跑步")
    ([], [])
    """
    found = [m.group(2) for m in _EN_NAME.finditer(question)
             if m.group(1).lower() not in _PLACE_BEFORE and m.group(2) not in _NOT_NAMES]
    found += [m.group(0) for m in _ZH_NAME.finditer(question) if m.group(0) not in _ZH_NOT_NAMES]
    return list(dict.fromkeys(found))


def _named_in(name: str, texts: Sequence[str]) -> bool:
    if name.isascii():
        return any(re.search(rf"\b{re.escape(name)}\b", t) for t in texts)
    return any(name in t for t in texts)


def question_kind(question: str, known: Sequence[str] = ()) -> Kind:
    """``"fact"``, ``"advice"`` or ``"general"`` (see the module docstring). ``known``: the
    texts of the user's memories (retrieval's candidates), for names the question shares
    with them."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question is empty")
    q = " ".join(question.split())
    kind = _kind(q)
    if kind != "general" or not known:
        return kind
    shared = [n for n in names_in(q) if _named_in(n, known)]
    for name in shared:  # the user's own: "my Farah", "我家豆豆"
        q = (re.sub(rf"\b{re.escape(name)}\b", f"my {name}", q, count=1) if name.isascii()
             else q.replace(name, "我家" + name, 1))
    return _kind(q) if shared else kind


def _kind(q: str) -> Kind:
    q = re.sub(r"\bUS\b", "USA", q)  # the country, not "us"
    zh = _PERSONAL_ZH.search(q) is not None
    personal = zh or _PERSONAL_EN.search(q) is not None
    if not personal or (not zh and _GENERIC_HOW_EN.search(q) and not _OWN_EN.search(q)):
        return "general"
    if (_RELAY_ZH if zh else _RELAY_EN).search(q):
        return "fact"
    advice = (_ADVICE_ZH if zh else _ADVICE_EN).search(q) is not None
    fact = (_FACT_ZH if zh else _FACT_EN).search(q) is not None
    if fact and not advice:
        return "fact"
    if advice:
        return "advice"
    # personal, neither pattern: "我下周出差。" / "I have a cold." read as asking for help
    return "advice"
