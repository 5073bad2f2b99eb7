"""The acceptance check (验收), on the acceptance set: the article's three conditions and
the two it leaves implicit, asked through :class:`gya_memory.answer.agent.MemoryAgent` as a user
would.

The set (``data/acceptance/``, :func:`gya_memory.lab.scenarios.load_acceptance`) holds 120
hand-written scenarios, 60 Chinese and 60 English; each user has 10-30 memories. Every
scenario is asked in five conditions:

=================  ==============================  =========================================
condition          what is stored, what is asked   what a good answer does
=================  ==============================  =========================================
``memory``         the memories; a question one    uses it (states ``must_state``)
                   of them answers
``no_hit``         the memories; a question none   says it doesn't know, invents nothing,
                   answers (a look-alike is near)  uses no look-alike
``empty``          nothing; the same question      a personal fact: admits it doesn't know;
                                                   advice: real help, no invented fact
``general``        the memories; a question that   helps, mentions no memory
                   needs no personal fact
``empty_general``  nothing; the general question   helps
=================  ==============================  =========================================

Outcomes come from visible rules (:func:`outcome`, built on :mod:`gya_memory.answer.grounding`);
hand labels of test-split answers check them (``data/acceptance_hand_labels.json``).
Run ``python -m gya_memory.lab.acceptance`` (``./run.sh bench acceptance``); nothing happens at
import time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gya_memory.answer.grounding import ADMITS, clauses, content_units, ground
from gya_memory.lab.scenarios import SPLITS, Scenario, load_acceptance, load_scenarios

CONDITIONS = ("memory", "no_hit", "empty", "general", "empty_general")
WANTED = {"memory": {"used"}, "no_hit": {"admits"}, "general": {"helps"},
          "empty_general": {"helps"}}  # "empty": by the question's kind, see wanted()


def wanted(condition: str, kind: str) -> set[str]:
    """The outcomes that count as right for ``condition`` (and, on an empty store, the
    question's true ``kind``)."""
    if condition == "empty":
        return {"admits"} if kind == "fact" else {"helps"}
    return WANTED[condition]


def question_for(s: Scenario, condition: str) -> tuple[str, str]:
    """The question asked in ``condition`` and its true kind."""
    if condition == "no_hit":
        return s.no_hit_question, s.no_hit_kind or "fact"
    if condition in ("general", "empty_general"):
        return s.general_question, "general"
    return s.question, s.question_kind or "advice"


# -- outcome rules --------------------------------------------------------------------------
def substance(answer: str) -> int:
    """How much an answer says besides admitting it doesn't know: the number of content
    units in its clauses that are not admissions. A bare refusal scores 0-2."""
    units: set[str] = set()
    for c in clauses(answer):
        if not ADMITS.search(c):
            units |= content_units(c)
    return len(units)


HELPS_MIN = 4  # content units beyond the admission that make an answer "real help"


def mentions_memory(s: Scenario, answer: str, question: str,
                    texts: Iterable[str] | None = None, *, least: int = 1) -> list[str]:
    """The memories (all the user's, or ``texts``) of which at least ``least`` content
    units (not shared with the question) appear in ``answer``."""
    a = content_units(answer)
    q = content_units(question)
    pool = [m.text for m in s.memories] if texts is None else list(texts)
    return [t for t in pool if len((content_units(t) - q) & a) >= least]


def outcome(s: Scenario, condition: str, answer: str, placed: Sequence[str],
            question: str, kind: str) -> tuple[str, list[str]]:
    """The outcome of one answer and the claims the grounding check calls invented.

    ``memory``: used / misused (built on a placed look-alike) / invented / admits / ignored.
    ``no_hit``: invented / misused (the trap's or a placed memory's content) / admits /
    no facts. ``empty``: invented / admits / helps / refuses. ``general``, ``empty_general``:
    mentions memory / invented / helps / refuses."""
    g = ground(answer, placed, question)
    if condition == "memory":
        if s.states_facts(answer):
            return "used", g.invented
        relevant = set(s.relevant_texts)
        shared = content_units(question).union(*(content_units(t) for t in relevant))
        if any((content_units(t) - shared) & content_units(answer)
               for t in placed if t not in relevant):
            return "misused", g.invented
        if g.invented:
            return "invented", g.invented
        return ("admits" if g.admits_unknown else "ignored"), g.invented
    if condition == "no_hit":
        if g.invented:
            return "invented", g.invented
        if mentions_memory(s, answer, question, [*placed, s.text_of(s.trap)]):
            return "misused", g.invented
        return ("admits" if g.admits_unknown else "no facts"), g.invented
    # a general answer shares single words with some memory by chance ("小时"): two
    # units of one memory count as mentioning it
    if condition == "general" and mentions_memory(s, answer, question, least=2):
        return "mentions memory", g.invented
    if g.invented:
        return "invented", g.invented
    if condition == "empty" and kind == "fact":
        return ("admits" if g.admits_unknown else "no facts"), g.invented
    return ("helps" if substance(answer) >= HELPS_MIN else "refuses"), g.invented


# -- running --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    """One answer in one condition, what the gate did, and its outcome."""

    scenario: str
    lang: str
    condition: str
    kind: str  # the true kind of the question
    predicted_kind: str
    question: str
    answer: str
    placed: list[str]  # memory ids placed in the context
    outcome: str
    right: bool
    gate: list[tuple[str, bool, str, float | None]] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)
    seconds: float = 0.0
    replaced: str | None = None  # the model's words, when the no-hit reply replaced or prefaced them
    draft: str | None = None  # the draft answer that ranked the candidates (advice, LabAgent.draft)


