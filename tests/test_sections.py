"""Every section of every notebook says whether it is on the core path (tools/sections.py),
and the cell tags agree with the badges, so the core path can be run on its own."""

from __future__ import annotations

import re
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


def _plan_sections(plan_row: str) -> set[int]:
    """Section numbers named in one row of TEACHING.md's plan ("§1–4, §6, §9")."""
    numbers: set[int] = set()
    for first, last in re.findall(r"§(\d+)(?:[–-](\d+))?", plan_row):
        numbers.update(range(int(first), int(last or first) + 1))
    return numbers


def test_the_90_minute_plan_is_the_core_path() -> None:
    """TEACHING.md's 90-minute class takes exactly the numbered 🟢 sections of 01–06."""
    text = (ROOT / "TEACHING.md").read_text(encoding="utf-8")
    plan = text.split("## 90 minutes", 1)[1].split("\n## ", 1)[0]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"\*\*(0[1-6])\*\*([^|]*)\|", plan)}
    assert sorted(rows) == ["01", "02", "03", "04", "05", "06"]
    for path in NOTEBOOKS[:6]:
        nb = nbformat.read(path, as_version=4)
        core = {int(m.group(1)) for s in S.sections(nb)[1:] if s.badge == S.CORE
                for m in [re.match(r"(\d+)\.", s.title)] if m}
        assert _plan_sections(rows[path.name[:2]]) == core, \
            f"{path.name}: TEACHING.md plans {sorted(_plan_sections(rows[path.name[:2]]))}, badges say {sorted(core)}"
