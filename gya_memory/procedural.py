"""Procedural memory (程序记忆): how to do a task, kept as a recipe you can call.

The other layers hold information (what the user said, what is true of them). This one
holds a method: named, described and versioned, with its steps and, optionally, a Python
function that carries them out. A procedure is found by its description, by words
(:meth:`ProceduralMemory.find`) or by meaning with the embedding model
(:meth:`ProceduralMemory.search`), and *invoked*; it is not pasted whole into the prompt.

A procedure's function may be given as a callable or as a runner name
``"package.module:function"``; only the latter can be saved to a JSON file
(:meth:`ProceduralMemory.save` / :meth:`ProceduralMemory.load`), since code is not data.
A runner name is looked up in :data:`RUNNERS`, an explicit registry in code
(:func:`register_runner`), never imported from whatever a file says: a JSON file naming
``"subprocess:getoutput"`` is refused by ``load()`` instead of running a shell command.

A procedure may belong to one user (``owner``, a user id) or be shared (``owner=None``,
the built-in ones); :meth:`ProceduralMemory.erase_user` removes a user's procedures (and
rewrites the file they were loaded from or saved to).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .checks import is_int
from .checks import check_count, check_text, check_user_id
from .files import atomic_write_text
from .text import has_han

if TYPE_CHECKING:
    from .embeddings import Embedder

Runner = Callable[..., Any] | str

RUNNERS: dict[str, Callable[..., Any]] = {}
"""Runner names a saved procedure may use, and the function each one calls."""


def register_runner(name: str, function: Callable[..., Any]) -> None:
    """Allow ``name`` (``"module:function"``) as a saved procedure's runner."""
    if not isinstance(name, str) or ":" not in name:
        raise ValueError(f"a runner name must look like 'module:function', got {name!r}")
    if not callable(function):
        raise ValueError(f"runner {name!r} must be callable, got {function!r}")
    RUNNERS[name] = function


def _runner(name: str, what: str) -> Callable[..., Any]:
    if name not in RUNNERS:
        raise ValueError(
            f"{what}: cannot load {name!r}: it is not a registered runner "
            f"(registered: {', '.join(sorted(RUNNERS)) or 'none'}). Only functions registered "
            "in code with register_runner() can be named in a procedure."
        )
    return RUNNERS[name]


@dataclass(frozen=True)
class Procedure:
    """One recipe: what it is for, the steps, and optionally a function that runs them."""

    name: str
    description: str
    steps: tuple[str, ...]
    version: int = 1
    run: Runner | None = field(default=None, compare=False, repr=False)
    owner: str | None = None  # a user id; None: shared (built in)

    def __post_init__(self) -> None:
        for attr in ("name", "description"):
            value = getattr(self, attr)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"a procedure needs a non-empty {attr}")
            check_text(attr, value, 10_000)
        if isinstance(self.steps, str) or not self.steps:
            raise ValueError(f"procedure {self.name!r} has no steps")
        for i, step in enumerate(self.steps):
            check_text("step", step, 10_000, index=i)
        if not is_int(self.version, low=1):
            raise ValueError(f"procedure {self.name!r}: version must be 1 or more")
        if self.owner is not None:
            check_user_id(self.owner, name="owner")
        if isinstance(self.run, str) and ":" not in self.run:
            raise ValueError(f"procedure {self.name!r}: run must look like 'module:function'")

    def function(self) -> Callable[..., Any]:
        """The callable that carries the steps out (an import reference is resolved here)."""
        if self.run is None:
            raise ValueError(f"{self.name!r} has steps but no function to run; read .steps instead")
        if callable(self.run):
            return self.run
        return _runner(self.run, repr(self.name))


