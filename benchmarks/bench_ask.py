"""How long one ask takes with the defaults, model included (issue 8's target: median ≤ 8 s
on 2 cores): recall, the gate (the chat model judging each candidate) and the answer.

    ./run.sh bench ask                 # 12 questions of the test split, half zh, half en
    ./run.sh bench ask --questions 28  # all of them

The questions are the answerable ones of ``eval_scenarios.json`` (test split), each asked once
of a ``MemoryAgent`` with the default gate and policy over that user's memories, after one
untimed warm-up ask. The load average is printed: on a shared machine the times mean little.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from _shared import percentile, print_footer

from gya_memory.lab import evaluation as ev
from gya_memory.answer.agent import MemoryAgent
from gya_memory.semantic.embeddings import get_embedder
from gya_memory.answer.llm import get_llm


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=12)
    args = ap.parse_args()
    started = time.perf_counter()
    scenarios = ev.load_scenarios("test")
    zh = [s for s in scenarios if s.lang == "zh"]
    en = [s for s in scenarios if s.lang == "en"]
    chosen = [s for pair in zip(zh, en) for s in pair][: args.questions]
    stores = ev.store_scenarios(chosen, get_embedder())
    llm = get_llm()
    MemoryAgent(stores[chosen[0].user], llm).ask(chosen[0].question)  # warm-up, not timed
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'scenario':<8} {'total s':>8} {'gate s':>7} {'answer s':>9} {'judged':>6} {'placed':>6}")
    totals = []
    for s in chosen:
        t0 = time.perf_counter()
        trace = MemoryAgent(stores[s.user], llm).ask(s.question)
        total = time.perf_counter() - t0
        totals.append(total)
        gate = trace.timings.get("gate", 0.0)
        answer = total - gate - trace.timings.get("retrieve", 0.0)
        judged = sum(d.p_yes is not None for d in trace.gate) if trace.gate else 0
        print(f"{s.id:<8} {total:>8.2f} {gate:>7.2f} {answer:>9.2f} {judged:>6} "
              f"{len(trace.assembly.placed):>6}", flush=True)
    ordered = sorted(totals)
    print(f"\nasks: {len(totals)}  median {statistics.median(totals):.2f} s  "
          f"p90 {percentile(ordered, 0.9):.2f} s  max {ordered[-1]:.2f} s")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
