"""Whom a memory or a question is about (记忆的主体): the user, or someone or something else.

A small model builds its answer on whatever it is given. Asked "我自己是做什么工作的？", it
answers from "妹妹在成都当护士" if that memory is in the prompt. Retrieval can't tell the two
apart (the cosine of a memory about the sister's job is as high as one about the user's
own), so the gate asks a simpler question first: *whose* fact is this, and whose fact does
the question ask for? A mismatch drops the candidate before the judge sees it.

Mem0 writes memories with pronouns replaced by names or "User"; Graphiti keeps facts as
edges between named entities; LangMem extracts subject-predicate-object triples. Here the
same idea is a short, visible rule: a memory that *starts* with a relation word ("妹妹…",
"用户的母亲…", "Husband rides…", "User's dog…") is about that relation; anything else is
about the user. A question asks about a relation when the word follows "我/我的/my"
("我妹妹在哪上班？", "What does my wife do?"); a question about a relation only takes
memories about that relation, and a memory about a relation is only sent when the question
names it. The rule sees people and pets, not things (the user's old car and new e-bike are
both "user": the judge tells those apart).

>>> about_of("妹妹在成都当护士"), about_of("对花生过敏"), about_of("User's sister Chloe teaches piano")
('妹妹', 'user', 'sister')
>>> asks_about("我妹妹在哪上班？"), asks_about("我自己是做什么工作的？"), asks_about("What does my wife do?")
('妹妹', 'user', 'wife')
>>> fits("妹妹", "我自己是做什么工作的？"), fits("user", "我妹妹在哪上班？"), fits("妹妹", "我妹妹在哪上班？")
(False, False, True)
>>> fits("user", "My sister visits on Friday, where should we eat?", kind="advice")
True
"""

from __future__ import annotations

import re

USER = "user"

# Each relation word and the key it stands for. Keys are the Chinese word where there is
# one (so a trace reads naturally), English ones for English words; one key per person,
# so 姐姐 and 妹妹 stay two people, and "sister" (either) is compatible with both.
_ZH: dict[str, str] = {}
for key, words in {
    "妈妈": "妈妈 母亲 老妈 我妈 妈",
    "爸爸": "爸爸 父亲 老爸 我爸 爸",
    "老婆": "老婆 妻子 太太 爱人 媳妇",
    "老公": "老公 丈夫 先生",
    "男朋友": "男朋友 男友",
    "女朋友": "女朋友 女友",
    "姐姐": "姐姐 姐",
    "妹妹": "妹妹 妹",
    "哥哥": "哥哥 哥",
    "弟弟": "弟弟 弟",
    "儿子": "儿子",
    "女儿": "女儿 闺女",
    "孩子": "孩子 小孩 宝宝",
    "爷爷": "爷爷 祖父",
    "奶奶": "奶奶 祖母",
    "外公": "外公 姥爷",
    "外婆": "外婆 姥姥",
    "婆婆": "婆婆",
    "公公": "公公",
    "岳母": "岳母 丈母娘",
    "岳父": "岳父 丈人 老丈人",
    "舅舅": "舅舅",
    "阿姨": "阿姨 姑姑 小姨 姨妈",
    "叔叔": "叔叔 伯伯",
    "表哥": "表哥 表姐 表弟 表妹 堂哥 堂姐 堂弟 堂妹",
    "室友": "室友 舍友",
    "同事": "同事",
    "领导": "领导 老板 上司 经理",
    "朋友": "朋友 闺蜜 好友 发小 哥们",
    "邻居": "邻居",
    "同学": "同学",
    "猫": "猫 猫咪",
    "狗": "狗 狗狗",
}.items():
    for w in words.split():
        _ZH[w] = key

_EN: dict[str, str] = {}
for key, words in {
    "mother": "mother mom mum mama", "father": "father dad papa",
    "wife": "wife", "husband": "husband", "partner": "partner spouse",
    "boyfriend": "boyfriend", "girlfriend": "girlfriend", "fiance": "fiance fiancé fiancee fiancée",
    "sister": "sister sis", "brother": "brother", "son": "son", "daughter": "daughter",
    "kid": "kid kids child children baby toddler", "grandmother": "grandmother grandma granny nan",
    "grandfather": "grandfather grandpa", "aunt": "aunt", "uncle": "uncle",
    "cousin": "cousin", "niece": "niece", "nephew": "nephew",
    "mother-in-law": "mother-in-law", "father-in-law": "father-in-law",
    "sister-in-law": "sister-in-law", "brother-in-law": "brother-in-law",
    "son-in-law": "son-in-law", "daughter-in-law": "daughter-in-law",
    "roommate": "roommate flatmate housemate", "colleague": "colleague coworker co-worker",
    "boss": "boss manager supervisor", "friend": "friend buddy", "neighbor": "neighbor neighbour",
    "cat": "cat kitten", "dog": "dog puppy",
}.items():
    for w in words.split():
        _EN[w] = key