class ProceduralMemory:
    """A registry of procedures: register, look up by name, words or meaning, invoke."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self._latest: dict[str, Procedure] = {}
        self._history: dict[str, list[Procedure]] = {}
        self._embedder = embedder
        self._vectors: dict[tuple[str, int], Any] = {}
        self.path: Path | None = None  # the file last loaded or saved

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
        if version is not None:
            check_count("version", version)
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

    def search(self, query: str, top_k: int = 3) -> list[tuple[Procedure, float]]:
        """Procedures ranked by how close their description is in meaning to ``query``
        (cosine of embeddings; the embedder given, else the configured one)."""
        import numpy as np

        top_k = check_count("top_k", top_k)
        query = check_text("query", query, 10_000)
        if not self._latest:
            return []
        if self._embedder is None:
            from .embeddings import get_embedder

            self._embedder = get_embedder()
        procs = list(self._latest.values())
        missing = [p for p in procs if (p.name, p.version) not in self._vectors]
        if missing:
            vectors = self._embedder.embed_documents([f"{p.name}: {p.description}" for p in missing])
            self._vectors.update({(p.name, p.version): v for p, v in zip(missing, vectors)})
        q = self._embedder.embed_query(query)
        scores = np.array([float(self._vectors[(p.name, p.version)] @ q) for p in procs])
        order = np.argsort(-scores, kind="stable")[:top_k]
        return [(procs[i], float(scores[i])) for i in order]

    def invoke(self, name: str, /, **kwargs: Any) -> Any:
        """Run a procedure's function with keyword arguments."""
        return self.get(name).function()(**kwargs)

    # -- storing --------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write every version of every procedure to a JSON file (atomically)."""
        records = []
        for versions in self._history.values():
            for p in versions:
                if p.run is not None and not isinstance(p.run, str):
                    raise ValueError(
                        f"{p.name!r} v{p.version} runs a Python object, which can't be saved; "
                        "give run='module:function' instead"
                    )
                records.append({"name": p.name, "description": p.description,
                                "steps": list(p.steps), "version": p.version, "run": p.run,
                                "owner": p.owner})
        target = Path(path)
        atomic_write_text(target, json.dumps({"procedures": records}, ensure_ascii=False,
                                              indent=1))
        self.path = target

    def erase_user(self, user_id: str) -> int:
        """Remove every version of every procedure ``user_id`` owns; shared ones stay.
        If this registry was loaded from or saved to a file, the file is rewritten.
        Returns how many procedure versions were removed."""
        user_id = check_user_id(user_id)
        removed = 0
        for name in list(self._history):
            kept = [p for p in self._history[name] if p.owner != user_id]
            removed += len(self._history[name]) - len(kept)
            if kept:
                self._history[name] = kept
                self._latest[name] = kept[-1]
            else:
                del self._history[name], self._latest[name]
        self._vectors = {k: v for k, v in self._vectors.items() if k[0] in self._latest}
        if self.path is not None:
            self.save(self.path)
        return removed

    @classmethod
    def load(cls, path: str | os.PathLike[str], embedder: Embedder | None = None) -> ProceduralMemory:
        """Read a file :meth:`save` wrote. A runner that is not in :data:`RUNNERS` is
        refused here, before anything can call it."""
        memory = cls(embedder)
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        records = data.get("procedures") if isinstance(data, dict) else None
        if not isinstance(records, list):
            raise ValueError(f"{path} has no 'procedures' list")
        for i, r in enumerate(records):
            if not isinstance(r, dict):
                raise ValueError(f"{path}: procedure {i} is not an object")
            run = r.get("run")
            if run is not None:
                if not isinstance(run, str):
                    raise ValueError(f"{path}: procedure {i} has a run that is not a name")
                _runner(run, f"{path}: procedure {i} ({r.get('name')!r})")
        for r in sorted(records, key=lambda r: (str(r["name"]), r["version"])):
            memory.register(Procedure(r["name"], r["description"], tuple(r["steps"]),
                                      r["version"], r.get("run"), r.get("owner")))
        memory.path = Path(path)
        return memory

    def __len__(self) -> int:
        return len(self._latest)

    def __iter__(self) -> Iterator[Procedure]:
        return iter(self._latest.values())


# -- the series' example: advice under a dietary restriction ---------------------------------
_SWAPS = {  # a word in the restriction -> (what to watch, an easy swap)
    "咖啡": ("咖啡、浓茶这类含咖啡因的饮品", "温水或花草茶"),
    "糖": ("奶茶、果汁和甜点", "无糖茶或气泡水"),
    "coffee": ("coffee and strong tea (caffeine)", "decaf or herbal tea"),
    "sugar": ("soda, milk tea and desserts", "unsweetened tea or sparkling water"),
    "sweet": ("soda, milk tea and desserts", "unsweetened tea or sparkling water"),
}


def dietary_advice(restriction: str, occasion: str) -> str:
    """How to give advice under a dietary restriction (the article's procedural example)."""
    watch, swap = next((v for k, v in _SWAPS.items() if k in restriction.lower()), (None, None))
    if has_han(restriction + occasion):
        return (f"{occasion}时记得你想{restriction}：留意{watch or '相关的饮食'}，"
                f"可以换成{swap or '你能接受的选项'}。")
    return (f"At the {occasion}, remember you want {restriction}: watch out for "
            f"{watch or 'anything related'}; {swap or 'something you are fine with'} is an easy swap.")


DIETARY_ADVICE = Procedure(
    name="dietary_advice",
    description="如何根据饮食限制给出建议 / how to give advice under a dietary restriction",
    steps=("确认限制 name the restriction",
           "列出这个场合常见的相关饮食 list what the occasion serves that conflicts with it",
           "给一个容易做到的替代 offer an easy swap",
           "语气温和，不说教 keep it friendly, no lecturing"),
    run="gya_memory.procedural:dietary_advice",
)
register_runner("gya_memory.procedural:dietary_advice", dietary_advice)
