"""Forgetting a user for real (真正删除一个用户): every store, every byte.

``forget_user(user_id, episodic=..., sessions=..., semantic=..., curated=..., procedural=...)``
removes one user's memories from each store it is given and returns an
:class:`ErasureReport` of what it removed, per store. Each store must already be the
user's own (its ``user_id`` is ``user_id``); every store is checked before anything is
deleted, so a mistake deletes nothing.

"Deleted" means gone from the files, not only from the queries:

- SQLite (episodic facts, session transcripts): every connection runs with
  ``PRAGMA secure_delete = ON`` (freed pages are zeroed), the full-text index is rewritten
  (FTS5 ``optimize``), and a ``wal_checkpoint(TRUNCATE)`` moves the zeroed pages into the
  file and empties the ``-wal`` file;
- curated files: the user's folder (``MEMORY.md``, ``USER.md``, locks, temp files) is deleted;
- procedures the user owns are dropped and their JSON file rewritten;
- semantic memory: :meth:`SemanticMemory.erase_user` removes the user's points from every
  collection.

What this cannot reach: backups, copies, the operating system's swap, and a disk that keeps
old blocks (SSD wear levelling, copy-on-write file systems, snapshots). Say so to users.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .checks import check_user_id


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
        return f"forgot {self.user_id!r}: " + ", ".join(parts) + f" (total {self.total})"


def _owned(store: Any, what: str, user_id: str) -> None:
    owner = getattr(store, "user_id", None)
    if owner != user_id:
        raise ValueError(f"{what} belongs to user {owner!r}, not {user_id!r}; open it with "
                         f"user_id={user_id!r} to forget that user. Nothing was deleted.")


def forget_user(
    user_id: str,
    *,
    episodic: Any = None,
    sessions: Any = None,
    semantic: Any = None,
    curated: Any = None,
    procedural: Any = None,
) -> ErasureReport:
    """Forget ``user_id`` in every store given (see the module docstring)."""
    user_id = check_user_id(user_id)
    given = {"episodic": episodic, "sessions": sessions, "semantic": semantic,
             "curated": curated}
    for what, store in given.items():
        if store is not None:
            _owned(store, what, user_id)
    if semantic is not None and not callable(getattr(semantic, "erase_user", None)):
        raise RuntimeError(
            f"{type(semantic).__name__} has no erase_user() method, so its points cannot be "
            "removed from every collection; update gya_memory.semantic. Nothing was deleted.")
    if procedural is not None and not callable(getattr(procedural, "erase_user", None)):
        raise ValueError(f"procedural must be a ProceduralMemory, got {type(procedural).__name__}")
    if not any(s is not None for s in (*given.values(), procedural)):
        raise ValueError("forget_user() needs at least one store: episodic=, sessions=, "
                         "semantic=, curated= or procedural=")

    counts: dict[str, int] = {}
    wal_emptied = True
    if episodic is not None:
        counts["episodic"] = episodic.forget(everything=True)
        wal_emptied &= bool(episodic.scrubbed)
    if sessions is not None:
        counts["sessions"] = sessions.forget(everything=True)
        wal_emptied &= bool(sessions.scrubbed)
    if semantic is not None:
        counts["semantic"] = int(semantic.erase_user())
    if curated is not None:
        counts["curated"] = curated.erase()
    if procedural is not None:
        counts["procedural"] = procedural.erase_user(user_id)
    return ErasureReport(user_id=user_id, wal_emptied=wal_emptied, **counts)
