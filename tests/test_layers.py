"""The import rule (issue 20): the library never imports the parts apart from it.

The library is ``base/``, the four layers (``working``, ``episodic/``, ``semantic/``,
``procedural/``), ``hermes/``, ``answer/`` and ``erasure``. Measuring (``lab/``), fault
injection (``faults/``) and the notebooks' kits (``teaching/``) may import the library, never
the other way round, so a teacher can delete or replace them and the library still works.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gya_memory"
APART = ("lab", "faults", "teaching")


def _imports(path: Path) -> set[str]:
    """Every ``gya_memory`` module a file imports, anywhere in it (lazy imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: relative import (the rule reads absolute ones)")
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gya_memory"):
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("gya_memory")}
    return found


def _library_files() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py"))
            if p.relative_to(PACKAGE).parts[0] not in APART + ("data",)]


def test_the_library_imports_no_measuring_fault_or_teaching_module() -> None:
    bad = []
    for path in _library_files():
        for name in sorted(_imports(path)):
            parts = name.split(".")
            if len(parts) > 1 and parts[1] in APART:
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_the_base_imports_nothing_else_of_the_package() -> None:
    bad = [f"{p.relative_to(ROOT)} imports {n}"
           for p in sorted((PACKAGE / "base").glob("*.py")) for n in sorted(_imports(p))
           if not n.startswith("gya_memory.base")]
    assert not bad, "\n".join(bad)


def test_at_most_twelve_modules_directly_under_the_package() -> None:
    entries = [p for p in PACKAGE.iterdir()
               if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").exists()]
    assert len(entries) <= 12, sorted(p.name for p in entries)


def test_no_module_is_longer_than_450_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert not long, long


def code_lines(path: Path) -> int:
    """Lines that hold code: no blank lines, comments or docstrings."""
    source = path.read_text(encoding="utf-8")
    docs: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            docs.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER}
    lines = {n for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type not in skip for n in range(tok.start[0], tok.end[0] + 1)}
    return len(lines - docs)


def test_the_library_is_under_8000_lines_of_code() -> None:
    """Issue 20's size: the library a newcomer reads, without the parts apart from it. A lever
    measured and kept off belongs in ``lab`` (ARCHITECTURE.md, "Where to add")."""
    sizes = {str(p.relative_to(PACKAGE)): code_lines(p) for p in _library_files()}
    biggest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    assert sum(sizes.values()) < 8000, (sum(sizes.values()), biggest)


def test_every_import_names_the_module_that_defines_the_name() -> None:
    """No re-export shims: ``from gya_memory.x import N`` finds N defined in ``x`` (or ``x`` is
    a package that lists N among its lazy public names, or N is a submodule of ``x``)."""
    import importlib

    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gya_memory")):
                continue
            module = importlib.import_module(node.module)
            tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
            defined = {t.id for n in tree.body for t in ast.walk(n)
                       if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(t, ast.Name)}
            defined |= {n.name for n in ast.walk(tree)
                        if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n in tree.body}
            lazy = getattr(module, "_EXPORTS", {})
            for alias in node.names:
                name = alias.name
                if name in defined or name in lazy:
                    continue
                if importlib.util.find_spec(f"{node.module}.{name}") if hasattr(module, "__path__") else False:
                    continue
                bad.append(f"{path.relative_to(ROOT)}: {name} from {node.module}")
    assert not bad, "\n".join(bad)


def test_the_notebooks_import_from_six_places() -> None:
    """The series' imports: the top level and five sub-packages, never a module inside one
    (a notebook reader finds every name in one of these ``__init__`` lists; notebook 08's
    fault kit is listed by ``gya_memory.teaching``)."""
    import json
    import re

    allowed = {"gya_memory", "gya_memory.answer", "gya_memory.semantic", "gya_memory.hermes",
               "gya_memory.lab", "gya_memory.teaching"}
    found = set()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                source = "".join(cell["source"])
                found |= {m.group(1) or m.group(2) for m in re.finditer(
                    r"^\s*(?:from\s+(gya_memory[\w.]*)\s+import|import\s+(gya_memory[\w.]*))",
                    source, re.M)}
    assert found <= allowed, sorted(found - allowed)
