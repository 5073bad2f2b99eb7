"""The evaluation of issue 8, end to end: retrieval and answers on the held-out scenarios.

    ./run.sh bench eval                     # test split: old gate, new gate, answers (~30 min)
    ./run.sh bench eval --split tune --sweep --retrieval-only   # how judge_min was chosen
    ./run.sh bench eval --retrieval-only    # retrieval only (a few minutes)

Everything printed comes from ``gya_memory.lab.evaluation``; ``--json FILE`` keeps every row and
answer (notebook 09 reads ``benchmarks/results/eval_test.json``, written by this script).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from _shared import print_footer

from gya_memory.lab import evaluation


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    if not argv:
        out = Path(__file__).parent / "results"
        out.mkdir(exist_ok=True)
        print("== before: the old gate (top 3 above the calibrated threshold) ==")
        evaluation.main(["--split", "test", "--gate", "old", "--retrieval-only"])
        print("\n== after: floor + judge, and the answers ==")
        evaluation.main(["--split", "test", "--json", str(out / "eval_test.json")])
    else:
        evaluation.main(argv)
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
