"""Evaluation (评测) on questions the memory was never tuned on.

The calibration set (``data/labelled_memories.json``) chose the thresholds, so it can't also
tell how well they work. ``data/eval_scenarios.json`` is a separate, hand-written set: 48
scenarios (24 Chinese, 24 English, 24 topics), each one user with 4-5 memories, a question
that needs one of them but paraphrases it, and a *no-hit* question on a nearby topic that no
memory answers (the trap: a look-alike memory). A fixed split keeps 20 scenarios for tuning
(``split == "tune"``) and 28 for the report (``"test"``); choices are made on the first only.

Two levels are measured, per language:

- **retrieval** (cheap): recall@1, recall@3 and MRR of the relevant memory; how often it
  passes the gate; how often *some* memory passes on a no-hit question (a false hit);
- **end to end** (the chat model answers), in three conditions: ``memory`` (the scenario's
  memories are stored), ``no_memory`` (a new user: nothing stored), ``no_hit`` (memories
  stored, none answers). Each answer gets one outcome: ``used`` (states the facts the
  scenario lists), ``misused`` (builds on a distractor), ``invented`` (states facts about
  the user that nobody gave), ``admits`` (says it doesn't know, invents nothing),
  ``ignored`` (memory given, facts not stated) or ``no facts`` (no admission, no facts).

Run ``python -m gya_memory.lab.evaluation`` (``./run.sh bench eval``) for the whole report;
``--retrieval-only`` skips the chat model. Nothing happens at import time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from gya_memory.answer.gate import Gate, GateDecision, floor_for, screen
from gya_memory.answer.grounding import Grounding, content_units, ground

from gya_memory.lab.gate_features import feature_separation, gate_features
from gya_memory.lab.scenarios import CONDITIONS, SPLITS, Scenario, load_scenarios, store_scenarios

OUTCOMES = ("used", "ignored", "misused", "invented", "admits", "no facts")



# -- retrieval ------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetrievalRow:
    """One question: the ranking of the user's memories and what the gate did."""

    scenario: str
    lang: str
    kind: str  # "answerable" or "no_hit"
    question: str
    ranking: list[tuple[str, float]]  # (memory id, cosine), best first
    relevant: list[str]
    decisions: list[tuple[str, bool, str, float | None]]  # (memory id, passed, reason, P(yes))

    @property
    def rank(self) -> int | None:
        from gya_memory.lab.scoring import first_rank  # numpy: imported when a ranking is read

        return first_rank(self.ranking, self.relevant)

    @property
    def passed(self) -> list[str]:
        return [d[0] for d in self.decisions if d[1]]

    @property
    def relevant_passed(self) -> bool:
        return any(m in self.relevant for m in self.passed)

    @property
    def distractor_passed(self) -> bool:
        return any(m not in self.relevant for m in self.passed)


def retrieval_rows(scenarios: Sequence[Scenario], stores: dict[str, Any], gate: Gate | None,
                   *, judge: Any = None, min_score: Callable[[str], float] | None = None,
                   ) -> list[RetrievalRow]:
    """Rank each scenario's memories for both of its questions and apply the gate.

    ``gate=None`` applies the old rule instead: top 3 above ``min_score(question)`` (the
    embedder's calibrated threshold if not given)."""
    rows = []
    for s in scenarios:
        memory = stores[s.user]
        for kind, question in (("answerable", s.question), ("no_hit", s.no_hit_question)):
            hits = memory.candidates(question, top_k=len(s.memories))
            ranking = [(str(h.payload.get("memory_id")), round(float(h.score), 4)) for h in hits]
            if gate is None:
                floor = (min_score or memory.embedder.threshold)(question)
                decisions = [GateDecision(h, i < 3 and h.score >= floor,
                                          "passed" if i < 3 and h.score >= floor else "cut")
                             for i, h in enumerate(hits)]
            else:
                decisions = screen(question, hits, gate=gate,
                                   floor=floor_for(memory.embedder, question), judge=judge)
            rows.append(RetrievalRow(
                s.id, s.lang, kind, question, ranking,
                list(s.relevant) if kind == "answerable" else [],
                [(str(d.hit.payload.get("memory_id")), d.passed, d.reason,
                  None if d.p_yes is None else round(d.p_yes, 3)) for d in decisions],
            ))
    return rows