def run(scenarios: Sequence[Scenario], stores: dict[str, Any],
        make_agent: Callable[[Any], Any], conditions: Sequence[str] = CONDITIONS,
        progress: Callable[[Answer], None] | None = None) -> list[Answer]:
    """Ask every scenario in each condition through ``make_agent(memory).ask``."""
    from gya_memory.answer.questions import question_kind

    for c in conditions:
        if c not in CONDITIONS:
            raise ValueError(f"unknown condition {c!r}; choose from {CONDITIONS}")
    answers = []
    for s in scenarios:
        ids = {m.text: m.id for m in s.memories}
        for condition in conditions:
            empty = condition.startswith("empty")
            store = stores[s.user + "-new"] if empty else stores[s.user]
            question, kind = question_for(s, condition)
            start = time.perf_counter()
            trace = make_agent(store).ask(question)
            seconds = time.perf_counter() - start
            placed = [p.hit.text for p in trace.assembly.placed]
            label, invented = outcome(s, condition, trace.answer, placed, question, kind)
            gate = [(ids.get(d.hit.text, "?"), d.passed, d.reason,
                     None if d.p_yes is None else round(d.p_yes, 3)) for d in trace.gate]
            answers.append(Answer(
                s.id, s.lang, condition, kind, getattr(trace, "kind", None) or question_kind(question),
                question, trace.answer, [ids.get(t, "?") for t in placed], label,
                label in wanted(condition, kind), gate, invented, round(seconds, 2),
                getattr(trace, "replaced", None), getattr(trace, "draft", None)))
            if progress is not None:
                progress(answers[-1])
    return answers


# -- the gate alone --------------------------------------------------------------------------
@dataclass(frozen=True)
class GateRow:
    """One question: every candidate above the floor, whether the ``about`` rule keeps it,
    and the judge's P(yes) for it (asked of all of them, so any pool and threshold can be
    replayed by :func:`gate_rates`)."""

    scenario: str
    lang: str
    kind: str  # "answerable", "no_hit" or "general"
    candidates: list[tuple[str, float, bool, float | None]]  # (id, cosine, about ok, P(yes))
    relevant: list[str]
    trap: str


def probe_gate(scenarios: Sequence[Scenario], stores: dict[str, Any], judge: Any, *,
               top_k: int = 8, judge_language: str = "question", how: str = "judge",
               questions: Sequence[str] = ("answerable", "no_hit", "general")) -> list[GateRow]:
    """Candidates for each question with the floor, the ``about`` rule and the model's
    score of each: ``how`` is ``"judge"`` (yes/no), ``"graded"`` (0-3) or ``"reader"``."""
    from gya_memory.answer.about import fits
    from gya_memory.answer.gate import about_of_hit, floor_for
    from gya_memory.answer.judge import judge_relevance, reader_relevance
    from gya_memory.lab.gate_features import graded_relevance
    from gya_memory.answer.questions import question_kind

    rows = []
    for s in scenarios:
        memory = stores[s.user]
        ids = {m.text: m.id for m in s.memories}
        asked = {"answerable": s.question, "no_hit": s.no_hit_question,
                 "general": s.general_question}
        for kind in questions:
            q = asked[kind]
            if not q:
                continue
            floor = floor_for(memory.embedder, q)
            qk = question_kind(q)
            cands = []
            for h in memory.candidates(q, top_k=top_k):
                if h.score < floor:
                    continue
                ok = fits(about_of_hit(h), q, qk)
                score = {"judge": judge_relevance, "graded": graded_relevance,
                         "reader": reader_relevance}[how]
                p = score(judge, q, h.text,
                        language="en" if judge_language == "en" else None) if judge else None
                cands.append((ids.get(h.text, "?"), round(float(h.score), 4), ok,
                              None if p is None else round(p, 4)))
            rows.append(GateRow(s.id, s.lang, kind, cands,
                                list(s.relevant) if kind == "answerable" else [], s.trap))
    return rows


