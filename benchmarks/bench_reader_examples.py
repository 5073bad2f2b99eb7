"""The reader with worked examples, on the agent's own candidates (issue 16, session 32).

    ./run.sh bench reader_examples --probe --json out.json   # tuning split, ~19 min on 2 cores
    ./run.sh bench reader_examples benchmarks/results/reader_examples_tune.json   # replay: no model
    ./run.sh bench reader_examples --probe --scenarios benchmarks/data/acceptance_fresh_en.json \
        --json out.json   # your own scenarios (the fresh English set: 12 min)

The gate asks the *reader* ("answer from this one fact, or reply unknown", passing at
1 - P(unknown) >= 0.98) about a fact question's candidates. Its prompt is instructions only;
the judge's has eight worked examples. Here the same instructions are followed by six
examples as earlier chat turns (:data:`EXAMPLES`, written for this benchmark: none comes from
the acceptance set, the writing set or the notebooks): three answered from the fact (two of
them asked as a task: "the optician asks…", a form to fill in) and three answered ``unknown``
(another person's fact, a plan asked as done, a detail the fact lacks).

The probe runs every tuning question (with memory, no hit) through ``MemoryAgent``'s own
candidates, kind and gate, reads from the gate's decisions each candidate the shipped reader was
asked about (``GateDecision.p_yes``), and asks the reader with examples about the same ones. The replay counts, per bar, the answerable
questions whose relevant memory passes, a look-alike passing beside it, and the no-hit
questions where something passes (a false hit). Measured and not kept (docs/acceptance.md,
"The reader with worked examples").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from _shared import print_footer

EXAMPLES = {
    "en": (("The optician asks what my prescription is. What do I tell her?",
            "Glasses prescription is -2.5 in both eyes", "-2.5 in both eyes"),
           ("What's my dog's name?", "User's sister has a dog called Rex", "unknown"),
           ("Which climbing wall do I go to these days?",
            "Goes bouldering at The Arch in Bermondsey on Wednesdays", "The Arch in Bermondsey"),
           ("What time is my flight to Tromsø?", "Plans to book a flight to Tromsø next month",
            "unknown"),
           ("How old is my godson?", "User's godson Matteo started primary school", "unknown"),
           ("I'm filling in a form at the clinic. What goes under allergies?",
            "Allergic to sulfa drugs", "sulfa drugs")),
    "zh": (("配眼镜的师傅问我度数多少，我怎么跟他说？", "近视，两只眼睛都是250度", "两只眼睛都是250度"),
           ("我家狗叫什么名字？", "姐姐家养了一只狗叫旺仔", "unknown"),
           ("我现在去哪个岩馆攀岩？", "每周三晚上去奥森旁边的岩时攀岩馆", "奥森旁边的岩时攀岩馆"),
           ("我去乌鲁木齐的航班是几点？", "打算下个月订去乌鲁木齐的机票", "unknown"),
           ("我干儿子几岁了？", "干儿子今年开始上小学了", "unknown"),
           ("在医院填表，过敏史那栏我该写什么？", "对磺胺类药物过敏", "磺胺类药物")),
}
BARS = (0.98, 0.95, 0.9, 0.8, 0.7, 0.5)


def example_messages(question: str, fact: str) -> list[dict[str, str]]:
    """The shipped reader's messages with :data:`EXAMPLES` as earlier turns."""
    from gya_memory.answer.judge import reader_messages
    from gya_memory.base.text import language_of

    zh = language_of(question) == "zh"
    system, asked = reader_messages(question, fact)
    form = "事实：{f}\n问题：{q}" if zh else "Fact: {f}\nQuestion: {q}"
    turns = []
    for q, f, a in EXAMPLES["zh" if zh else "en"]:
        turns += [{"role": "user", "content": form.format(f=f, q=q)},
                  {"role": "assistant", "content": a}]
    return [system, *turns, asked]


def example_relevance(model: Any, question: str, fact: str) -> float:
    """1 - P(unknown) of the reader with examples (as ``judge.reader_relevance``)."""
    from gya_memory.answer.judge import is_unknown_token

    probs = model.next_token_probs(example_messages(question, fact), top=20)
    return 1.0 - min(1.0, sum(p for t, p in probs.items() if is_unknown_token(t)))