def retrieval_table(rows: Sequence[RetrievalRow]) -> Any:
    """Per language: recall@1, recall@3, MRR; relevant passes the gate; a distractor passes
    on an answerable question; some memory passes on a no-hit question."""
    import pandas as pd

    out = []
    for lang in sorted({r.lang for r in rows}, reverse=True):
        answerable = [r for r in rows if r.lang == lang and r.kind == "answerable"]
        no_hit = [r for r in rows if r.lang == lang and r.kind == "no_hit"]
        ranks = [r.rank for r in answerable]
        out.append({
            "language": lang,
            "questions": len(answerable),
            "recall@1": _mean(k is not None and k <= 1 for k in ranks),
            "recall@3": _mean(k is not None and k <= 3 for k in ranks),
            "MRR": _mean(1 / k if k else 0.0 for k in ranks),
            "relevant passes": _mean(r.relevant_passed for r in answerable),
            "distractor passes (answerable)": _mean(r.distractor_passed for r in answerable),
            "false hit (no-hit question)": _mean(bool(r.passed) for r in no_hit),
        })
    return pd.DataFrame(out).set_index("language").round(3)


def judge_sweep(rows: Sequence[RetrievalRow], thresholds: Iterable[float], *,
                recall_weight: float = 2.0) -> Any:
    """What the judge would let through at each ``judge_min``, from the P(yes) already in
    ``rows`` (a gate run with ``judge_min=0``): relevant passes and false hits per language,
    and a score per language, ``(w * relevant + (1 - false hit)) / (w + 1)``.

    ``recall_weight`` (w) counts a relevant memory that passes ``w`` times: a relevant
    memory that is dropped always costs the answer, a look-alike that passes only sometimes
    does (the answer prompt tells the model to say what the notes don't state)."""
    import pandas as pd

    out = []
    for t in thresholds:
        entry: dict[str, float] = {"judge_min": round(float(t), 3)}
        for lang in sorted({r.lang for r in rows}, reverse=True):
            ans = [r for r in rows if r.lang == lang and r.kind == "answerable"]
            nh = [r for r in rows if r.lang == lang and r.kind == "no_hit"]
            ok = _mean(any(d[1] and d[3] is not None and d[3] >= t and d[0] in r.relevant
                           for d in r.decisions) for r in ans)
            false = _mean(any(d[1] and d[3] is not None and d[3] >= t for d in r.decisions)
                          for r in nh)
            entry[f"{lang} relevant passes"] = ok
            entry[f"{lang} false hit"] = false
            entry[f"{lang} score"] = (recall_weight * ok + 1 - false) / (recall_weight + 1)
        langs = [k for k in entry if k.endswith(" score")]
        entry["score (mean)"] = sum(entry[k] for k in langs) / len(langs)
        out.append(entry)
    return pd.DataFrame(out).set_index("judge_min").round(3)


def choose_judge_min(sweep: Any) -> float:
    """The ``judge_min`` with the best mean score (ties: the higher one)."""
    best = sweep["score (mean)"].max()
    return float(max(t for t, v in sweep["score (mean)"].items() if v == best))


# -- end to end -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    """One answer of the chat model in one condition, and its outcome."""

    scenario: str
    lang: str
    condition: str
    question: str
    answer: str
    placed: list[str]
    outcome: str
    leaks_distractor: bool
    invented: list[str] = field(default_factory=list)
    seconds: float = 0.0


def distractors_used(scenario: Scenario, answer: str, placed: Sequence[str],
                     question: str, condition: str = "memory") -> list[str]:
    """The placed distractors whose own content (not shared with the question or a relevant
    memory) appears in ``answer``. For a no-hit question every memory is a distractor."""
    answer_units = content_units(answer)
    relevant = scenario.relevant_texts if condition == "memory" else []
    shared = content_units(question).union(*(content_units(t) for t in relevant))
    return [t for t in placed if t not in relevant
            and (content_units(t) - shared) & answer_units]


def outcome(scenario: Scenario, condition: str, answer: str, placed: Sequence[str],
            question: str) -> tuple[str, bool, Grounding]:
    """The outcome of one answer (see the module docstring), whether it leaks a distractor,
    and the grounding check it rests on."""
    g = ground(answer, placed, question)
    leaked = bool(distractors_used(scenario, answer, placed, question, condition))
    if condition == "memory":
        if scenario.states_facts(answer):
            return "used", leaked, g
        if leaked:
            return "misused", leaked, g
        if g.invented:
            return "invented", leaked, g
        return ("admits" if g.admits_unknown else "ignored"), leaked, g
    if g.invented:
        return "invented", leaked, g
    if g.admits_unknown:
        return "admits", leaked, g
    if leaked:
        return "misused", leaked, g
    return "no facts", leaked, g


