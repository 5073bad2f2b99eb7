"""Proposing memories (提出记忆): the first step from conversation to memory.

Why (为什么): the article writes its memories by hand; a real agent writes them from what the
user said. The local chat model reads the user's turns of one session (numbered; relative
dates already resolved by :func:`gya_memory.answer.dates.resolve`) and writes one JSON object
per fact: the fact as a self-contained note in the user's language, whom it is about, the
turn it came from (:func:`extraction_messages`). Only the user's turns are shown: what the
assistant said is not a fact about the user. Small models write broken JSON, so
:func:`parse_proposals` takes what it can read object by object, checks every field, and
drops (and counts) the rest; a half-read fact is never stored. A fact that names someone or
gives a number the user never said (:func:`unsaid`) is dropped too: the model copies names
from its worked example. (A second look by the model,
"still useful next month?", was measured and kept off: ``gya_memory.lab.writing_levers.screen``.)
What happens to each proposal next is :mod:`gya_memory.answer.writing`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from gya_memory.answer.dates import resolve
from gya_memory.base.text import language_of

MAX_FACT_CHARS = 200


@dataclass(frozen=True)
class Proposal:
    """One memory the model proposed, checked."""

    text: str
    about: str  # "user" or who else ("user's sister Priya", "user's cat 年糕")
    turn: int  # index in the session's messages of the user turn it came from


# -- 1. propose ------------------------------------------------------------------------------
EXTRACT_SYSTEM = (
    "You read what a user said in one conversation and write down the facts worth remembering "
    "about the user and the people, pets and things in their life: health, diet, allergies, "
    "family, work, home, plans with a date, preferences, equipment. Skip greetings, thanks, "
    "questions the user asked, and passing details of today (what they had for lunch). Skip "
    "hypotheticals (\"if I ever…\") and jokes. When the user corrects themself, keep only the "
    "correction.\n"
    "Write each fact as a short note in your own words, not the user's sentence, in English. "
    "A fact about the user has no subject "
    "(\"Allergic to penicillin\"). A fact about someone else names them (\"User's sister "
    "Chloe works at a bakery in Leeds\"). Copy dates as written in brackets.\n"
    "One JSON object per line: {\"fact\": \"...\", \"about\": \"user\" or who, \"turn\": n}. "
    "If there is nothing worth remembering, write: none"
)
EXTRACT_SYSTEM_ZH = (
    "你读用户在一次对话里说的话，记下值得长期记住的事实：关于用户本人，以及用户生活里的人、宠物、"
    "东西——健康、饮食、过敏、家人、工作、住处、有日期的计划、偏好、装备。不记：打招呼、道谢、用户问的"
    "问题、今天的琐事（比如午饭吃了什么）、假设（“要是我以后……”）和玩笑。用户改口时只记改正后的说法。\n"
    "每条事实用你自己的话写成一句简短的中文备忘，不要照抄用户的原话。关于用户本人的不写主语（“对青霉素过敏”）；关于别人的要写明是谁"
    "（“妹妹小雨在杭州读研”）。括号里的日期照抄。\n"
    "每行一个 JSON 对象：{\"fact\": \"...\", \"about\": \"user\" 或是谁, \"turn\": 编号}。"
    "没有值得记的就写：none"
)


def session_date(when: date | datetime | str) -> date:
    if isinstance(when, datetime):
        return when.date()
    if isinstance(when, date):
        return when
    if isinstance(when, str):
        try:
            return datetime.fromisoformat(when).date()
        except ValueError:
            pass
    raise ValueError(f"when must be a date, a datetime or an ISO date string, got {when!r}")


def check_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The session's messages as ``{"role", "content"}`` dicts (user and assistant only),
    or a ``ValueError`` that says which one is wrong."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ValueError("messages must be a list of {'role': ..., 'content': ...} dicts")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or m.get("role") not in ("user", "assistant") \
                or not isinstance(m.get("content"), str):
            raise ValueError(f"messages[{i}] must be {{'role': 'user' or 'assistant', "
                             f"'content': str}}, got {m!r}")
        out.append({"role": str(m["role"]), "content": str(m["content"])})
    if not any(m["role"] == "user" for m in out):
        raise ValueError("messages has no user turn: nothing to remember")
    return out


def session_language(messages: Sequence[Mapping[str, str]]) -> str:
    """The language the user spoke: ``zh`` if most user characters are Chinese text."""
    said = " ".join(m["content"] for m in messages if m["role"] == "user")
    return language_of(said)


# One worked example per language: a small model copies the shape of an example far better
# than it follows a description (the first tuning run, without them, copied whole user turns
# and said "none" to 9 of 20 Chinese sessions).
EXAMPLE = (
    "Conversation date: 2026-05-04\nWhat the user said:\n"
    "[0] Hi! My daughter Lily starts swimming lessons on Saturday (2026-05-09), any tips?\n"
    "[2] Thanks. I'm allergic to chlorine though, so I'll just watch from the side.\n"
    "[4] Oh and we moved to Bristol last month (2026-04), so it's a new pool.",
    '{"fact": "User\'s daughter Lily starts swimming lessons on 2026-05-09", "about": "user\'s daughter Lily", "turn": 0}\n'
    '{"fact": "Allergic to chlorine", "about": "user", "turn": 2}\n'
    '{"fact": "Moved to Bristol in 2026-04", "about": "user", "turn": 4}',
)
EXAMPLE_ZH = (
    "对话日期：2026-05-04\n用户说的话：\n"
    "[0] 你好！我女儿朵朵周六（2026-05-09）开始上游泳课，有什么要注意的？\n"
    "[2] 谢谢。不过我对氯过敏，我就在旁边看着。\n"
    "[4] 对了，我们上个月（2026-04）搬到了成都，所以是个新泳池。",
    '{"fact": "女儿朵朵2026-05-09开始上游泳课", "about": "女儿朵朵", "turn": 0}\n'
    '{"fact": "对氯过敏", "about": "user", "turn": 2}\n'
    '{"fact": "2026-04搬到了成都", "about": "user", "turn": 4}',
)


# A correction in the same breath (self-repair): "52 minutes, sorry, 55", "我对青霉素……不对，我是对
#头孢过敏". Left in, the model stores the first form (the hand labels of the test run found
# both). The rule keeps the repair: a number replaced by the number right after the marker, or,
# in Chinese, the clause before 不对 / 说错了 / 口误 dropped when the clause after it restates it
# (they share a character). A marker with no restatement ("好主意。哦不对，深圳那趟不是下周三，是下周四"
# says what changed in its own words) is left alone.
_REPAIR_NUMBER = re.compile(
    r"(?<![\d.])\d+(?:\.\d+)?(?P<unit>[^\d,，。.!?！？]{0,24}?)[,，]?\s*"
    r"(?:sorry|i mean|no wait|不对|说错了)[,，]?\s*(?P<new>\d+(?:\.\d+)?)(?!\.?\d)", re.I)
_REPAIR_ZH = re.compile(r"(?P<old>[^。！？!?；;，,]*?)(?:……|…|，|,)?(?:不对|说错了|口误)[，,]\s*"
                        r"(?P<new>[^。！？!?；;，,]+)")


def self_repaired(turn: str) -> str:
    """``turn`` with a correction in the same breath applied (see the comment above).

    >>> self_repaired("My best 10k is 52 minutes, sorry, 55, I always round down.")
    'My best 10k is 55 minutes, I always round down.'
    >>> self_repaired("我对青霉素……不对，我是对头孢过敏，青霉素没事。")
    '我是对头孢过敏，青霉素没事。'
    >>> self_repaired("好主意。哦不对，深圳那趟不是下周三，是下周四。")
    '好主意。哦不对，深圳那趟不是下周三，是下周四。'
    >>> self_repaired("我每天跑5公里，不对，6公里。")
    '我每天跑6公里。'
    """
    def number(m: re.Match[str]) -> str:
        unit = m.group("unit")  # "52 minutes, sorry, 55" keeps "minutes"; "5公里，不对，6公里" has its own
        said_again = unit.strip() and m.string[m.end():].lstrip().startswith(unit.strip())
        return m.group("new") + ("" if said_again else unit)

    turn = _REPAIR_NUMBER.sub(number, turn)

    def clause(m: re.Match[str]) -> str:
        old = set(re.findall(r"[\u4e00-\u9fff]", m.group("old")))
        return m.group("new") if old & set(m.group("new")) else m.group(0)

    return _REPAIR_ZH.sub(clause, turn)


def extraction_messages(messages: Sequence[Mapping[str, Any]],
                        when: date | datetime | str) -> list[dict[str, str]]:
    """The extraction prompt: the instructions in the user's language, one worked example,
    then the user's turns numbered by their index in ``messages``, with relative dates
    resolved against ``when``."""
    checked = check_messages(messages)
    today = session_date(when)
    zh = session_language(checked) == "zh"
    said = "\n".join(f"[{i}] {resolve(self_repaired(' '.join(m['content'].split())), today)}"
                     for i, m in enumerate(checked) if m["role"] == "user")
    head = (f"对话日期：{today.isoformat()}\n用户说的话：\n" if zh
            else f"Conversation date: {today.isoformat()}\nWhat the user said:\n")
    shown, written = EXAMPLE_ZH if zh else EXAMPLE
    return [{"role": "system", "content": EXTRACT_SYSTEM_ZH if zh else EXTRACT_SYSTEM},
            {"role": "user", "content": shown}, {"role": "assistant", "content": written},
            {"role": "user", "content": head + said}]


_OBJECT = re.compile(r"\{[^{}]*\}", re.S)
_FIELD = re.compile(r'"?(fact|about|turn)"?\s*[:：]\s*("(?:[^"\\]|\\.)*"|\d+)', re.S)


def _read_object(raw: str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
        return value if isinstance(value, dict) else None
    except json.JSONDecodeError:
        pass
    # the usual breakage of small models: single quotes, a trailing comma, a missing quote
    fields = {}
    for key, value in _FIELD.findall(raw.replace("'", '"')):
        try:
            fields[key] = json.loads(value)
        except json.JSONDecodeError:
            return None
    return fields or None


def parse_proposals(text: str, messages: Sequence[Mapping[str, Any]]) -> tuple[list[Proposal], list[tuple[str, str]]]:
    """The proposals the model's ``text`` holds, each checked, and what was dropped (with
    why). A fact must be a non-empty string (at most 200 characters) in the user's language;
    ``turn`` must name a user turn of ``messages``; ``about`` defaults to ``"user"`` and is
    stored as a key the gate reads (:func:`gya_memory.answer.about.written_about`)."""
    from gya_memory.answer.about import names_in, written_about

    checked = check_messages(messages)
    language = session_language(checked)
    user_turns = [i for i, m in enumerate(checked) if m["role"] == "user"]
    said = " ".join(self_repaired(checked[i]["content"]) for i in user_turns)
    proposals: list[Proposal] = []
    dropped: list[tuple[str, str]] = []
    seen: set[str] = set()
    read = [(raw, _read_object(raw)) for raw in _OBJECT.findall(text)]
    names = names_in([checked[i]["content"] for i in user_turns]  # whom each name stands for
                     + [o["about"] for _, o in read if o and isinstance(o.get("about"), str)])
    rest = _OBJECT.sub("", text)
    for line in rest.splitlines():  # an object cut off by the token limit
        line = line.strip(" ,[]`")
        if line.startswith("{"):
            dropped.append((line, "unfinished object"))
    for raw, obj in read:
        if obj is None:
            dropped.append((raw, "not readable as an object"))
            continue
        fact = obj.get("fact")
        if not isinstance(fact, str) or not fact.strip():
            dropped.append((raw, "no fact"))
            continue
        fact = " ".join(fact.split()).strip(" 。.")
        if len(fact) > MAX_FACT_CHARS:
            dropped.append((raw, f"fact over {MAX_FACT_CHARS} characters"))
            continue
        if language_of(fact) != language:
            dropped.append((raw, f"not in the user's language ({language})"))
            continue
        fact = without_question(fact)
        if not fact:
            dropped.append((raw, "a question, not a fact"))
            continue
        if is_remark(fact):
            dropped.append((raw, "a passing remark, not a lasting fact"))
            continue
        if is_option(fact):
            dropped.append((raw, "an option weighed, not a fact"))
            continue
        missing = unsaid(fact, said, language)
        if missing:
            dropped.append((raw, f"not said by the user: {', '.join(missing)}"))
            continue
        turn = obj.get("turn")
        if isinstance(turn, str) and turn.strip().isdigit():
            turn = int(turn)
        if not isinstance(turn, int) or isinstance(turn, bool) or turn not in user_turns:
            # the model's numbering is the part it gets wrong most: the fact is still the
            # user's; take the user turn it shares most words with
            turn = _closest_turn(fact, checked, user_turns)
        about = obj.get("about")
        about = written_about(about if isinstance(about, str) else "user", fact, names)
        if fact in seen:
            dropped.append((raw, "repeated in the same reply"))
            continue
        seen.add(fact)
        proposals.append(Proposal(fact, about, turn))
    return proposals, dropped


_CLAUSE = re.compile(r"[，,；;]\s*")
_IF = re.compile(r"^(要是|如果|假如|万一|if\b|what if\b)", re.IGNORECASE)


def without_question(fact: str) -> str:
    """A proposal that ends in a question keeps only the statements before the question
    ("小美是回族，需要注意什么吗?" -> "小美是回族"); a question alone, or after an "if"
    ("要是我换成电车，是不是就不用操心了？"), leaves nothing. The user asked it; it is not a
    fact about them (the labelled set's *must not store: question*). Chosen on the tuning
    run's one question ("住新宿方便吗？"); on the test run it removed two and kept one fact.

    >>> without_question("小美是回族，需要注意什么吗?"), without_question("成都夏天一般多热？")
    ('小美是回族', '')
    """
    if not fact.rstrip().endswith(("?", "？")):
        return fact
    kept = [c for c in _CLAUSE.split(fact.rstrip())[:-1] if c.strip()]
    while kept and _IF.match(kept[-1].strip()):
        kept.pop()
    return "，".join(kept) if language_of(fact) == "zh" else ", ".join(kept)


_FEELING_ZH = re.compile(
    r"^(有点|有些|挺|很|又|真|好)?(紧张|开心|高兴|激动|期待|累|烦|难受|兴奋|压力(又|好|挺|很)?(来了|大))[了的啊呀吧]?$"
    r"|^.{0,6}?(不错|挺好的?|挺贵的?|好吃|好玩|有意思|太贵了?)[了的啊呀吧]?$"
    r"|^(感谢|谢谢|多谢)"
    r"|^从?[\u4e00-\u9fff]{1,4}回来了$|^[^，]{0,6}吃了(一|两|几|好几)(碗|顿|次|份)[^，就]{0,6}$")
_FEELING_EN = re.compile(
    r"^(a (bit|little) |so |very |really |kind of )?(nervous|excited|worried|happy|glad|thrilled|"
    r"stressed|anxious|tired|exhausted|grateful|thankful|relieved)$"
    r"|^.{1,40}\b(is|are|was|were) (going to be |gonna be )?(so |really |a )?(fun|great|nice|"
    r"awesome|amazing|awful|terrible|nightmare|pain)$"
    r"|^.{1,40} it is$"
    r"|^(said )?(thanks|thank you)\b"
    r"|^(user )?(just |got )?(back|returned|home) from( \w+){1,3}$", re.IGNORECASE)
_SUBJECT = re.compile(r"^(the )?user (is|was|feels|felt|got|just got) |^用户", re.IGNORECASE)
_PARTS = re.compile(r"\s*(?:[，,；;]|\bbut\b|\band\b|不过|但是?)\s*", re.IGNORECASE)


def is_remark(fact: str) -> bool:
    """Is ``fact`` only a passing remark: a feeling with no object ("Nervous but excited",
    "压力又来了，不过挺开心", "User is nervous"), an opinion of a thing in a few words ("气泡水不错",
    "Lunch at work is a nightmare"), thanks, or the way back from a trip and a meal on it ("Back
    from Iceland", 拉面吃了好几顿)? The labelled set's *must not store: small talk / trivia*. A
    feeling about something stays ("Nervous about flying" is worth keeping). Written from the
    tuning run's proposals; measured in docs/writing.md ("Passing remarks").

    >>> [is_remark(f) for f in ("气泡水不错", "Nervous but excited", "对花生过敏", "Nervous about flying")]
    [True, True, False, False]
    """
    parts = [p for p in _PARTS.split(_SUBJECT.sub("", fact.strip(" .。!！"))) if p]
    pattern = _FEELING_ZH if language_of(fact) == "zh" else _FEELING_EN
    return bool(parts) and all(pattern.search(p) for p in parts)


_OPTION_ZH = re.compile(r"(会不会|要不要|是不是|能不能|可不可以|好不好|行不行)|(吧|试试看?)$")
_OPTION_EN = re.compile(r"\b(will|would)\b(?! (like|love|rather|prefer))[^.]*\bif\b"
                        r"|\bif\b[^.]*\b(will|would)\b(?! (like|love|rather|prefer))", re.IGNORECASE)


def is_option(fact: str) -> bool:
    """Is ``fact`` an option the user weighed rather than something true of them: an A-not-A
    question without its question mark ("养一只猫陪它，会不会好点"), a choice said in passing
    ("一兰吧", "漏食玩具可以试试"), or what would happen if ("…will feed them in separate rooms
    if they have a bigger flat")? The labelled set's *must not store: hypothetical*. Written
    from the tuning run's unmatched proposals; measured in docs/writing.md ("Options weighed").

    >>> [is_option(f) for f in ("养一只猫陪它，会不会好点", "一兰吧", "对花生过敏", "Would like to visit Kyoto if it's cheap")]
    [True, True, False, False]
    """
    pattern = _OPTION_ZH if language_of(fact) == "zh" else _OPTION_EN
    return bool(pattern.search(fact.strip(" .。!！")))


_NAME = re.compile(r"(?<![\w'])[A-Z][a-z]+(?:-[A-Z][a-z]+)?")
_NOT_NAMES = frozenset("User I The A An He She They His Her Their It Its My We Our".split())
_ISO_DATE = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")
_NUMBER = re.compile(r"\d{2,}(?:\.\d+)?")


def unsaid(fact: str, said: str, language: str | None = None) -> list[str]:
    """The names and numbers of ``fact`` that ``said`` (the user's words) does not hold;
    ``language`` is the language of ``said`` when the caller knows it already.

    A name is a capitalised English word after the fact's first word ("User's daughter
    Lily…"); a number has two digits or more and is not part of a resolved date
    (``2026-05-09``: the model writes it from "May 9" and the conversation date). Chinese
    names are not compared, nor numbers where the user spoke Chinese (六千 → 6000): no rule
    here tells them apart reliably. Written after the hand labels of the test run found three facts about a
    daughter "Lily" the user never had: the name comes from the worked example (docs/writing.md,
    "Names and numbers the user never said").

    >>> unsaid("User's daughter Lily builds raised beds", "My daughter grows tomatoes")
    ['Lily']
    >>> unsaid("Training for the Edinburgh half on 2026-05-24", "the Edinburgh half on May 24")
    []
    >>> unsaid("Best 10k is 52 minutes", "My best 10k is 55 minutes")
    ['52']
    """
    low = said.lower()
    names = [m.group(0) for m in _NAME.finditer(fact)
             if m.start() > 0 and m.group(0) not in _NOT_NAMES and m.group(0).lower() not in low]
    numbers = [] if (language or language_of(said)) == "zh" else [
        n for n in _NUMBER.findall(_ISO_DATE.sub(" ", fact)) if n not in said]
    return list(dict.fromkeys(names + numbers))


def _closest_turn(fact: str, messages: Sequence[Mapping[str, str]], user_turns: Sequence[int]) -> int:
    from gya_memory.semantic.lexical import tokenize

    f = set(tokenize(fact))
    return max(user_turns, key=lambda i: (len(f & set(tokenize(messages[i]["content"]))), -i))


def propose(llm: Any, messages: Sequence[Mapping[str, Any]], when: date | datetime | str, *,
            max_tokens: int = 200) -> tuple[str, list[Proposal], list[tuple[str, str]]]:
    """Ask ``llm`` for the session's facts: its words, the proposals, what was dropped."""
    reply = llm.chat(extraction_messages(messages, when), max_tokens=max_tokens)
    proposals, dropped = parse_proposals(reply.text, messages)
    return reply.text, proposals, dropped
