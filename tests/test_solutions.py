"""Every worked solution in notebooks/solutions passes its notebook's self-check, and every
self-check has a solution (and turns down an unanswered exercise)."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import pytest

from gya_memory.teaching import exercises

SOLUTIONS = Path(__file__).resolve().parent.parent / "notebooks" / "solutions"
CHECKS = Path(exercises.__file__).parent


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"solutions_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _names(module) -> list[str]:
    return sorted(n for n, f in vars(module).items()
                  if n.startswith("exercise_") and inspect.isfunction(f))


def _all_checks() -> list[str]:
    names = []
    for path in sorted(CHECKS.glob("nb[0-9][0-9].py")):
        names += _names(importlib.import_module(f"gya_memory.teaching.exercises.{path.stem}"))
    return names


def _solution(name: str):
    nb = name.split("_")[1]
    return getattr(_load(SOLUTIONS / f"nb{nb}.py"), name, None)


@pytest.mark.parametrize("name", _all_checks())
def test_solution_passes_its_check(name: str, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    solve = _solution(name)
    assert solve is not None, f"notebooks/solutions has no {name}()"
    result = getattr(exercises, name)(solve())
    assert result.ok, repr(result)


@pytest.mark.parametrize("name", _all_checks())
def test_unanswered_exercise_is_not_passed(name: str) -> None:
    result = getattr(exercises, name)(...)
    assert not result.ok and "✗" in repr(result)


def test_unknown_check_says_where_to_look() -> None:
    with pytest.raises(AttributeError, match="check.exercise_NN_K"):
        exercises.exercise_99_9