def run_end_to_end(scenarios: Sequence[Scenario], stores: dict[str, Any],
                   make_agent: Callable[[Any], Any],
                   conditions: Sequence[str] = CONDITIONS,
                   progress: Callable[[Answer], None] | None = None) -> list[Answer]:
    """Ask every scenario's questions in each condition; ``make_agent(memory)`` builds the
    agent (so the gate, the policy and the model are the caller's choice)."""
    for c in conditions:
        if c not in CONDITIONS:
            raise ValueError(f"unknown condition {c!r}; choose from {CONDITIONS}")
    answers = []
    for s in scenarios:
        for condition in conditions:
            store = stores[s.user + "-new"] if condition == "no_memory" else stores[s.user]
            question = s.no_hit_question if condition == "no_hit" else s.question
            start = time.perf_counter()
            trace = make_agent(store).ask(question)
            seconds = time.perf_counter() - start
            placed = [p.hit.text for p in trace.assembly.placed]
            label, leaked, g = outcome(s, condition, trace.answer, placed, question)
            answers.append(Answer(s.id, s.lang, condition, question, trace.answer, placed,
                                  label, leaked, g.invented, round(seconds, 2)))
            if progress is not None:
                progress(answers[-1])
    return answers


def check_label(scenario: Scenario, condition: str, answer: str, placed: Sequence[str],
                question: str) -> str:
    """The outcome the general grounding check (:func:`grounding.ground`, which knows
    nothing of the scenario) gives an answer; the scenario only says which memories are
    relevant, to tell ``used`` from ``misused``. Compared with hand labels in notebook 09."""
    g = ground(answer, placed, question)
    if g.invented:
        return "invented"
    relevant = set(scenario.relevant_texts) if condition == "memory" else set()
    used = [placed[i] for i in g.used]
    if any(t in relevant for t in used):
        return "used"
    if g.admits_unknown:
        return "admits"
    if used:
        return "misused"
    return "ignored" if condition == "memory" else "no facts"


def load_answers(path: str | Path) -> list[Answer]:
    """Answers stored by ``--json`` (or any list of dicts with the fields of
    :class:`Answer`), with their outcomes computed again by the current rules."""
    data = json.loads(Path(path).read_text("utf-8"))
    raw = data["answers"] if isinstance(data, dict) else data
    by_id = {s.id: s for s in load_scenarios()}
    out = []
    for a in raw:
        s = by_id[a["scenario"]]
        label, leaked, g = outcome(s, a["condition"], a["answer"], a["placed"], a["question"])
        out.append(Answer(s.id, s.lang, a["condition"], a["question"], a["answer"],
                          list(a["placed"]), label, leaked, g.invented, a.get("seconds", 0.0)))
    return out


def load_hand_labels(path: str | Path | None = None) -> dict[tuple[str, str, str], str]:
    """Hand labels of stored answers: ``(run, scenario, condition) -> label``."""
    if path is None:
        raw = resources.files("gya_memory.data").joinpath("eval_hand_labels.json").read_text("utf-8")
    else:
        raw = Path(path).read_text("utf-8")
    return {(x["run"], x["scenario"], x["condition"]): x["label"]
            for x in json.loads(raw)["labels"]}


def agreement(answers: Sequence[Answer], hand: dict[tuple[str, str, str], str], run: str) -> Any:
    """The grounding check against the hand labels: a confusion table (hand labels down,
    the check across) and, in ``.attrs``, the agreement and the share of invented answers
    it catches."""
    import pandas as pd

    by_id = {s.id: s for s in load_scenarios()}
    pairs = []
    for a in answers:
        key = (run, a.scenario, a.condition)
        if key in hand:
            mine = check_label(by_id[a.scenario], a.condition, a.answer, a.placed, a.question)
            pairs.append((hand[key], mine))
    table = pd.crosstab(pd.Series([h for h, _ in pairs], name="hand label"),
                        pd.Series([m for _, m in pairs], name="grounding check"))
    invented = [m for h, m in pairs if h == "invented"]
    table.attrs["n"] = len(pairs)
    table.attrs["agreement"] = _mean(h == m for h, m in pairs)
    table.attrs["invented caught"] = _mean(m == "invented" for m in invented)
    table.attrs["invented (hand)"] = len(invented)
    return table


def end_to_end_table(answers: Sequence[Answer]) -> Any:
    """Share of each outcome per language and condition, and the leak rate."""
    import pandas as pd

    out = []
    for lang in sorted({a.lang for a in answers}, reverse=True):
        for condition in CONDITIONS:
            group = [a for a in answers if a.lang == lang and a.condition == condition]
            if not group:
                continue
            row: dict[str, Any] = {"language": lang, "condition": condition, "n": len(group)}
            for o in OUTCOMES:
                row[o] = _mean(a.outcome == o for a in group)
            row["leaks a distractor"] = _mean(a.leaks_distractor for a in group)
            out.append(row)
    return pd.DataFrame(out).set_index(["language", "condition"]).round(3)


