"""Atomic file writes and a cross-process file lock: a file is either the old one or the
new one, never half of each, and two processes changing it take turns.

Used by the curated memory files, saved procedures and the vector store's collection pointer.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gya_memory.base.errors import GyaMemoryError


class MemoryLocked(TimeoutError, GyaMemoryError):
    """Another process held the file's lock for longer than the timeout."""


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


@contextmanager
def file_lock(lock_path: Path, timeout: float, name: str) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (flock on POSIX, msvcrt on Windows), waiting
    up to ``timeout`` seconds, else :class:`MemoryLocked` naming ``name``.

    The lock lives in a sidecar file because the file it guards is replaced on every
    write. It is released when the process dies, so a crashed writer cannot leave it stuck.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    with open(lock_path, "a+b") as f:
        delay = 0.001
        while not try_lock(f.fileno()):
            if time.monotonic() >= deadline:
                raise MemoryLocked(
                    f"could not lock {name} within {timeout:g} s: another process (another "
                    f"notebook kernel?) is writing it and holds {lock_path.name}. Nothing was "
                    "written; try again when it is done."
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            unlock(f.fileno())


def temp_files_of(path: Path) -> list[Path]:
    """The temp files :func:`atomic_write_text` makes for ``path`` (``.<name>.*.tmp``) that
    are in its folder now: a killed writer's leftovers, unless a live one holds the lock."""
    try:
        return [p for p in path.parent.iterdir()
                if p.name.startswith(f".{path.name}.") and p.name.endswith(".tmp")]
    except (FileNotFoundError, NotADirectoryError):
        return []