# Keys that stand for a group one of whose members may be meant: a memory about "孩子"
# fits a question about "儿子" and the other way round.
_GROUPS = [{"孩子", "儿子", "女儿"}, {"kid", "son", "daughter"}, {"sister"}, {"猫", "狗"}]
_GENERIC = {"sister": {"姐姐", "妹妹"}}

_ZH_WORDS = sorted(_ZH, key=len, reverse=True)
# At the start of a memory, one-character words (哥, 妹, 妈) are too often the start of
# something else (哥伦比亚, 妹子): only the two-character forms and the pets count there.
_ZH_START_WORDS = [w for w in _ZH_WORDS if len(w) > 1 or w in ("猫", "狗")]
_ZH_START = re.compile(r"^(?:用户|我)?(?:的)?(" + "|".join(map(re.escape, _ZH_START_WORDS)) + ")")
# "给我妈 / 跟我姐 / to my mom / for my son": the relation is the object of something the
# user does ("我每个月给我妈打多少钱？", "How much do I wire to my mom?"), so the fact asked
# is the user's own
_ZH_ASK = re.compile(r"(?<![给跟和陪带帮替为对向与])(?:我|咱)(?:的|家|们家的?)?("
                     + "|".join(map(re.escape, _ZH_WORDS)) + ")")
_EN_WORDS = "|".join(sorted(map(re.escape, _EN), key=len, reverse=True))
_EN_START = re.compile(rf"^(?:the\s+)?(?:user['’]s\s+|my\s+|his\s+|her\s+)?({_EN_WORDS})s?\b", re.I)
_EN_ASK = re.compile(rf"(?<!\bto )(?<!\bfor )(?<!\bwith )(?<!\bfrom )(?<!\bat )(?<!\bby )"
                     rf"\bmy\s+(?:(?:\w+)\s+)?({_EN_WORDS})s?\b", re.I)
_EN_ANY = re.compile(rf"\b({_EN_WORDS})s?\b", re.I)
_ZH_NOT_RELATION = ("妈妈的味道", "猫眼", "狗仔")  # start with a relation word but aren't one


def _zh_key(word: str) -> str:
    return _ZH[word]


def about_of(text: str) -> str:
    """Whom the memory ``text`` is about: a relation key (``"妹妹"``, ``"wife"``, ``"dog"``)
    when it starts with one, else ``"user"``."""
    t = text.strip()
    m = _ZH_START.match(t)
    if m and not t.startswith(_ZH_NOT_RELATION):
        return _zh_key(m.group(1))
    m = _EN_START.match(t)
    if m:
        return _EN[m.group(1).lower()]
    return USER


def asks_about(question: str) -> str:
    """Whose fact ``question`` asks for: the relation after "我/我的/my" if there is one
    ("我女儿…", "my son's…"), else ``"user"``.

    Only the first such relation counts; a question that names two people ("我妈和我姐谁
    大？") is about the first. A question that says 我自己 / myself is about the user."""
    if re.search(r"我自己|本人|\bmyself\b|\bme personally\b", question, re.I):
        return USER
    m = _ZH_ASK.search(question)
    if m:
        return _zh_key(m.group(1))
    m = _EN_ASK.search(question)
    if m:
        return _EN[m.group(1).lower()]
    return USER


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    if b in _GENERIC.get(a, ()) or a in _GENERIC.get(b, ()):
        return True
    return any(a in g and b in g and (a in ("孩子", "kid") or b in ("孩子", "kid")) for g in _GROUPS)


def mentions(question: str, who: str) -> bool:
    """Does ``question`` name the relation ``who`` anywhere (not only after 我/my)?"""
    if who == USER:
        return True
    words = [w for w, k in _ZH.items() if _same(k, who) and len(w) > 1] + \
            [w for w, k in _ZH.items() if _same(k, who) and len(w) == 1 and k == w]
    if any(w in question for w in words):
        return True
    return any(_same(_EN[m.group(1).lower()], who) for m in _EN_ANY.finditer(question))


# A question about the whole household ("带全家去欧洲", "all of us") concerns each of its
# members: their facts may change the advice (a son's exam, a father's wheelchair).
_FAMILY_KEYS = frozenset(
    "妈妈 爸爸 老婆 老公 姐姐 妹妹 哥哥 弟弟 儿子 女儿 孩子 爷爷 奶奶 外公 外婆 猫 狗 "
    "mother father wife husband partner sister brother son daughter kid grandmother "
    "grandfather cat dog".split())
