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
