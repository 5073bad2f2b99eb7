"""Procedural memory (程序记忆): how to do a task, kept as a recipe you can call.

The other layers hold information (what the user said, what is true of them). This one
holds a method: named, described and versioned, with its steps and, optionally, a Python
function that carries them out. A procedure is found by its description and *invoked*;
it is not pasted whole into the prompt.

This module is the small version that notebook 02 uses; finding procedures by meaning
(with an embedding model) comes with the Hermes notebook.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Procedure:
    """One recipe: what it is for, the steps, and optionally a function that runs them."""

    name: str
    description: str
    steps: tuple[str, ...]
    version: int = 1
    run: Callable[..., Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for attr in ("name", "description"):
            value = getattr(self, attr)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"a procedure needs a non-empty {attr}")
        if not self.steps:
            raise ValueError(f"procedure {self.name!r} has no steps")
        if self.version < 1:
            raise ValueError(f"procedure {self.name!r}: version must be 1 or more")


class ProceduralMemory:
    """A registry of procedures: register, look up by name or words, invoke."""

    def __init__(self) -> None:
        self._latest: dict[str, Procedure] = {}
        self._history: dict[str, list[Procedure]] = {}

    def register(self, procedure: Procedure) -> Procedure:
        """Add a procedure, or a newer version of one (the version must go up)."""
        current = self._latest.get(procedure.name)
        if current is not None and procedure.version <= current.version:
            raise ValueError(
                f"{procedure.name!r} is already at version {current.version}; "
                f"register version {current.version + 1} or later to change it"
            )
        self._latest[procedure.name] = procedure
        self._history.setdefault(procedure.name, []).append(procedure)
        return procedure

    def get(self, name: str, version: int | None = None) -> Procedure:
        if name not in self._latest:
            raise KeyError(f"no procedure named {name!r}; known: {', '.join(self._latest) or 'none'}")
        if version is None:
            return self._latest[name]
        for proc in self._history[name]:
            if proc.version == version:
                return proc
        raise KeyError(f"{name!r} has no version {version}")

    def find(self, words: str) -> list[Procedure]:
        """Procedures whose name or description contains every word of ``words``."""
        terms = [w.lower() for w in words.split()]
        return [
            p for p in self._latest.values()
            if all(t in f"{p.name} {p.description}".lower() for t in terms)
        ]

    def invoke(self, name: str, /, **kwargs: Any) -> Any:
        """Run a procedure's function with keyword arguments."""
        proc = self.get(name)
        if proc.run is None:
            raise ValueError(f"{name!r} has steps but no function to run; read .steps instead")
        return proc.run(**kwargs)

    def __len__(self) -> int:
        return len(self._latest)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._latest.values())