_FAMILY_WORDS = re.compile(
    r"全家|一家|家人|家里人|我们家|咱家|老人孩子|"
    r"\b(?:the|my|our|whole) family\b|\ball of us\b|\bthe (?:whole )?(?:kids|family)\b|"
    r"\bour kids\b", re.I)


def fits(memory_about: str, question: str, kind: str = "fact") -> bool:
    """May a memory about ``memory_about`` answer ``question`` (of ``kind``, see
    :func:`gya_memory.answer.questions.question_kind`)?

    - a fact question about a relation (我妹妹在哪上班？): only memories about that relation;
    - any other question: memories about the user, and memories about a relation the
      question names somewhere ("母亲节给妈妈送什么？" takes "妈妈膝盖不好"; advice for a
      visit of "my sister" may need the user's own diet too);
    - an advice or general question about the whole household (全家, "all of us"): a memory
      about one of its members (儿子浩浩中考 for 五一带全家去欧洲)."""
    target = asks_about(question)
    if target != USER and kind == "fact":
        return _same(memory_about, target)
    if memory_about == USER or mentions(question, memory_about):
        return True
    return kind != "fact" and memory_about in _FAMILY_KEYS and bool(_FAMILY_WORDS.search(question))


# -- whom a written memory is about (the write path, notebook 10) ---------------------------
_SELF = frozenset("user|the user|用户|用户本人|我|我自己|自己|本人|me|myself".split("|"))
_ZH_REL = "(" + "|".join(map(re.escape, _ZH_START_WORDS)) + ")"
_NAMED = re.compile(rf"\b(?i:my|our|user's)\s+(?:\w+\s+)?((?i:{_EN_WORDS}))s?,?\s+([A-Z][a-z]+)|{_ZH_REL}"
                    r"(?:叫([\u4e00-\u9fff]{2})|([小老阿][\u4e00-\u9fff]))|(我)?叫([\u4e00-\u9fff]{2})")


def names_in(texts: list[str]) -> dict[str, str]:
    """Whom each name in ``texts`` (the user's turns, the model's ``about`` fields) stands for:
    a relation's key ("my daughter Mia", "妹妹小雨", "user's dog Biscuit", "我家猫年糕"),
    ``"user"`` for the user's own name ("我叫张三"), or the name itself for someone named
    without a relation ("一只柯基叫旺财").

    >>> names_in(["My daughter Mia starts school", "我叫张三，一只柯基叫旺财", "我家猫年糕"])
    {'Mia': 'daughter', '张三': 'user', '旺财': '旺财', '年糕': '猫'}
    """
    out: dict[str, str] = {}
    for m in _NAMED.finditer("\n".join(texts)):
        en, name, zh, called, short, me, other = m.groups()
        key = _EN[en.lower()] if en else _zh_key(zh) if zh else USER if me else other
        out.setdefault(name or called or short or other, key)
    for text in texts:  # a short "about": all after the relation word is the name
        m = re.fullmatch(r"(?:用户的|我家的?|我的)?" + _ZH_REL + r"([\u4e00-\u9fff]{1,3})", text)
        if m and m.group(2) not in _ZH:
            out.setdefault(m.group(2), _zh_key(m.group(1)))
    return out


def written_about(said: str, fact: str, names: dict[str, str]) -> str:
    """Whom a fact the model wrote is about, as a key :func:`fits` reads, from its ``about``
    field (``said``), the fact and the ``names`` of :func:`names_in`. Stored as the model
    wrote it, "妹妹小雨" would never fit "我妹妹在哪读书？" and 张三 (the user's own name)
    never "我是做什么的？". A relation becomes its key, a known name its relation, someone the
    rule can't place keeps the model's words ("user's nurse", "小林"); a fact said to be the
    user's is about whom it opens with: a relation (:func:`about_of`) or a known name.

    >>> names = {"Mia": "daughter", "张三": "user"}
    >>> [written_about(s, f, names) for s, f in [("用户的妹妹小雨", "小雨在杭州读研"),
    ...     ("张三", "张三是做后端开发的"), ("user", "Mia goes swimming"), ("user's nurse", "No grapefruit")]]
    ['妹妹', 'user', 'daughter', "user's nurse"]
    """
    said = " ".join(said.split()) or USER  # an empty "about" is the user, as a missing one is
    if said.lower() in _SELF:
        first = re.match(r"[A-Z][a-z]+|[\u4e00-\u9fff]{2}", fact)
        key = about_of(fact)
        return names.get(first.group(0), USER) if key == USER and first else key
    en, zh = _EN_ANY.search(said), next((w for w in _ZH_WORDS if w in said), None)
    return _EN[en.group(1).lower()] if en else _ZH[zh] if zh else next(
        (k for n, k in names.items() if n in said), said)
