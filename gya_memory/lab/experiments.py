"""The placement experiment: does the answer use the memory, depending on where it sits?

For labelled queries (:mod:`gya_memory.lab.calibration`), the gold memory is put into the
context together with a few other memories of the same user, in one of the placements of
:mod:`gya_memory.answer.context` (system message, user message, separate block) and at one position
in the block (first, or buried in the middle). The model answers; the answer counts as
*using the memory* when it contains a key term of the gold memory that the question does not
already contain (:func:`key_terms`). Notebook 05 runs a small sample; the benchmark
``benchmarks/bench_llm.py`` runs the full set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gya_memory.lab.labelled import LabelledSet, Query
from gya_memory.answer.context import Policy, assemble
from gya_memory.base.text import HAN_RUN_RE, STOP_CJK_BIGRAMS, STOP_WORDS
from gya_memory.answer.llm.interface import ChatLLM
from gya_memory.semantic.values import Hit

Position = Literal["first", "middle"]
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}|\d[\w-]*")


@dataclass(frozen=True)
class Trial:
    """One model call of the experiment."""

    query_id: str
    lang: str
    placement: str
    position: str
    used: bool
    answer: str
    terms: tuple[str, ...]


def key_terms(memory: str, question: str) -> list[str]:
    """Words of ``memory`` that would show the answer used it: Chinese character pairs and
    English words (4+ letters) or numbers that the question does not contain, minus stop
    words. A visible rule with known limits: a paraphrased answer ("quit coffee" for
    "cutting back on coffee") may use the memory without repeating a term."""
    q = question.lower()
    terms: list[str] = []
    for run in HAN_RUN_RE.findall(memory):
        for i in range(len(run) - 1):
            pair = run[i : i + 2]
            if pair not in q and pair not in STOP_CJK_BIGRAMS and pair not in terms:
                terms.append(pair)
    for word in _WORD.findall(memory):
        w = word.lower().removesuffix("'s")
        if w not in q and w not in STOP_WORDS and w not in terms:
            terms.append(w)
    return terms


def used_memory(answer: str, terms: Iterable[str]) -> bool:
    text = answer.lower()
    return any(t.lower() in text for t in terms)


def arrange(gold: str, others: Sequence[str], position: Position) -> list[Hit]:
    """The gold memory first or in the middle of the others; scores fall with the position
    (the block shows them), so the block reads as ranked."""
    texts = list(others)
    texts.insert(0 if position == "first" else len(texts) // 2 + len(texts) % 2, gold)
    return [Hit(f"m{i}", round(0.9 - 0.01 * i, 3), t, {})
            for i, t in enumerate(texts)]


def placement_trials(
    llm: ChatLLM,
    labelled: LabelledSet,
    queries: Sequence[Query],
    *,
    placements: Sequence[str] = ("system", "user", "block"),
    positions: Sequence[Position] = ("first",),
    distractors: int = 4,
    max_tokens: int = 40,
) -> list[Trial]:
    """Ask each query once per placement and position; return one :class:`Trial` each."""
    trials = []
    for q in queries:
        if not q.gold:
            raise ValueError(f"query {q.id} has no gold memory; pick answerable queries")
        gold = labelled.memory(q.gold[0]).text
        others = [m.text for m in labelled.memories_of(q.user) if m.id not in q.gold][:distractors]
        terms = tuple(key_terms(gold, q.text))
        for position in positions:
            items = arrange(gold, others, position)
            for placement in placements:
                policy = Policy(top_k=len(items), budget_chars=None, placement=placement,  # type: ignore[arg-type]
                                language="zh" if q.lang == "zh" else "en")
                messages = assemble(q.text, items, policy).messages
                answer = llm.chat(messages, max_tokens=max_tokens).text
                trials.append(Trial(q.id, q.lang, placement, position,
                                    used_memory(answer, terms), answer, terms))
    return trials


def summarise(trials: Sequence[Trial]) -> Any:
    """Share of answers that used the memory, per placement and position (a pandas table)."""
    import pandas as pd

    frame = pd.DataFrame([t.__dict__ for t in trials])
    table = frame.pivot_table(index="placement", columns="position", values="used",
                              aggfunc="mean")
    table.columns.name = "gold memory"
    return table.round(3)
