"""Every section of every notebook says whether it is on the core path (tools/sections.py),
and the cell tags agree with the badges, so the core path can be run on its own."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import sections as S  # noqa: E402

NOTEBOOKS = S.notebooks(ROOT)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_every_section_has_a_badge(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    missing = [s.title for s in S.sections(nb) if s.badge is None]
    assert not missing, f"{path.name}: add '· {S.CORE}' or '· {S.OPTIONAL}' to {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_cell_tags_follow_the_badges(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    wrong = []
    for section in S.sections(nb):
        for i in section.cells:
            tagged = S.TAG in nb.cells[i].metadata.get("tags", [])
            if tagged != (section.badge == S.OPTIONAL):
                wrong.append((i, section.title))
    assert not wrong, f"{path.name}: code cells whose 'optional' tag disagrees with their section: {wrong}"


def test_there_is_a_core_path() -> None:
    core = sum(s.badge == S.CORE and bool(s.cells)
               for p in NOTEBOOKS for s in S.sections(nbformat.read(p, as_version=4))[1:])
    assert core >= 10
