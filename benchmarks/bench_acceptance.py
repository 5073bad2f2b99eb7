"""The acceptance check of issue 16, end to end, on the acceptance set (120 scenarios).

    ./run.sh bench acceptance                      # test split, the defaults (~40 min on 2 cores)
    ./run.sh bench acceptance --split tune --limit 3 --conditions memory,no_hit   # a quick look
    ./run.sh bench acceptance --every 2            # every 2nd scenario of each part

Everything printed comes from ``gya_memory.lab.acceptance``; with no arguments the answers are
kept in ``benchmarks/results/acceptance_test.json`` (notebook 09 reads it). The "before"
file beside it (``acceptance_test_before.json``) was made the same way with the previous
defaults (commit a9fec29), on every 2nd test scenario (``--every 2``).
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
        argv = ["--split", "test", "--json", str(out / "acceptance_test.json")]
    code = acceptance.main(argv)
    print_footer(started)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
