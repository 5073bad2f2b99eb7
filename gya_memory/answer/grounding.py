"""Grounding (有据可依): what an answer rests on, checked by visible rules, not by a model.

The article's acceptance check asks three things of an answer: did it use the memory it was
given (用上记忆), did it invent facts about the user (不编造), and, with nothing relevant
stored, did it admit it doesn't know (承认不知道)? Two rules answer them, and both return the
same result, a :class:`Grounding` with one :attr:`~Grounding.verdict`:

- ``"invented"``: the answer states something about the user that it was not given (this
  wins over everything else);
- ``"off topic"``: it rests only on memories that were given but don't answer the question
  (known only when the caller says which memories do: ``relevant``);
- ``"used"``: it uses a memory it was given;
- ``"admits"``: it says it doesn't know;
- ``"no user facts"``: none of these: it answers without the user's facts (general advice).

:func:`ground` compares the *content* of the answer with the memories it was given and with
the question, and needs nothing else:

- content units: Chinese character bigrams (stop characters and bigrams dropped), English
  content words (stop words dropped, a plural ``s`` stripped), numbers, and capitalised
  names; so a paraphrase that keeps one key term ("花生", "shellfish", "7") still counts;
- a memory is **used** when the answer shares a unit with it that the question doesn't have;
- a **claim** is a clause that states something about the user ("你对…过敏", "your wife is…",
  "I usually fly with…") rather than giving advice ("你可以…", "you should…"); a claim whose
  units appear in neither the memories given nor the question is **invented**;
- the answer **admits** not knowing when it says so in any of the usual ways (不知道 / 没有
  提到 / 记忆库里没有 / I don't know / you haven't told me / there's nothing about…);
- ``[n]`` citations are read too.

:func:`check_grounding` is the simpler **key-term rule** (关键词) of notebook 06: the caller
names a few key terms per memory; a term in the answer means its memory was used if it was
given, and invented if it was not. Notebook 06 sets the two rules side by side.

Rules like these miss what they have no unit for (a made-up fact phrased in words that are
also in the question) and can flag a harmless detail as a claim; notebook 09 measures how
often :func:`ground` agrees with hand labels.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # check_grounding reads a trace's answer and placed memories, nothing else
    from gya_memory.answer.agent import Trace

# -- content units ---------------------------------------------------------------------------
from gya_memory.base.text import HAN_RUN_RE as _HAN  # noqa: E402  (one Han definition, in text.py)
from gya_memory.base.text import STOP_CJK_BIGRAMS, STOP_CJK_CHARS, STOP_WORDS  # noqa: E402
_LATIN = re.compile(r"[A-Za-z][A-Za-z'’\-]*|\d+(?:[.:,]\d+)*")
# The stop words are the retrieval ones (gya_memory.base.text: one list), changed in two ways
# for reading answers: the words answers are made of ("建议", "recommend", "however") are added,
# and a few that retrieval drops are kept (the two lists were once chosen apart, on different
# sets; keeping these exactly keeps every measured outcome as it was).
ANSWER_STOP_EN = frozenset(
    "all always another answer aren avoid based best better bit can't careful check couldn "
    "detail details didn doesn doing don don't each easy enjoy everything fine fun get go "
    "going good got great hard hasn haven having help however i'm important information isn "
    "it's keep know let let's like lot lots made make many maybe memories memory mention "
    "mentioned mine more most much need needs never nice note nothing often ok okay one only "
    "other own perhaps please provided question really recommend recommended risk risky safe "
    "safer said same say shouldn skip sorry specific stay store such suggest sure t take "
    "taking tell thing things think time today told tomorrow two unfortunately usually want "
    "wasn way well won wouldn yes you're yours".split()
)
ANSWER_STOP_ZH_BIGRAMS = frozenset(
    "一下 一些 不知 不过 但是 你们 你的 信息 可以 回答 因为 如果 就是 已经 应该 建议 您的 我们 "
    "我的 或者 所以 提供 提到 时候 比较 注意 清楚 相关 知道 自己 记忆 资料 还是 这样 那样 问题 "
    "需要 非常".split()
)
_STOP_ZH_CHARS = (STOP_CJK_CHARS - frozenset("什户用")) | frozenset("不很您没还")
_KEPT_ZH_BIGRAMS = frozenset("么事 么用 了吗 他的 哪儿 她的 是什 是哪 是谁 的吗".split())
_STOP_ZH_BIGRAMS = (STOP_CJK_BIGRAMS - _KEPT_ZH_BIGRAMS) | ANSWER_STOP_ZH_BIGRAMS
_STOP_EN = (STOP_WORDS - {"days", "lately"}) | ANSWER_STOP_EN


def content_units(text: str) -> set[str]:
    """What an answer or a memory says, as comparable units (see the module docstring)."""
    units: set[str] = set()
    for run in _HAN.findall(text):
        grams = [run[i:i + 2] for i in range(len(run) - 1)]
        units.update(g for g in grams
                     if g not in _STOP_ZH_BIGRAMS and not any(c in _STOP_ZH_CHARS for c in g))
        if len(run) == 1 and run not in _STOP_ZH_CHARS:
            units.add(run)
    for word in _LATIN.findall(text):
        w = word.lower().replace("’", "'").removesuffix("'s").strip("'-")
        if not w or w in _STOP_EN:
            continue
        if w[0].isdigit():
            units.add(w)
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        if len(w) > 2 and w not in _STOP_EN:
            units.add(w)
    return units


# -- admitting, claims, citations -----------------------------------------------------------
ADMITS = re.compile(
    r"不知道|不清楚|无法(确定|判断|得知|知道|回答|提供)|不确定|没有(相关|提供|关于|足够|记录|提到|说过|告诉)|"
    r"未(提及|提到|记录|告诉)|还?(没|没有)(跟我|和我|对我|向我)?(说|提|讲|告诉)(过|起|到)?|记忆(库)?(里|中)?(没有|并没有|没)|资料(里|中)?没有|"
    r"don['’]t know|do not know|not sure|no (information|record|memory|details|mention)|"
    r"(haven['’]t|have not|didn['’]t|did not|never) (mention|tell|told|share|said|say)|"
    r"can['’]t (tell|say|know|determine)|cannot (tell|say|know|determine)|unable to|"
    r"don['’]t have (any )?(information|details|a record|that)|do not have (any )?(information|details)|"
    r"(nothing|no information|no details) (about|on|in)|(isn['’]t|is not|wasn['’]t|was not) (mentioned|stored|in)|"
    r"not (mentioned|stored|recorded|in (the|my) (memory|memories|notes))",
    re.IGNORECASE,
)

_CLAUSES = re.compile(r"[。！？!?；;，,：:、\n]+|(?<=[.])\s+")
_ABOUT_USER = re.compile(
    r"[你您我]|\b(you|your|yours|you're|you've|you'll|my|i|i'm|i've|me)\b", re.IGNORECASE)
_ADVICE = re.compile(
    r"可以|建议|应该|最好|不妨|记得|注意|考虑|试试|尽量|避免|别忘|请|如果|是否|吗|"
    r"\b(should|could|can|might|may|try|consider|recommend|suggest|avoid|make sure|remember|"
    r"if|whether|please|let me know)\b",
    re.IGNORECASE,
)
_CITE = re.compile(r"\[(\d{1,3})\]")


def clauses(text: str) -> list[str]:
    """The answer cut into clauses: at sentence ends, commas and colons."""
    return [c.strip() for c in _CLAUSES.split(text) if c and c.strip()]


def is_claim(clause: str) -> bool:
    """Does this clause state a fact about the user (not advice, not a question)?"""
    return bool(_ABOUT_USER.search(clause)) and not ADMITS.search(clause) \
        and not _ADVICE.search(clause)


# -- the result: one for both rules ----------------------------------------------------------
VERDICTS = ("invented", "off topic", "used", "admits", "no user facts")  # first match wins


@dataclass(frozen=True)
class Grounding:
    """What one answer rests on, by either rule (:func:`ground` or :func:`check_grounding`)."""

    used: list[int]  # the memories given (their indexes) that the answer uses
    invented: list[str]  # what it says about the user that it was not given (claims or terms)
    admits_unknown: bool  # does it say it doesn't know?
    cites: list[int] = field(default_factory=list)  # [n] references to the memory block
    off_topic: list[int] = field(default_factory=list)  # of ``used``: those that don't answer
    unsupported_units: list[str] = field(default_factory=list)  # the words behind ``invented``

    @property
    def verdict(self) -> str:
        """The first of :data:`VERDICTS` that holds."""
        if self.invented:
            return "invented"
        if self.used and self.off_topic == self.used:
            return "off topic"
        if self.used:
            return "used"
        if self.admits_unknown:
            return "admits"
        return "no user facts"


def _cites(answer: str) -> list[int]:
    return sorted({int(n) for n in _CITE.findall(answer)})


def ground(answer: str, memories: Sequence[str], question: str = "",
           relevant: Sequence[str] | None = None) -> Grounding:
    """The content-unit rule: check ``answer`` against the ``memories`` it was given and the
    ``question``. ``relevant``, if given, lists the memories that actually answer the question:
    an answer that uses only others is *off topic*.

    >>> g = ground("你对花生过敏，宫保鸡丁里有花生，最好别吃。", ["对花生过敏"], "我能吃宫保鸡丁吗？")
    >>> g.used, g.invented, g.verdict
    ([0], [], 'used')
    >>> ground("I don't know; you haven't told me.", [], "What's my wife's job?").verdict
    'admits'
    >>> ground("Your wife is a nurse.", [], "What's my wife's job?").invented
    ['Your wife is a nurse.']
    >>> ground("你对花生过敏。", ["对花生过敏", "喜欢川菜"], "我能吃宫保鸡丁吗？", relevant=[]).verdict
    'off topic'
    """
    q_units = content_units(question)
    mem_units = [content_units(m) for m in memories]
    answer_units = content_units(answer)
    used = [i for i, mu in enumerate(mem_units) if (mu & answer_units) - q_units]
    known = set().union(q_units, *mem_units) if mem_units else set(q_units)
    known_chars = {c for u in known if _HAN.fullmatch(u) for c in u}
    invented: list[str] = []
    unsupported: list[str] = []
    for clause in clauses(answer):
        if not is_claim(clause):
            continue
        new = sorted(u for u in content_units(clause) - known
                     if not _covered(u, known_chars, known))
        if new:
            invented.append(clause)
            unsupported += new
    off_topic = [] if relevant is None else [i for i in used if memories[i] not in relevant]
    return Grounding(used=used, invented=invented, admits_unknown=bool(ADMITS.search(answer)),
                     cites=_cites(answer), off_topic=off_topic, unsupported_units=unsupported)


def _covered(unit: str, known_chars: set[str], known: set[str]) -> bool:
    """Is ``unit`` given after all, in another form? A Chinese bigram both of whose
    characters were given ("吃花生" makes "花生吃" no new fact); an English word sharing its
    first five letters with a given one ("allergy" after "allergic")."""
    if _HAN.fullmatch(unit):
        return all(c in known_chars for c in unit)
    stem = unit[:5]
    return len(unit) >= 5 and any(k[:5] == stem for k in known if len(k) >= 5)


def check_grounding(trace: Trace, facts: Mapping[str, Sequence[str]],
                    relevant: Sequence[str] | None = None) -> Grounding:
    """The key-term rule: judge ``trace.answer`` against the user's facts, term by term.

    ``facts`` maps each memory text to its key terms (e.g. ``{"最近在戒咖啡，想少喝一点":
    ["咖啡"]}``); terms are compared case-insensitively. A memory given to the model
    (``trace.assembly.placed``) is *used* when the answer contains one of its terms; a term of
    a memory that was *not* given is *invented* (the model can only have guessed it).
    ``relevant``, if given, lists the memories that actually answer the question: an answer
    resting only on other memories is *off topic*. Words a rule has no term for (an invented
    name, a paraphrase) are invisible to it: read the answer too, or use :func:`ground`.
    """
    given = [p.hit.text for p in trace.assembly.placed]
    answer = trace.answer.lower()
    found = {m for m, terms in facts.items() if any(t.lower() in answer for t in terms)}
    used = [i for i, text in enumerate(given) if text in found]
    invented = [t for m, terms in facts.items() if m not in given
                for t in terms if t.lower() in answer]
    off_topic = [] if relevant is None else [i for i in used if given[i] not in relevant]
    return Grounding(used=used, invented=invented,
                     admits_unknown=bool(ADMITS.search(trace.answer)), cites=_cites(trace.answer),
                     off_topic=off_topic, unsupported_units=list(invented))
