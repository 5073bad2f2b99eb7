"""The public API: every name in gya_memory.__all__ resolves, and importing stays instant."""

import subprocess
import sys
from pathlib import Path

import gya_memory

ROOT = Path(__file__).resolve().parent.parent


def test_every_public_name_resolves() -> None:
    for name in gya_memory.__all__:
        assert getattr(gya_memory, name) is not None, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        gya_memory.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_imports_no_heavy_module() -> None:
    code = ("import sys, gya_memory; "
            "print(sorted(m for m in ('numpy', 'pandas', 'qdrant_client', 'qdrant_edge', "
            "'requests', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""}, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_semantic_memory_is_a_retriever() -> None:
    from gya_memory.answer.retriever import Retriever
    from gya_memory.semantic.memory import SemanticMemory

    for name in ("candidates", "retrieve", "embedder"):
        assert hasattr(SemanticMemory, name) and hasattr(Retriever, name)


def test_no_module_imports_another_modules_private_name() -> None:
    """A name shared between modules is public: importing ``_name`` from a sibling means the
    cut went through one idea (issue 20). Aliasing a public name privately is fine."""
    import ast

    found = []
    for path in sorted((ROOT / "gya_memory").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("gya_memory")):
                found += [f"{path.relative_to(ROOT)}: {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, found
