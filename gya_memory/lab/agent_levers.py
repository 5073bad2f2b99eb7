"""The answer path's levers (回答路径上的实验开关), measured and kept off (issue 16).

Why they are here and not in the library (为什么不在库里): each was built to place or use the
relevant memory more often, measured on the acceptance set (``python -m
gya_memory.lab.acceptance``, README "The acceptance check"), and did not earn its place: what
it gained on the tuning split it lost on the test split, or it cost a generation per ask. They
stay runnable, so the measurement can be repeated (with a stronger model, say):

- **other candidates**: the cosine order, or Qdrant's fusion with BM25, instead of e5's
  latent terms: ``LabAgent(..., recall="dense" | "hybrid")``, :data:`Recall`;
- a **draft answer** ranks an advice question's candidates (HyDE on the answer side):
  ``LabAgent(..., draft={"en"})``, :data:`DRAFT_LANGUAGES`;
- a **direct wording** when exactly one memory is placed: ``LabAgent(..., single="direct")``,
  :func:`assemble_direct`;
- the **reader ranks advice candidates** for the judge's pool: :class:`ReaderGate`;
- a gate step, **changed since**, drops a fact a newer memory says has changed: :class:`ChangedGate`;
- the judge's prompts in English for every question: :class:`EnglishJudgeGate`.

:class:`LabAgent` is :class:`gya_memory.answer.agent.MemoryAgent` with the agent's levers,
through its hooks (``candidates_for``, ``rank``, ``build_context``, ``reply_to``, and
``screen``'s floor); with its defaults it is the library's agent.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, Literal

from gya_memory.answer.agent import CELL_STYLE, MemoryAgent, Trace
from gya_memory.answer.context import CLOSE, Assembly, Policy, assemble, language_for
from gya_memory.answer.gate import Gate, GateDecision
from gya_memory.answer.judge import ProbabilityModel, reader_relevance
from gya_memory.answer.llm.interface import Reply
from gya_memory.base.text import quote

Recall = Literal["dense", "hybrid", "terms"]
"""How a :class:`LabAgent` ranks its candidates. ``"terms"`` is the library's (the dense
search's first 30 re-ranked by e5's latent terms: ``MemoryAgent.candidates_for``); ``"dense"``
is the cosine order (the default before session 19: terms placed the relevant memory 25 -> 32
of 48 on the tuning split); ``"hybrid"`` fuses the dense and the lexical ranking inside Qdrant
(the dense side already above the gate's floor; ``score`` is then the fused score). Hybrid
was measured and not kept (docs/acceptance.md, "Hybrid candidates for the agent, also not kept"): on the
test sample it placed the relevant memory no more often (6 zh / 7 en of 18), used zh 3 -> 2,
en 3 -> 4."""

DRAFT_LANGUAGES: frozenset[str] = frozenset()
"""The languages in which an advice question's candidates are also ranked with a draft answer
(``LabAgent(..., draft={"en"})``): HyDE on the answer side. The model first answers with
no memory ("check with your employer about any potential conflicts"), and each of the question's nearest
memories is ranked by the mean of its cosine to the question and to that draft, read as a
passage. If nothing passes the gate, the draft is the answer.

Measured and kept off (issue 16, session 15; README, "The acceptance check"). On the tuning
split it ranked the relevant memory of 17 English advice questions among the first 3 for 11
instead of 8, but through the agent it placed two more relevant memories and used none more
(5 of 24), and on the test sample (18 English scenarios) it placed two fewer and used as
many (4 of 18), for 1.3 s more per ask. In Chinese the 1.5B model's drafts are one generic
sentence (建议你提前预约) and did not rank better (10 → 10 of 15 in the first 3)."""

DRAFT_DEPTH = 20
"""How many of the question's nearest memories the draft re-ranks."""

Single = Literal["plain", "direct"]

# One memory placed: "direct" asks the model to answer from it ("Since you ..., ...") in two or
# three sentences; "plain" (the library's) words it like several ("take these into account").
# With the relevant memory alone in the prompt it was used more often; beside the gate's other
# placements the model started from whichever fact was there (README, "The acceptance check").
DIRECT = {
    "zh": {"after": "用“你”称呼我，直接回答。如果上面这条情况会改变答案，先点明它（比如“你……，所以……”）。",
           "system": "你是一个贴心的助手。回答要简短，两三句话。"},
    "en": {"after": "Answer me directly, as \"you\". If this fact changes the answer, start "
                    "from it (\"Since you ..., ...\").",
           "system": "You are a helpful assistant. Keep answers short: two or three sentences."},
}


def assemble_direct(question: str, hits: Sequence[Any], policy: Policy = Policy(), *,
                    system: str | None = None, history: Sequence[dict[str, str]] = (),
                    kind: str | None = None) -> Assembly:
    """:func:`gya_memory.answer.context.assemble`, worded "direct" when exactly one memory is
    placed as plain facts: the closing line asks the model to answer from it, and the default
    system line (when ``system`` is not given) allows two or three sentences."""
    assembly = assemble(question, hits, policy, system=system, history=history, kind=kind)
    if len(assembly.placed) != 1 or policy.style != "plain":
        return assembly
    direct = DIRECT[language_for(question, policy)]
    messages = [dict(m) for m in assembly.messages]
    where = assembly.placed[0].message_index
    # the block ends "</memories>", then its closing line: that line is reworded
    head, fence, rest = messages[where]["content"].partition(f"{CLOSE}\n")
    _, newline, tail = rest.partition("\n")
    messages[where]["content"] = f"{head}{fence}{direct['after']}{newline}{tail}"
    if system is None:  # the default system line, alone or before the block ("system")
        _, gap, block = messages[0]["content"].partition("\n\n")
        messages[0]["content"] = f"{direct['system']}{gap}{block}"
    return replace(assembly, messages=messages)


@dataclass(frozen=True)
class DraftTrace(Trace):
    """A :class:`gya_memory.answer.agent.Trace` with the draft answer that also ranked the
    candidates (advice questions; ``None`` when there was none)."""

    draft: str | None = None

    def to_text(self, **options: Any) -> str:
        text = super().to_text(**options)
        if self.draft is None:
            return text
        head, cut, tail = text.partition("\ncandidates:")
        return (f"{head}\ndraft:    {quote(self.draft)} (ranked the candidates with the "
                f"question){cut}{tail}")

    def _repr_html_(self) -> str:
        table = super()._repr_html_()
        if self.draft is None:
            return table
        row = (f"<tr><th {CELL_STYLE}>draft</th><td {CELL_STYLE}>{html.escape(quote(self.draft))} "
               "(ranked the candidates with the question)</td></tr>")
        at = table.index(f"<tr><th {CELL_STYLE}>candidates</th>")
        return table[:at] + row + table[at:]


class LabAgent(MemoryAgent):
    """:class:`gya_memory.answer.agent.MemoryAgent` with the levers of this module:
    ``recall`` (:data:`Recall`), ``draft`` (the languages whose advice questions are ranked
    with a draft answer too) and ``single`` (``"direct"``: the wording of
    :func:`assemble_direct`). Its traces are :class:`DraftTrace`. One ask at a time: the draft
    of the running ask is kept on the agent."""

    def __init__(self, *args: Any, recall: Recall = "terms",
                 draft: Collection[str] = DRAFT_LANGUAGES, single: Single = "plain",
                 **options: Any) -> None:
        super().__init__(*args, **options)
        if recall not in ("dense", "hybrid", "terms"):
            raise ValueError(f"recall must be 'dense', 'hybrid' or 'terms', got {recall!r}")
        if isinstance(draft, str) or not set(draft) <= {"zh", "en"}:
            raise ValueError(f"draft is a set of languages ('zh', 'en'), got {draft!r}")
        if single not in ("plain", "direct"):
            raise ValueError(f"single must be 'plain' or 'direct', got {single!r}")
        self.recall = recall
        self.draft = frozenset(draft)
        self.single = single
        self._draft: tuple[list[dict[str, Any]], Reply, float] | None = None

    def drafts_for(self, question: str, kind: str, candidates: Sequence[Any],
                   policy: Policy) -> bool:
        """Does ``question`` get a draft answer to rank its candidates? Advice questions in
        the languages of ``draft`` (:data:`DRAFT_LANGUAGES`), without hybrid recall, a gate, a
        memory that can search by passage (``similar``) and something to rank."""
        return (kind == "advice" and self.gate is not None and self.recall != "hybrid"
                and bool(candidates) and hasattr(self.memory, "similar")
                and language_for(question, policy) in self.draft)

    def ranked_with_draft(self, question: str, draft: str, top_k: int) -> list[Any]:
        """The question's :data:`DRAFT_DEPTH` nearest memories, ranked by the mean of their
        cosine to the question and to ``draft`` (read as a passage); the first ``top_k``.
        Scores stay the cosines to the question, so the gate's floor means what it meant."""
        depth = max(DRAFT_DEPTH, top_k)
        hits = list(self.memory.candidates(question, top_k=depth))
        near = {h.id: float(h.score) for h in self.memory.similar(draft, top_k=depth)}
        low = min(near.values(), default=0.0)  # a memory the draft did not reach: at most this
        hits.sort(key=lambda h: -(float(h.score) + near.get(h.id, low)))  # stable on ties
        return hits[:top_k]

    def candidates_for(self, query: str, policy: Policy) -> list[Any]:
        top_k = max(2 * policy.top_k, 5)
        if self.recall == "hybrid":
            return list(self.memory.retrieve(query, top_k=top_k, mode="hybrid"))
        if self.recall == "dense":
            return list(self.memory.candidates(query, top_k=top_k))
        return super().candidates_for(query, policy)

    def screen(self, question: str, candidates: Sequence[Any], query: str | None = None,
               policy: Policy | None = None, kind: str | None = None,
               keep_order: bool = False, floor: float | None = None
               ) -> tuple[list[Any], list[GateDecision]]:
        # the gate keeps the order given for the terms' ranking or the draft's; hybrid
        # candidates carry fused scores (the store applied the floor to the dense side)
        keep_order = keep_order and (self.recall == "terms" or self._draft is not None)
        floor = -math.inf if self.recall == "hybrid" else floor
        return super().screen(question, candidates, query, policy, kind, keep_order, floor)

    def rank(self, question: str, kind: str, candidates: list[Any], policy: Policy,
             history: Sequence[dict[str, str]]) -> list[Any]:
        """The answer with no memory (what the no-hit branch would send) ranks the candidates
        with the question; if nothing passes, it is the answer (:meth:`reply_to`)."""
        if not self.drafts_for(question, kind, candidates, policy):
            return candidates
        start = time.perf_counter()
        messages = self.build_context(question, [], policy, history=history, kind=kind).messages
        draft = self.llm.chat(messages, max_tokens=self.max_tokens)
        ranked = self.ranked_with_draft(question, draft.text, len(candidates))
        self._draft = (messages, draft, time.perf_counter() - start)
        return ranked

    def build_context(self, question: str, hits: Sequence[Any], policy: Policy, *,
                      history: Sequence[dict[str, str]] = (), kind: str | None = None) -> Assembly:
        if self.single == "plain":
            return super().build_context(question, hits, policy, history=history, kind=kind)
        return assemble_direct(question, hits, policy, system=self.system, history=history,
                               kind=kind)

    def reply_to(self, messages: list[dict[str, Any]]) -> Reply:
        if self._draft is not None and messages == self._draft[0]:
            return self._draft[1]  # nothing passed: the draft was this very answer
        return super().reply_to(messages)

    def ask(self, question: str, **options: Any) -> DraftTrace:
        self._draft = None
        try:
            trace = super().ask(question, **options)
            draft = self._draft
        finally:
            self._draft = None
        kept = {f.name: getattr(trace, f.name) for f in fields(Trace)}
        if draft is None:
            return DraftTrace(**kept)
        timings = trace.timings  # the draft's time, apart from retrieval's
        kept["timings"] = {"draft": draft[2], **timings, "retrieve": timings["retrieve"] - draft[2]}
        return DraftTrace(**kept, draft=draft[1].text)


class ReaderGate(Gate):
    """The gate with advice candidates ranked by the reader (1 - P(unknown), "can this one
    fact answer the question?") before the judge's pool takes the best, instead of by cosine.

    Measured and kept off (README, "The acceptance check"): on the tuning split the reader
    ranked the relevant memory of an advice question first more often than cosine in Chinese,
    less often in English; on the test split it placed it less often in Chinese, used it twice
    more in English, and tripled the time of an advice question (the reader reads every
    candidate the free checks keep)."""

    def apply(self, question: str, hits: Sequence[Any], *, floor: float,
              judge: ProbabilityModel | None = None, pool: int | None = None,
              kind: str | None = None, keep_order: bool = False) -> list[GateDecision]:
        from gya_memory.answer.questions import question_kind

        kind = kind or question_kind(question, known=[h.text for h in hits])
        if kind == "advice" and judge is not None and self.judge_min is not None:
            # the reader ranks the candidates the free checks keep; the pool takes its best
            language = self.prompt_language
            own = self.floor if self.floor is not None else floor
            ranked = list(hits) if keep_order else sorted(hits, key=lambda h: -float(h.score))
            read = {id(h): reader_relevance(judge, question, h.text, language=language)
                    for h in ranked if self.free_check(question, h, own, kind) is None}
            hits, keep_order = sorted(ranked, key=lambda h: -read.get(id(h), -1.0)), True
        return super().apply(question, hits, floor=floor, judge=judge, pool=pool, kind=kind,
                             keep_order=keep_order)


class EnglishJudgeGate(Gate):
    """The gate with the judge's and the reader's prompts in English for every question,
    Chinese ones included (the library writes them in the question's language)."""

    prompt_language: ClassVar[str | None] = "en"


class ChangedGate(Gate):
    """The gate with a fifth step, "changed since" (fact questions only, no model): a passed
    memory that a newer candidate says has changed (about the same person, a sign of change
    such as 现在 / 换了 / "now" / "moved", a shared key word: :mod:`gya_memory.answer.changes`)
    is dropped: "我现在在哪个平台买衣服？" should not get 淘宝 when a later memory says
    现在很少上淘宝了.

    Measured and kept off (docs/acceptance.md, "A gate rule tried and kept off"): on the tuning split it
    removed one no-hit false hit (en) and lost no relevant memory, on the test sample it fired
    for no question at all, and a shared name is a weak key ("Has a boxer named Bruno" would
    give way to "Bruno was switched to a new food" for "How old is Bruno?"). For advice it
    dropped still-true facts on the tuning split, so it never runs there."""

    def apply(self, question: str, hits: Sequence[Any], **options: Any) -> list[GateDecision]:
        from gya_memory.answer.questions import question_kind

        decisions = super().apply(question, hits, **options)
        if (options.get("kind") or question_kind(question, known=[h.text for h in hits])) != "fact":
            return decisions
        return [changed_since(d, hits) for d in decisions]


def changed_since(decision: GateDecision, hits: Sequence[Any]) -> GateDecision:
    """A passed memory that a newer one says has changed (about the same person, a sign of change,
    :func:`gya_memory.lab.writing_levers.shared_keys`) no longer answers a fact question."""
    from gya_memory.answer.changes import change_marker
    from gya_memory.lab.writing_levers import shared_keys
    from gya_memory.answer.context import written_at
    from gya_memory.answer.gate import about_of_hit

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
