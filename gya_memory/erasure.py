"""Forgetting a user for real (真正删除一个用户): every store, every byte.

``forget_user(user_id, episodic=..., sessions=..., semantic=..., curated=..., procedural=...)``
removes one user's memories from each store it is given and returns an
:class:`ErasureReport` of what it removed, per store. Each store must already be the
user's own (its ``user_id`` is ``user_id``, both in NFC), and every store is asked whether
it can be erased (``check_erasable()``: open, writable, its file readable) before
anything is deleted, so a mistake or a closed store deletes nothing.

If another connection's read keeps a SQLite ``-wal`` file from being emptied, the call
waits briefly (``wal_wait_s``), then raises :class:`ErasureIncomplete`: the rows are
deleted from every store, but copies of the text remain in that WAL until the other
connection closes; its message says so, and calling ``forget_user`` again finishes the job.

"Deleted" means gone from the files, not only from the queries:

- SQLite (episodic facts, session transcripts): every connection runs with
  ``PRAGMA secure_delete = ON`` (freed pages are zeroed), the full-text index is rewritten
  (FTS5 ``optimize``), and a ``wal_checkpoint(TRUNCATE)`` moves the zeroed pages into the
  file and empties the ``-wal`` file;
- curated files: the user's folder (``MEMORY.md``, ``USER.md``, locks, temp files) is deleted;
- procedures the user owns are dropped and their JSON file rewritten under its lock, with
  any temp file a killed save left next to it removed;
- semantic memory: :meth:`SemanticMemory.erase_user` removes the user's points from every
  collection.

What this cannot reach: backups, copies, the operating system's swap, and a disk that keeps
old blocks (SSD wear levelling, copy-on-write file systems, snapshots). Say so to users.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gya_memory.base.checks import check_finite, check_user_id
from gya_memory.base.errors import GyaMemoryError
from gya_memory.episodic.sqlite import WAL_WAIT_S


@dataclass(frozen=True)
class ErasureReport:
    """What :func:`forget_user` removed from each store (None: that store was not given)."""

    user_id: str
    episodic: int | None = None
    sessions: int | None = None
    semantic: int | None = None
    curated: int | None = None
    procedural: int | None = None
    wal_emptied: bool = True  # False: a reader kept a WAL checkpoint from finishing

    @property
    def total(self) -> int:
        return sum(v for v in (self.episodic, self.sessions, self.semantic, self.curated,
                               self.procedural) if v is not None)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        parts = [f"{name} {getattr(self, name)}" for name in
                 ("episodic", "sessions", "semantic", "curated", "procedural")
                 if getattr(self, name) is not None]
        text = f"forgot {self.user_id!r}: " + ", ".join(parts) + f" (total {self.total})"
        if not self.wal_emptied:
            text += (" -- NOT FINISHED: another connection's read kept a SQLite -wal file "
                     "from being emptied, so copies of the deleted text are still in it; "
                     "close that connection and call forget_user again")
        return text


class ErasureIncomplete(RuntimeError, GyaMemoryError):
    """The rows are deleted, but a SQLite ``-wal`` file still holds copies of the text
    (another connection was reading); ``report`` says what was removed."""

    def __init__(self, report: ErasureReport, files: list[str]) -> None:
        self.report = report
        self.files = files
        super().__init__(f"{report}. WAL not emptied: {', '.join(files)}.")


def _owned(store: Any, what: str, user_id: str) -> None:
    owner = getattr(store, "user_id", None)
    if owner != user_id:
        raise ValueError(f"{what} belongs to user {owner!r}, not {user_id!r}; open it with "
                         f"user_id={user_id!r} to forget that user. Nothing was deleted.")


def _check_stores(user_id: str, given: dict[str, Any]) -> None:
    """Every given store is the user's own and can be erased now; raises before anything
    is deleted."""
    if not any(s is not None for s in given.values()):
        raise ValueError("forget_user() needs at least one store: episodic=, sessions=, "
                         "semantic=, curated= or procedural=")
    for what, store in given.items():
        if store is None:
            continue
        if what != "procedural" or getattr(store, "user_id", None) is not None:
            _owned(store, what, user_id)
    semantic, procedural = given["semantic"], given["procedural"]
    if semantic is not None and not callable(getattr(semantic, "erase_user", None)):
        raise RuntimeError(
            f"{type(semantic).__name__} has no erase_user() method, so its points cannot be "
            "removed from every collection; update gya_memory.semantic.memory. Nothing was deleted.")
    if procedural is not None and not callable(getattr(procedural, "erase_user", None)):
        raise ValueError(f"procedural must be a ProceduralMemory, got {type(procedural).__name__}")
    for store in given.values():
        check = getattr(store, "check_erasable", None)
        if callable(check):
            check()  # its error says what is wrong, and that nothing was deleted


def forget_user(
    user_id: str,
    *,
    episodic: Any = None,
    sessions: Any = None,
    semantic: Any = None,
    curated: Any = None,
    procedural: Any = None,
    wal_wait_s: float = WAL_WAIT_S,
) -> ErasureReport:
    """Forget ``user_id`` in every store given (see the module docstring); raises
    :class:`ErasureIncomplete` (with the report) if a WAL could not be emptied."""
    user_id = check_user_id(user_id)
    wal_wait_s = check_finite("wal_wait_s", wal_wait_s, low=0)
    given = {"episodic": episodic, "sessions": sessions, "semantic": semantic,
             "curated": curated, "procedural": procedural}
    _check_stores(user_id, given)

    counts: dict[str, int] = {}
    unfinished: list[str] = []
    for what, store in (("episodic", episodic), ("sessions", sessions)):
        if store is not None:
            counts[what] = store.forget(everything=True)
            if not store.scrubbed and not store.empty_wal(wal_wait_s):
                unfinished.append(f"{store.path}-wal")
    if semantic is not None:
        counts["semantic"] = int(semantic.erase_user())
    if curated is not None:
        counts["curated"] = curated.erase()
    if procedural is not None:
        counts["procedural"] = procedural.erase_user(user_id)
    report = ErasureReport(user_id=user_id, wal_emptied=not unfinished, **counts)
    if unfinished:
        raise ErasureIncomplete(report, unfinished)
    return report
