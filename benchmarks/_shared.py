"""Pieces every benchmark script uses: percentiles, a scratch folder, the closing lines."""

from __future__ import annotations

import math
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[rank - 1]


@contextmanager
def workdir(keep: str | None, prefix: str) -> Iterator[Path]:
    """``keep`` (the ``--dir`` option) if given and kept afterwards, else a temporary folder."""
    path = Path(keep) if keep else Path(tempfile.mkdtemp(prefix=prefix))
    path.mkdir(parents=True, exist_ok=True)
    try:
        yield path
    finally:
        if not keep:
            shutil.rmtree(path, ignore_errors=True)


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / 1e6 if sys.platform == "darwin" else peak * 1024 / 1e6


def print_footer(started: float) -> None:
    """Load average, peak RSS and total time: the last lines of every report."""
    print("\nLoad average at the end (1/5/15 min): "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"Peak RSS of this process: {peak_rss_mb():,.0f} MB")
    print(f"Total run time: {time.perf_counter() - started:.1f} s")


def probed_rows(argv: Sequence[str], doc: str, default: Path,
                probe: Callable[[Path], None], what: str) -> list[Any]:
    """The command line of a probe-then-replay benchmark: ``--probe`` runs ``probe(file)``
    with the model first (``what`` says what it does), then the stored rows are read from
    ``--file`` (default ``default``)."""
    import argparse
    import json

    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--probe", action="store_true", help=what)
    parser.add_argument("--file", type=Path, default=default)
    args = parser.parse_args(list(argv))
    if args.probe:
        probe(args.file)
    return list(json.loads(args.file.read_text("utf-8")))
