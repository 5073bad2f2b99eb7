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
the built-in ones). A user's registry (``ProceduralMemory(user_id=...)``) sees that user's
procedures and the shared ones, never another user's, and no user can take a shared name;
:meth:`ProceduralMemory.erase_user` removes a user's procedures. A registry kept in a file
changes it under a lock, so two processes registering at once lose nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gya_memory.base.checks import is_int
from gya_memory.base.checks import check_count, check_finite, check_text, check_user_id
from gya_memory.base.files import MemoryLocked, file_lock, temp_files_of
from gya_memory.procedural.records import ProceduresDamaged
from gya_memory.procedural.records import (
    check_procedures_path, lock_path, remove_temps, file_stamp, read_records, write_records,
)

if TYPE_CHECKING:
    from gya_memory.semantic.embeddings.base import Embedder

Runner = Callable[..., Any] | str
LOCK_TIMEOUT_S = 10.0

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
        if isinstance(self.steps, (str, bytes)) or not self.steps:
            raise ValueError(f"procedure {self.name!r} has no steps")
        if not isinstance(self.steps, tuple):  # a list would make the frozen procedure mutable
            object.__setattr__(self, "steps", tuple(self.steps))
        for i, step in enumerate(self.steps):
            check_text("step", step, 10_000, index=i)
        if not is_int(self.version, low=1):
            raise ValueError(f"procedure {self.name!r}: version must be 1 or more")
        if self.owner is not None:  # NFC, like every user id: ids that print alike are one
            object.__setattr__(self, "owner", check_user_id(self.owner, name="owner"))
        if isinstance(self.run, str) and ":" not in self.run:
            raise ValueError(f"procedure {self.name!r}: run must look like 'module:function'")

    def function(self) -> Callable[..., Any]:
        """The callable that carries the steps out (an import reference is resolved here)."""
        if self.run is None:
            raise ValueError(f"{self.name!r} has steps but no function to run; read .steps instead")
        if callable(self.run):
            return self.run
        return _runner(self.run, repr(self.name))


Key = tuple[str | None, str]  # (owner, name); owner None: shared


