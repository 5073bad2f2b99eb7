"""The core path through the series: every ``##`` section of a notebook is marked core or
optional with a badge at the end of its heading, and every code cell of an optional section
carries the cell tag ``optional``, so the core path can be run on its own.

    ## 3. Store a fact · 🟢 core
    ## 7. The same store under load · ⚪ optional

Cells before the first ``##`` heading (title, what you need, setup) belong to the core path.
Used by tests/test_sections.py and benchmarks/bench_core_path.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

CORE, OPTIONAL = "🟢 core", "⚪ optional"
TAG = "optional"
HEADING = re.compile(r"^## (?!#)(.*)$", re.M)


@dataclass
class Section:
    title: str
    badge: str | None  # CORE, OPTIONAL or None (missing)
    cells: list[int] = field(default_factory=list)  # indexes of its code cells


def sections(nb: nbformat.NotebookNode) -> list[Section]:
    out = [Section("(top)", CORE)]
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for title in HEADING.findall(cell.source):
                title = title.strip()
                badge = CORE if title.endswith(CORE) else OPTIONAL if title.endswith(OPTIONAL) else None
                out.append(Section(title, badge))
        elif cell.cell_type == "code":
            out[-1].cells.append(i)
    return out


def core_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of the notebook with its optional code cells left out."""
    copy = nbformat.from_dict(nb)
    copy.cells = [c for c in copy.cells
                  if not (c.cell_type == "code" and TAG in c.metadata.get("tags", []))]
    return copy


def notebooks(root: Path) -> list[Path]:
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
