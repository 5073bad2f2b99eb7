"""ARCHITECTURE.md names only modules that exist (issue 20): every module path it writes
(``answer.gate``, ``gya_memory.lab.calibration``, ``semantic.stores.common.VectorStore``)
is a module of the package, or a name defined in one."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = {p.stem if p.suffix == ".py" else p.name for p in (ROOT / "gya_memory").iterdir()
         if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").exists()}


def _paths() -> set[str]:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    found = set(re.findall(r"gya_memory\.([A-Za-z_][\w.]*\w)", text))
    found |= {m for m in re.findall(r"`([A-Za-z_][\w.]*)`", text) if "." in m}
    return {p for p in found if p.split(".")[0] in PARTS}


def _exists(path: str) -> bool:
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):  # the longest prefix that is a module
        name = "gya_memory." + ".".join(parts[:cut])
        try:
            obj = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_architecture_names_module_paths() -> None:
    assert len(_paths()) > 60  # the tree, the two walks, where to add, the map


def test_every_module_path_in_architecture_exists() -> None:
    missing = sorted(p for p in _paths() if not _exists(p))
    assert not missing, missing


# -- the documents: README keeps what ships, docs/ the measurement logs behind it ----------
DOCS = ("README.md", "ARCHITECTURE.md", "TEACHING.md", *(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")))


def test_every_relative_link_in_the_documents_exists() -> None:
    broken = []
    for doc in DOCS:
        path = ROOT / doc
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", target) and not (path.parent / target).exists():
                broken.append((doc, target))
    assert not broken, broken


def test_every_measurement_log_is_linked_from_the_readme_and_every_reference_to_one_exists() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    logs = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert logs and all(f"](docs/{name})" in readme for name in logs)
    named = set()
    for folder in ("gya_memory", "benchmarks", "tests", "notebooks"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".ipynb", ".md"):
                named |= set(re.findall(r"docs/([\w-]+\.md)", path.read_text(encoding="utf-8")))
    assert named and named <= set(logs), sorted(named - set(logs))
