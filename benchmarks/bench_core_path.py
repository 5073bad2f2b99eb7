"""How long the core path takes: each notebook run top to bottom with its optional cells
left out (tools/sections.py), in a fresh kernel, as a class would run it.

    ./run.sh bench core_path          # the core path (target: at most 5 minutes on 2 cores)
    ./run.sh bench core_path --all    # every cell, for comparison
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import sections as S  # noqa: E402


def run(nb: nbformat.NotebookNode, folder: Path) -> float:
    start = time.perf_counter()
    NotebookClient(nb, timeout=900, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="run every cell, not only the core path")
    ap.add_argument("notebooks", nargs="*", help="only these notebooks (default: all)")
    args = ap.parse_args()
    paths = [Path(p).resolve() for p in args.notebooks] or S.notebooks(ROOT)
    print(f"{'core path' if not args.all else 'every cell'}, {os.cpu_count()} CPUs")
    print(f"{'notebook':<34} {'code cells':>10} {'seconds':>8}")
    total = 0.0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if not args.all:
            nb = S.core_notebook(nb)
        cells = sum(c.cell_type == "code" for c in nb.cells)
        seconds = run(nb, path.parent)
        total += seconds
        print(f"{path.name:<34} {cells:>10} {seconds:>8.1f}", flush=True)
    print(f"{'total':<34} {'':>10} {total:>8.1f}  ({total / 60:.1f} min)")


if __name__ == "__main__":
    main()
