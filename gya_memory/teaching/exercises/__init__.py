"""Self-checks for the notebooks' exercises.

In a notebook::

    from gya_memory.teaching import exercises as check
    check.exercise_03_1(my_answer)      # says ✓, or what is still wrong

Each notebook's checks live in ``nbNN.py`` (``exercise_03_1`` is in ``nb03``); the worked
solutions are in ``notebooks/solutions/nbNN.py``, and a test runs every solution through
its check. Nothing is imported until a check is called.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from gya_memory.teaching.exercises.verdict import Verdict, verdict

__all__ = ["Verdict", "verdict"]


def __getattr__(name: str) -> Any:
    parts = name.split("_")
    if len(parts) == 3 and parts[0] == "exercise" and parts[1].isdigit():
        try:
            return getattr(import_module(f".nb{parts[1]}", __name__), name)
        except (ModuleNotFoundError, AttributeError):
            pass
    raise AttributeError(f"no self-check called {name!r}: look for check.exercise_NN_K "
                         "under the exercise in the notebook")