def probe(split: str, path: Path | None = None) -> list[dict[str, Any]]:
    from gya_memory.answer.agent import MemoryAgent
    from gya_memory.answer.llm import get_llm
    from gya_memory.answer.questions import question_kind
    from gya_memory.lab.scenarios import load_acceptance, load_scenarios, store_scenarios
    from gya_memory.semantic.embeddings import get_embedder

    scenarios = load_acceptance(split) if path is None else load_scenarios(path=path)
    llm = get_llm()
    stores = store_scenarios(scenarios, get_embedder())
    rows = []
    for s in scenarios:
        agent, ids = MemoryAgent(stores[s.user], llm), {m.text: m.id for m in s.memories}
        for cond, q in (("answerable", s.question), ("no_hit", s.no_hit_question)):
            candidates = agent.candidates_for(q, agent.policy)
            kind = question_kind(q, known=[h.text for h in candidates])
            candidates = agent.rank(q, kind, candidates, agent.policy, ())
            _, decisions = agent.screen(q, candidates, policy=agent.policy, kind=kind,
                                        keep_order=True)
            # the shipped gate's own record: each candidate the reader was asked about
            asked = [(d.hit.text, d.p_yes) for d in decisions if d.judge == "reader"]
            if not asked:  # not a fact question, or nothing reached the reader
                continue
            rows.append({"scenario": s.id, "lang": s.lang, "cond": cond,
                         "relevant": list(s.relevant) if cond == "answerable" else [],
                         "cands": [{"id": ids.get(f, "?"), "shipped": round(p, 4),
                                    "examples": round(example_relevance(llm, q, f), 4)}
                                   for f, p in asked]})
            print(s.id, cond, [(c["id"], c["shipped"], c["examples"]) for c in rows[-1]["cands"]],
                  flush=True)
    return rows


def replay(rows: Sequence[Mapping[str, Any]], key: str, bar: float, lang: str) -> tuple[int, ...]:
    """(relevant passes, relevant reached the reader, look-alike beside, answerable questions,
    no-hit false hits, no-hit questions) for one reader and bar."""
    a = [r for r in rows if r["lang"] == lang and r["cond"] == "answerable"]
    n = [r for r in rows if r["lang"] == lang and r["cond"] == "no_hit"]
    return (sum(any(c[key] >= bar and c["id"] in r["relevant"] for c in r["cands"]) for r in a),
            sum(any(c["id"] in r["relevant"] for c in r["cands"]) for r in a),
            sum(any(c[key] >= bar and c["id"] not in r["relevant"] for c in r["cands"]) for r in a),
            len(a), sum(any(c[key] >= bar for c in r["cands"]) for r in n), len(n))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("probe_file", nargs="?", type=Path, help="a stored probe to replay")
    parser.add_argument("--probe", action="store_true", help="probe with the model first")
    parser.add_argument("--split", choices=("tune", "test"), default="tune")
    parser.add_argument("--scenarios", type=Path,
                        help="probe the scenarios of this file (the acceptance set's format) "
                             "instead of a split of the acceptance set")
    parser.add_argument("--json", type=Path, help="where the probe goes (ids and numbers only)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.scenarios is not None and not args.scenarios.is_file():
        parser.error(f"--scenarios: no such file {args.scenarios}")
    if args.probe:
        rows = probe(args.split, args.scenarios)
        if args.json:
            args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), "utf-8")
    elif args.probe_file:
        rows = json.loads(args.probe_file.read_text("utf-8"))
    else:
        parser.error("give a probe file to replay, or --probe")
    print(f"{'reader':9} {'bar':>5} {'lang':4} {'relevant passes':>16} {'look-alike beside':>18} "
          f"{'no-hit false hits':>18}")
    for lang in ("zh", "en"):
        for key in ("shipped", "examples"):
            for bar in BARS:
                rel, reached, beside, n_a, fh, n_n = replay(rows, key, bar, lang)
                print(f"{key:9} {bar:5.2f} {lang:4} {f'{rel} / {reached}':>16} "
                      f"{f'{beside} / {n_a}':>18} {f'{fh} / {n_n}':>18}")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
