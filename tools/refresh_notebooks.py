"""Re-execute notebooks in place, top to bottom, and store their outputs.

    ./run.sh refresh                       # every notebook in notebooks/
    ./run.sh refresh notebooks/03_*.ipynb  # just these

Each notebook runs in a fresh kernel with the notebook's folder as working directory
(as JupyterLab and nbval do). Cell timing metadata is not recorded, so a refresh that
changes nothing leaves the files unchanged. A notebook that writes to stderr outside a
cell tagged ``raises-exception`` is reported and the run fails: nbval would compare that
noise, and learners should not see it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def stderr_cells(nb: nbformat.NotebookNode) -> list[int]:
    bad = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "raises-exception" in cell.metadata.get("tags", []):
            continue
        if any(o.get("name") == "stderr" for o in cell.get("outputs", [])):
            bad.append(i)
    return bad


def refresh(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=900, kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    elapsed = time.perf_counter() - start
    bad = stderr_cells(nb)
    nbformat.write(nb, path)
    if bad:
        raise SystemExit(f"{path.name}: cells {bad} wrote to stderr; fix them and refresh again")
    return elapsed


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for path in paths:
        print(f"{path.name}: ", end="", flush=True)
        print(f"{refresh(path.resolve()):.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