def targets(rows: Sequence[RetrievalRow], answers: Sequence[Answer]) -> Any:
    """The issue's targets, per language: reached or not, with the measured value."""
    import pandas as pd

    out = []
    for lang in sorted({r.lang for r in rows} | {a.lang for a in answers}, reverse=True):
        ans = [r for r in rows if r.lang == lang and r.kind == "answerable"]
        nh = [r for r in rows if r.lang == lang and r.kind == "no_hit"]
        checks = [("relevant passes the gate", _mean(r.relevant_passed for r in ans), ">=", 0.9),
                  ("false hit on no-hit questions", _mean(bool(r.passed) for r in nh), "<=", 0.1)]
        mem = [a for a in answers if a.lang == lang and a.condition == "memory"]
        hit = [a for a in answers if a.lang == lang and a.condition == "no_hit"]
        if mem:
            checks.append(("answer uses the memory", _mean(a.outcome == "used" for a in mem), ">=", 0.8))
        if hit:
            checks.append(("no-hit: admits, invents nothing",
                           _mean(a.outcome == "admits" for a in hit), ">=", 0.9))
            both = mem + hit
            checks.append(("misuses or leaks a distractor",
                           _mean(a.outcome == "misused" or a.leaks_distractor for a in both), "<=", 0.1))
        for name, value, op, goal in checks:
            reached = value >= goal if op == ">=" else value <= goal
            out.append({"language": lang, "target": f"{name} {op} {goal:g}",
                        "measured": round(value, 3), "reached": reached})
    return pd.DataFrame(out)


def _mean(values: Iterable[Any]) -> float:
    values = [float(v) for v in values]
    return sum(values) / len(values) if values else float("nan")


# -- the command line -----------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gya_memory.lab.evaluation",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="test")
    parser.add_argument("--gate", choices=["judge", "floor", "old"], default="judge",
                        help="judge: floor + chat-model judge (default); floor: the floor "
                             "alone; old: top 3 above the calibrated threshold")
    parser.add_argument("--retrieval-only", action="store_true")
    parser.add_argument("--sweep", action="store_true",
                        help="sweep judge_min on the split (use --split tune)")
    parser.add_argument("--features", action="store_true",
                        help="compare what else a gate could threshold (no chat model)")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--json", type=Path, help="write every row and answer here")
    args = parser.parse_args(argv)

    from gya_memory.semantic.embeddings import get_embedder
    from gya_memory.answer.llm import get_llm

    scenarios = load_scenarios(None if args.split == "all" else args.split)
    embedder = get_embedder()
    if args.features:
        print(f"{len(scenarios)} scenarios ({args.split}): one threshold on each score\n")
        print(feature_separation(gate_features(scenarios, embedder)).to_string())
        return 0
    stores = store_scenarios(scenarios, embedder)
    llm = None if args.retrieval_only and args.gate != "judge" else get_llm()
    gate = {"judge": Gate(judge_min=0.0) if args.sweep else Gate(),
            "floor": Gate(judge_min=None), "old": None}[args.gate]
    rows = retrieval_rows(scenarios, stores, gate, judge=llm if args.gate == "judge" else None)
    print(f"{len(scenarios)} scenarios ({args.split}), gate: {args.gate}\n")
    print(retrieval_table(rows).to_string(), "\n")
    if args.sweep:
        sweep = judge_sweep(rows, [round(0.05 * i, 2) for i in range(4, 18)])
        print(sweep.to_string())
        print(f"\nchosen judge_min: {choose_judge_min(sweep)}")
    answers: list[Answer] = []
    if not args.retrieval_only:
        from gya_memory.answer.agent import MemoryAgent

        def make_agent(memory: Any) -> Any:
            return MemoryAgent(memory, llm, gate=gate, max_tokens=args.max_tokens)

        def show(a: Answer) -> None:
            print(f"  {a.scenario} {a.condition:9} {a.outcome:9} {a.seconds:5.1f} s  "
                  f"{a.answer[:60]!r}", flush=True)

        answers = run_end_to_end(scenarios, stores, make_agent, progress=show)
        print("\n" + end_to_end_table(answers).to_string(), "\n")
        seconds = sorted(a.seconds for a in answers)
        print(f"ask: median {seconds[len(seconds) // 2]:.1f} s, max {seconds[-1]:.1f} s\n")
    print(targets(rows, answers).to_string(index=False))
    if args.json:
        args.json.write_text(json.dumps(
            {"split": args.split, "gate": args.gate,
             "retrieval": [asdict(r) for r in rows], "answers": [asdict(a) for a in answers]},
            ensure_ascii=False, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
