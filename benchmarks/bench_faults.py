"""Fault-injection benchmark: kill -9 a writer at random moments in every write path.

For each path of :mod:`gya_memory.faults.trials` (episodic ``add_many``, session appends, curated
writes, ``forget_user``, semantic ``store_many``, ``reembed``, the fallback switch, procedure
registration, and two
concurrent writers on the episodic, session, curated and procedure stores) it runs ``--trials``
trials. In each, a child process writes and prints one line after every write returns;
the parent kills it with SIGKILL after a random delay (``random.Random(seed)``; for the
one-shot operations, ``forget_user``, ``reembed`` and the fallback switch, anywhere in 0-1.3x
the operation's time, measured once per run), then opens the store like a restart and
checks:

- integrity (``PRAGMA integrity_check`` and the FTS5 index check for SQLite; the file
  parses for curated memory; the collection opens for Qdrant);
- nothing reported as committed is lost;
- nothing half-written is visible (a batch is all there or absent; a forget is done or
  not done, per store).

It prints a table: path, trials, committed (writes reported before the kill), lost,
corrupt (failed integrity or half-written state). Target: 0 lost and 0 corrupt.
The semantic paths use the TF-IDF embedder (fast); they become crash-safe with the
Qdrant Edge branch.

Run it (the default, 50 trials per path, takes several minutes on 2 cores):

    ./run.sh bench faults
    .venv/bin/python benchmarks/bench_faults.py --trials 10 --paths episodic_add_many,forget_user
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _shared import print_footer, workdir  # noqa: E402

from gya_memory.faults.trials import PATHS, run_trials, summary  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=50, help="trials per path (default 50)")
    parser.add_argument("--paths", default=",".join(PATHS), help="comma-separated paths")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", default=None, help="keep the trial folders here")
    args = parser.parse_args(argv)
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = sorted(set(paths) - set(PATHS))
    if unknown:
        parser.error(f"unknown paths: {', '.join(unknown)}; choose from {', '.join(PATHS)}")
    if args.trials < 1:
        parser.error("--trials must be at least 1")
    started = time.perf_counter()
    rows = []
    with workdir(args.dir, "gya-bench-faults-") as root:
        for path in paths:
            rows.append(summary(path, run_trials(path, args.trials, root / path, args.seed)))
            r = rows[-1]
            print(f"  {path}: {r['trials']} trials done", file=sys.stderr, flush=True)
    print(f"Fault injection: kill -9 at a random moment, {args.trials} trials per path "
          f"(seed {args.seed})\n")
    print(f"{'path':<22} {'trials':>6} {'committed':>10} {'lost':>5} {'corrupt':>8}")
    for r in rows:
        print(f"{r['path']:<22} {r['trials']:>6} {r['committed']:>10,} {r['lost']:>5} "
              f"{r['corrupt']:>8}")
    notes = [(r["path"], d) for r in rows for d in r["details"]]
    if notes:
        print("\nWhat the failed trials showed (up to three kinds per path):")
        for path, detail in notes:
            print(f"- {path}: {detail}")
    total_bad = sum(r["lost"] + r["corrupt"] for r in rows)
    print(f"\n{'All paths: 0 lost, 0 corrupt.' if not total_bad else f'{total_bad} bad outcomes.'}")
    print_footer(started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
