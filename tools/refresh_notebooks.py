"""Re-execute notebooks in place, top to bottom, and store their outputs.

    ./run.sh refresh                       # every notebook in notebooks/
    ./run.sh refresh notebooks/03_*.ipynb  # just these

Each notebook runs in a fresh kernel with the notebook's folder as working directory
(as JupyterLab and nbval do). Cell timing metadata is not recorded, so a refresh that
changes nothing leaves the files unchanged. A notebook that writes to stderr outside a
cell tagged ``raises-exception`` is reported and the run fails: nbval would compare that
noise, and learners should not see it.

On a CPU other than the reference one (``tests/reference_cpu.txt``) the model's words differ,
so a plain refresh would store this CPU's answers and break the comparison on the reference
CPU. There, a cell keeps its stored outputs when they equal the fresh ones once model text is
masked (``tests/nbval_sanitize_model.cfg``, what ``./run.sh test`` compares here); the other
cells take the fresh outputs. A changed cell that shows model text (``«…»``) cannot be stored
correctly here: the run names those cells and stops, unless ``--this-cpu`` says to store this
CPU's words anyway (then refresh them on the reference CPU before the next release).
"""

from __future__ import annotations

import json
import re
import subprocess
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


def on_reference_cpu() -> bool:
    here = subprocess.run([sys.executable, str(ROOT / "tools" / "cpu_fingerprint.py")],
                          capture_output=True, text=True, check=True).stdout.strip()
    return here == (ROOT / "tests" / "reference_cpu.txt").read_text(encoding="utf-8").strip()


def model_masks() -> list[tuple[str, str]]:
    """The (regex, replacement) pairs of tests/nbval_sanitize_model.cfg, read as nbval reads them."""
    from nbval.plugin import get_sanitize_patterns

    return get_sanitize_patterns(
        (ROOT / "tests" / "nbval_sanitize_model.cfg").read_text(encoding="utf-8"))


def masked(outputs: list, rules: list[tuple[str, str]]) -> str:
    text = json.dumps(outputs, sort_keys=True, ensure_ascii=False)
    for regex, replace in rules:
        text = re.sub(regex, replace, text)
    return text


def renumbered(outputs: list, count: int | None) -> list:
    """``outputs`` with the execution count of their ``execute_result`` set to ``count``."""
    return [nbformat.from_dict({**o, "execution_count": count}) if "execution_count" in o else o
            for o in outputs]


def keep_reference_words(old: nbformat.NotebookNode, new: nbformat.NotebookNode) -> list[int]:
    """Give each cell of ``new`` whose outputs equal ``old``'s once model text is masked the
    stored outputs of ``old``; return the cells that changed and show model text."""
    if len(old.cells) != len(new.cells):
        raise SystemExit("the notebook's cells changed; refresh it on the reference CPU")
    rules, changed = model_masks(), []
    for i, (a, b) in enumerate(zip(old.cells, new.cells)):
        if b.cell_type != "code":
            continue
        if masked(renumbered(a.get("outputs", []), b.execution_count), rules) == \
                masked(b.get("outputs", []), rules):
            # the stored outputs, with this run's count (a cell added above shifts them all)
            b.outputs = renumbered(a.outputs, b.execution_count)
        elif "«" in json.dumps(b.outputs, ensure_ascii=False):
            changed.append(i)
    return changed


def refresh(path: Path, *, reference: bool = True, this_cpu: bool = False) -> float:
    nb = nbformat.read(path, as_version=4)
    stored = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=900, kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    elapsed = time.perf_counter() - start
    bad = stderr_cells(nb)
    if bad:
        raise SystemExit(f"{path.name}: cells {bad} wrote to stderr; fix them and refresh again")
    if not reference:
        words = keep_reference_words(stored, nb)
        if words and not this_cpu:
            raise SystemExit(f"{path.name}: cells {words} changed and show model text, whose words "
                             "follow the CPU: refresh them on the reference CPU (or pass --this-cpu)")
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str]) -> int:
    this_cpu = "--this-cpu" in argv
    argv = [a for a in argv if a != "--this-cpu"]
    reference = on_reference_cpu()
    if not reference:
        print("this CPU differs from tests/reference_cpu.txt: cells whose outputs differ only in "
              "model text keep their stored outputs")
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for path in paths:
        print(f"{path.name}: ", end="", flush=True)
        print(f"{refresh(path.resolve(), reference=reference, this_cpu=this_cpu):.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