class ProceduralMemory:
    """A registry of procedures: register, look up by name, words or meaning, invoke.

    Owners. ``user_id`` is whose registry this is: :meth:`get`, :meth:`find`,
    :meth:`search`, :meth:`invoke` and iteration see that user's own procedures plus the
    shared ones (``owner=None``), never another user's. Without ``user_id`` only the
    shared ones are seen (any user's can still be registered, e.g. when setting up). A
    shared name belongs to everyone: a user cannot register a procedure under it, and
    if a shared one is added later under a user's name, the shared one is what runs.

    A file. A registry with a ``path`` (given here, or the file last loaded or saved) keeps
    every change in that file: each :meth:`register` and :meth:`erase_user` takes the
    file's lock (the curated files' lock, :func:`gya_memory.base.files.file_lock`), reads the
    file fresh, changes it and replaces it atomically, so two processes registering at
    once lose nothing; temp files a killed writer left are removed under the lock.
    """

    def __init__(self, embedder: Embedder | None = None, *, user_id: str | None = None,
                 path: str | os.PathLike[str] | None = None,
                 lock_timeout: float = LOCK_TIMEOUT_S) -> None:
        self.user_id = None if user_id is None else check_user_id(user_id)
        self._history: dict[Key, list[Procedure]] = {}
        self._embedder = embedder
        self._vectors: dict[tuple[str | None, str, int], Any] = {}
        self.lock_timeout = check_finite("lock_timeout", lock_timeout, low=0)
        self.path: Path | None = None  # the file this registry keeps its procedures in
        self._seen: tuple[int, int, int] | None = None  # the file's (inode, mtime, size) read
        if path is not None:
            self.path = check_procedures_path(path)
            self._remove_stale_temps()
            self._refresh()

    # -- what this registry sees --------------------------------------------------------
    def _visible(self) -> dict[str, Procedure]:
        """Name -> latest version, for this registry's user: own ones, then shared ones
        (which win on a clash)."""
        self._refresh()
        seen: dict[str, Procedure] = {}
        for owner in (self.user_id, None) if self.user_id is not None else (None,):
            for (who, name), versions in self._history.items():
                if who == owner:
                    seen[name] = versions[-1]
        return seen

    def _key(self, name: str) -> Key:
        latest = self._visible().get(name)
        if latest is None:
            known = ", ".join(self._visible()) or "none"
            raise KeyError(f"no procedure named {name!r}; known: {known}")
        return (latest.owner, name)

    def owned_by(self, user_id: str) -> list[Procedure]:
        """The latest version of each procedure ``user_id`` owns (for this registry's own
        user, or any user's in a registry without one)."""
        user_id = self._may_touch(check_user_id(user_id), "list")
        self._refresh()
        return [v[-1] for (who, _), v in self._history.items() if who == user_id]

    # -- registering ----------------------------------------------------------------------
    def _may_touch(self, owner: str | None, action: str) -> str | None:
        if self.user_id is not None and owner != self.user_id:
            whose = "a shared procedure" if owner is None else f"user {owner!r}'s procedures"
            raise ValueError(f"this registry is user {self.user_id!r}'s; it cannot {action} "
                             f"{whose}. Use ProceduralMemory() without user_id for that.")
        return owner

    def register(self, procedure: Procedure) -> Procedure:
        """Add a procedure, or a newer version of one (the version must go up). In a user's
        registry a procedure without owner becomes that user's."""
        if not isinstance(procedure, Procedure):
            raise ValueError(f"register() takes a Procedure, got {type(procedure).__name__}")
        if procedure.owner is None and self.user_id is not None:
            procedure = replace(procedure, owner=self.user_id)
        self._may_touch(procedure.owner, "register")
        if self.path is not None:
            _check_savable(procedure)
        self._change(lambda history: _add(history, procedure))
        return procedure

    def get(self, name: str, version: int | None = None) -> Procedure:
        if version is not None:
            check_count("version", version)
        if not isinstance(name, str):
            raise ValueError(f"name must be a string, got {type(name).__name__}: {name!r:.80}")
        versions = self._history[self._key(name)]
        if version is None:
            return versions[-1]
        for proc in versions:
            if proc.version == version:
                return proc
        raise KeyError(f"{name!r} has no version {version}")

    def find(self, words: str) -> list[Procedure]:
        """Procedures whose name or description contains every word of ``words``."""
        terms = [w.lower() for w in check_text("words", words, 10_000).split()]
        return [
            p for p in self._visible().values()
            if all(t in f"{p.name} {p.description}".lower() for t in terms)
        ]

    def search(self, query: str, top_k: int = 3) -> list[tuple[Procedure, float]]:
        """Procedures ranked by how close their description is in meaning to ``query``
        (cosine of embeddings; the embedder given, else the configured one)."""
        import numpy as np

        top_k = check_count("top_k", top_k)
        query = check_text("query", query, 10_000)
        procs = list(self._visible().values())
        if not procs:
            return []
        if self._embedder is None:
            from gya_memory.semantic.embeddings import get_embedder

            self._embedder = get_embedder()
        keys = [(p.owner, p.name, p.version) for p in procs]
        missing = [(k, p) for k, p in zip(keys, procs) if k not in self._vectors]
        if missing:
            vectors = self._embedder.embed_documents([f"{p.name}: {p.description}"
                                                      for _, p in missing])
            self._vectors.update({k: v for (k, _), v in zip(missing, vectors)})
        q = self._embedder.embed_query(query)
        scores = np.array([float(self._vectors[k] @ q) for k in keys])
        order = np.argsort(-scores, kind="stable")[:top_k]
        return [(procs[i], float(scores[i])) for i in order]

    def invoke(self, name: str, /, **kwargs: Any) -> Any:
        """Run a procedure's function with keyword arguments."""
        return self.get(name).function()(**kwargs)

    # -- storing --------------------------------------------------------------------------
    def _change(self, mutate: Callable[[dict[Key, list[Procedure]]], None]) -> None:
        """Apply ``mutate`` to the procedures: in memory, or, with a file, to the file's
        content read fresh under its lock, then written back atomically."""
        if self.path is None:
            mutate(self._history)
            return
        with file_lock(lock_path(self.path), self.lock_timeout, self.path.name):
            remove_temps(self.path)  # a killed writer's leftovers; no live writer now
            history = _read(self.path)
            mutate(history)
            _write(self.path, history)
            self._adopt(history)

    def _remove_stale_temps(self) -> None:
        """On open: a killed writer's temp files go, if no live writer holds the lock now."""
        assert self.path is not None
        if temp_files_of(self.path):
            try:
                with file_lock(lock_path(self.path), 0.0, self.path.name):
                    remove_temps(self.path)
            except MemoryLocked:
                pass  # a live writer: its temp file is its own; the next write cleans up

    def _adopt(self, history: dict[Key, list[Procedure]]) -> None:
        self._history = history
        self._seen = file_stamp(self.path) if self.path is not None else None
        self._vectors = {k: v for k, v in self._vectors.items()
                         if any(p.version == k[2] for p in history.get((k[0], k[1]), ()))}

    def _refresh(self) -> None:
        """Re-read the file when another process changed it (one ``stat`` otherwise)."""
        if self.path is not None and file_stamp(self.path) != self._seen:
            self._adopt(_read(self.path))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write every version of every procedure to a JSON file (atomically, under its
        lock) and keep this registry's procedures there from now on. Saving to the file
        this registry already uses keeps what other processes added to it."""
        target = check_procedures_path(path)
        if self.path is not None and target.resolve() == self.path.resolve():
            self._change(lambda history: None)
            return
        for versions in self._history.values():
            for p in versions:
                _check_savable(p)
        with file_lock(lock_path(target), self.lock_timeout, target.name):
            remove_temps(target)
            _write(target, self._history)
            self.path = target
            self._adopt(self._history)

    def erase_user(self, user_id: str) -> int:
        """Remove every version of every procedure ``user_id`` owns; shared ones stay.
        With a file, the file is rewritten (and its temp files removed). Returns how many
        procedure versions were removed."""
        user_id = self._may_touch(check_user_id(user_id), "erase")
        removed = 0

        def drop(history: dict[Key, list[Procedure]]) -> None:
            nonlocal removed
            for key in [k for k in history if k[0] == user_id]:
                removed += len(history.pop(key))

        self._change(drop)
        return removed

    def check_erasable(self) -> None:
        """Raise unless :meth:`erase_user` can finish: the file (if any) is readable and its
        folder writable. :func:`gya_memory.erasure.forget_user` asks before deleting."""
        if self.path is not None:
            try:
                _read(self.path)
            except ProceduresDamaged as exc:
                raise ProceduresDamaged(f"{exc}. Nothing was deleted.") from None
            if not os.access(self.path.parent, os.W_OK):
                raise PermissionError(f"cannot rewrite {self.path}: its folder is not "
                                      "writable; nothing was deleted")

    @classmethod
    def load(cls, path: str | os.PathLike[str], embedder: Embedder | None = None, *,
             user_id: str | None = None) -> ProceduralMemory:
        """Open a file :meth:`save` wrote (it must exist). A runner that is not in
        :data:`RUNNERS` is refused here, before anything can call it."""
        target = check_procedures_path(path)
        if not target.is_file():
            raise FileNotFoundError(f"no procedures file at {target}")
        return cls(embedder, user_id=user_id, path=target)

    def __len__(self) -> int:
        return len(self._visible())

    def __iter__(self) -> Iterator[Procedure]:
        return iter(self._visible().values())


# -- the file -------------------------------------------------------------------------------
def _check_savable(p: Procedure) -> None:
    if p.run is not None and not isinstance(p.run, str):
        raise ValueError(
            f"{p.name!r} v{p.version} runs a Python object, which can't be saved to a file; "
            "give run='module:function' (see register_runner) instead")


def _add(history: dict[Key, list[Procedure]], procedure: Procedure, *,
         from_file: bool = False) -> None:
    """Add ``procedure`` to ``history``: a newer version of its own, never a user's copy of
    a shared name (a file an earlier version wrote may hold one: it is kept, and hidden)."""
    name = procedure.name
    if procedure.owner is not None and (None, name) in history and not from_file:
        raise ValueError(f"{name!r} is a shared procedure; user {procedure.owner!r} cannot "
                         "register one under that name (it would run instead of the shared "
                         "one). Choose another name.")
    versions = history.setdefault((procedure.owner, name), [])
    if versions and procedure.version <= versions[-1].version:
        current = versions[-1].version
        raise ValueError(f"{name!r} is already at version {current}; register version "
                         f"{current + 1} or later to change it")
    versions.append(procedure)


def _write(path: Path, history: dict[Key, list[Procedure]]) -> None:
    write_records(path, [{"name": p.name, "description": p.description, "steps": list(p.steps),
                          "version": p.version, "run": p.run, "owner": p.owner}
                         for versions in history.values() for p in versions])


def _read(path: Path) -> dict[Key, list[Procedure]]:
    """The procedures in ``path`` (none if it does not exist); :class:`ProceduresDamaged`,
    naming the file and the record, for anything :meth:`ProceduralMemory.save` does not
    write."""
    records = read_records(path)
    history: dict[Key, list[Procedure]] = {}
    procs = [_record(path, i, r) for i, r in enumerate(records)]
    for p in sorted(procs, key=lambda p: p.version):
        try:
            _add(history, p, from_file=True)
        except ValueError as exc:
            raise ProceduresDamaged(f"{path}: {exc}") from None
    return history


def _record(path: Path, i: int, r: object) -> Procedure:
    where = f"{path}: procedure {i}"
    if not isinstance(r, dict):
        raise ProceduresDamaged(f"{where} is not an object")
    missing = [k for k in ("name", "description", "steps", "version") if k not in r]
    if missing:
        raise ProceduresDamaged(f"{where} has no {', '.join(missing)}")
    run = r.get("run")
    if run is not None:
        if not isinstance(run, str):
            raise ProceduresDamaged(f"{where} has a run that is not a name")
        _runner(run, f"{where} ({r.get('name')!r})")
    if not isinstance(r["steps"], list):
        raise ProceduresDamaged(f"{where}: steps must be a list of strings")
    try:
        return Procedure(r["name"], r["description"], tuple(r["steps"]), r["version"], run,
                         r.get("owner"))
    except ValueError as exc:
        raise ProceduresDamaged(f"{where}: {exc}") from None
