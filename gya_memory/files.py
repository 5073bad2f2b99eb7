"""Atomic file writes: a file is either the old one or the new one, never half of each.

Used by the curated memory files, saved procedures and the vector store's collection pointer.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX). Windows cannot open a folder; skipped."""
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` (UTF-8): a temp file ``.<name>.*.tmp`` in the same folder,
    fsync, rename, fsync of the folder. If anything fails, the temp file is removed and the old
    file is left as it was; a temp file left by a killed process is the caller's to clean up."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_folder(path.parent)


def try_lock(fd: int) -> bool:
    """Take an exclusive lock on an open file without waiting: ``flock`` on POSIX, ``msvcrt``
    on Windows (first byte). False if another process holds it. Closing ``fd`` or the
    process dying releases it, so a crashed holder never leaves it stuck."""
    if os.name == "nt":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def unlock(fd: int) -> None:
    """Release a lock taken by :func:`try_lock`."""
    if os.name == "nt":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)
