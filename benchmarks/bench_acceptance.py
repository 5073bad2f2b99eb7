"""The acceptance check of issue 16, end to end, on the acceptance set (120 scenarios).

    ./run.sh bench acceptance                      # test split, today's defaults (~30 min on 2 idle cores)
    ./run.sh bench acceptance --split tune --limit 3 --conditions memory,no_hit   # a quick look
    ./run.sh bench acceptance --every 2            # every 2nd scenario of each part

Everything printed comes from ``gya_memory.lab.acceptance``; with no arguments the answers are
kept in ``benchmarks/results/acceptance_test_rerun.json``, a file nothing reads, so a rerun
never overwrites the stored runs that notebook 09 shows and the hand labels
(``gya_memory/data/acceptance_hand_labels.json``) belong to: ``acceptance_test_before.json``
(commit a9fec29, every 2nd test scenario), ``acceptance_test.json`` (session 10's defaults,
``after``) and ``acceptance_test_terms.json`` (today's defaults, ``now``). Compare a rerun
with the last one.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from _shared import print_footer

from gya_memory.lab import acceptance


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    if not argv:
        out = Path(__file__).parent / "results"
        out.mkdir(exist_ok=True)
        argv = ["--split", "test", "--json", str(out / "acceptance_test_rerun.json")]
    code = acceptance.main(argv)
    print_footer(started)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