def gate_rates(rows: Sequence[GateRow], *, pool: int = 3, judge_min: float = 0.45,
               about: bool = True) -> dict[str, dict[str, float]]:
    """Replay a gate on probed rows: relevant passes (answerable), a false hit (no-hit and
    general questions), per language."""
    def passing(r: GateRow) -> list[str]:
        kept = [c for c in r.candidates if c[2] or not about][:pool]
        return [c[0] for c in kept if c[3] is None or c[3] >= judge_min]

    out = {}
    for lang in sorted({r.lang for r in rows}, reverse=True):
        a = [r for r in rows if r.lang == lang and r.kind == "answerable"]
        n = [r for r in rows if r.lang == lang and r.kind == "no_hit"]
        g = [r for r in rows if r.lang == lang and r.kind == "general"]
        out[lang] = {"relevant passes": _mean(any(i in r.relevant for i in passing(r)) for r in a),
                     "distractor passes (answerable)": _mean(
                         any(i not in r.relevant for i in passing(r)) for r in a),
                     "false hit (no hit)": _mean(bool(passing(r)) for r in n),
                     "false hit (general)": _mean(bool(passing(r)) for r in g)}
    return out


# -- tables ---------------------------------------------------------------------------------
def _mean(values: Iterable[Any]) -> float:
    values = [float(v) for v in values]
    return round(sum(values) / len(values), 3) if values else float("nan")


def rates(answers: Sequence[Answer], by_id: dict[str, Scenario]) -> dict[str, dict[str, float]]:
    """The issue's rates per language (the targets in brackets)."""
    out: dict[str, dict[str, float]] = {}
    for lang in sorted({a.lang for a in answers}, reverse=True):
        a = [x for x in answers if x.lang == lang]
        mem = [x for x in a if x.condition == "memory"]
        hit = [x for x in a if x.condition == "no_hit"]
        emp = [x for x in a if x.condition == "empty"]
        gen = [x for x in a if x.condition == "general"]
        egen = [x for x in a if x.condition == "empty_general"]
        row = {
            "memory: uses it (>= 0.8)": _mean(x.outcome == "used" for x in mem),
            "memory: relevant placed": _mean(any(i in by_id[x.scenario].relevant for i in x.placed) for x in mem),
            "memory: invents": _mean(x.outcome == "invented" for x in mem),
            "no hit: admits, clean (>= 0.9)": _mean(x.outcome == "admits" for x in hit),
            "no hit: something placed": _mean(bool(x.placed) for x in hit),
            "no hit: misuses a look-alike": _mean(x.outcome == "misused" for x in hit),
            "no hit: invents": _mean(x.outcome == "invented" for x in hit),
            "empty, fact: admits (>= 0.95)": _mean(x.outcome == "admits" for x in emp if x.kind == "fact"),
            "empty, advice+general: helps (>= 0.8)": _mean(
                x.outcome == "helps" for x in [*emp, *egen] if x.kind != "fact"),
            "empty: no invented fact (>= 0.95)": _mean(x.outcome != "invented" for x in [*emp, *egen]),
            "general: helps, no memory (>= 0.9)": _mean(x.outcome == "helps" for x in gen),
        }
        out[lang] = row
    return out


def rates_table(answers: Sequence[Answer], by_id: dict[str, Scenario]) -> Any:
    import pandas as pd

    return pd.DataFrame(rates(answers, by_id))


def classifier_table(scenarios: Sequence[Scenario]) -> Any:
    """The question-kind rule against the labelled kinds, per language: a confusion table
    (true kinds down, predicted across) and its accuracy in ``.attrs``. The rule is given the
    scenario's memories as ``known`` (the agent gives it retrieval's candidates)."""
    import pandas as pd

    from gya_memory.answer.questions import question_kind

    pairs = [(s.lang, kind, question_kind(q, known=[m.text for m in s.memories])) for s in scenarios
             for q, kind in ((s.question, s.question_kind), (s.no_hit_question, s.no_hit_kind),
                             (s.general_question, "general")) if kind]
    table = pd.crosstab([pd.Series([p[0] for p in pairs], name="language"),
                         pd.Series([p[1] for p in pairs], name="true kind")],
                        pd.Series([p[2] for p in pairs], name="rule says"))
    table.attrs["accuracy"] = _mean(t == p for _, t, p in pairs)
    return table


def about_table(scenarios: Sequence[Scenario]) -> dict[str, float]:
    """The memory ``about`` rule against the labelled ``about``: does it say "user" exactly
    when the label does (the rule names relations, the labels add names)?"""
    from gya_memory.answer.about import about_of

    rows = [(m.about == "user", about_of(m.text) == "user") for s in scenarios
            for m in s.memories if m.about]
    return {"memories": len(rows), "agreement": _mean(a == b for a, b in rows),
            "labelled other, rule says user": _mean(not a and b for a, b in rows),
            "labelled user, rule says other": _mean(a and not b for a, b in rows)}


# -- the command line -----------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    from typing import get_args

    from gya_memory.answer.context import Order, Placement, Policy
    from gya_memory.answer.gate import Gate
    from gya_memory.lab.agent_levers import DRAFT_LANGUAGES, Recall

    parser = argparse.ArgumentParser(prog="python -m gya_memory.lab.acceptance",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="test")
    parser.add_argument("--lang", choices=["zh", "en"])
    parser.add_argument("--scenarios", type=Path,
                        help="ask the scenarios of this file (the acceptance set's format: "
                             "your own questions) instead of a split of the acceptance set")
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    parser.add_argument("--limit", type=int, help="the first N scenarios of each part")
    parser.add_argument("--every", type=int, default=1,
                        help="every N-th scenario of each part (a fixed sample)")
    parser.add_argument("--json", type=Path, help="write every answer here")
    parser.add_argument("--advice-rank", choices=["cosine", "reader"], default="cosine",
                        help="the gate's ranking of advice candidates (default: %(default)s)")
    parser.add_argument("--recall", choices=get_args(Recall), default="terms",
                        help="the agent's candidates: dense, hybrid, or dense re-ranked by "
                             "e5's latent terms (default: %(default)s)")
    parser.add_argument("--fact-min", type=float, default=Gate.fact_min,
                        help="the reader's bar for fact questions, 1 - P(unknown) "
                             "(default: %(default)s)")
    parser.add_argument("--single", choices=["plain", "direct"], default="plain",
                        help="the wording when one memory is placed (default: %(default)s)")
    parser.add_argument("--order", choices=get_args(Order), default=Policy().order,
                        help="the order of the placed memories (default: %(default)s)")
    parser.add_argument("--placement", choices=get_args(Placement), default=Policy().placement,
                        help="the message the memories go in (default: %(default)s)")
    parser.add_argument("--top-k", type=int, default=Policy().top_k,
                        help="memories judged and placed at most (default: %(default)s)")
    parser.add_argument("--draft", default=",".join(sorted(DRAFT_LANGUAGES)) or "none",
                        help="languages whose advice questions rank candidates with a draft "
                             "answer too, comma-separated, or 'none' (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.scenarios is not None and not args.scenarios.is_file():
        parser.error(f"--scenarios: no such file {args.scenarios}")

    from gya_memory.lab.agent_levers import LabAgent, ReaderGate
    from gya_memory.semantic.embeddings import get_embedder
    from gya_memory.answer.llm import get_llm
    from gya_memory.lab.scenarios import store_scenarios

    if args.scenarios is None:
        scenarios = load_acceptance(None if args.split == "all" else args.split, args.lang)
    else:
        scenarios = [x for x in load_scenarios(path=args.scenarios)
                     if args.lang is None or x.lang == args.lang]
    if args.limit:
        parts: dict[str, list[Scenario]] = {}
        for x in scenarios:
            parts.setdefault(x.id.rsplit("-", 1)[0], []).append(x)
        scenarios = [x for part in parts.values() for x in part[:args.limit]]
    if args.every > 1:
        scenarios = [x for i, x in enumerate(scenarios) if i % args.every == 0]
    print(f"{len(scenarios)} scenarios ({args.scenarios.name if args.scenarios else args.split})")
    print("question kinds:", classifier_table(scenarios).attrs["accuracy"], "accuracy")
    embedder, llm = get_embedder(), get_llm()
    stores = store_scenarios(scenarios, embedder)

    def show(a: Answer) -> None:
        print(f"  {a.scenario} {a.condition:13} {a.outcome:15} {a.seconds:5.1f} s  "
              f"{a.answer[:70]!r}", flush=True)

    gate = (ReaderGate if args.advice_rank == "reader" else Gate)(fact_min=args.fact_min)
    policy = Policy(top_k=args.top_k, order=args.order, placement=args.placement)
    drafts = [] if args.draft == "none" else [x for x in args.draft.split(",") if x]
    answers = run(scenarios, stores,
                  lambda m: LabAgent(m, llm, policy, gate=gate, recall=args.recall,
                                     draft=drafts, single=args.single),
                  [c for c in args.conditions.split(",") if c], progress=show)
    by_id = {s.id: s for s in scenarios}
    print("\n" + rates_table(answers, by_id).to_string())
    seconds = sorted(a.seconds for a in answers)
    print(f"\nask: median {seconds[len(seconds) // 2]:.1f} s, max {seconds[-1]:.1f} s")
    if args.json:
        source = args.scenarios.name if args.scenarios else args.split
        args.json.write_text(json.dumps({"split": source, "answers": [asdict(a) for a in answers]},
                                        ensure_ascii=False, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
