"""Durable SQLite files, shared by the episodic facts and the session transcripts.

:class:`SQLiteStore` opens one file for one user the careful way: WAL journal with
``synchronous=FULL`` (a row is on disk when its transaction commits and survives a crash or a
``kill -9``), a busy timeout (two kernels writing the same file wait for each other instead of
failing with "database is locked"), and write transactions opened with ``BEGIN IMMEDIATE``.
Every connection sets ``PRAGMA secure_delete = ON`` (deleted rows are overwritten with
zeros), and a forget ends with ``PRAGMA wal_checkpoint(TRUNCATE)`` so deleted text does not
linger in the ``-wal`` file either. ``MEMORY_SQLITE_UNSAFE_NO_JOURNAL=1`` turns the journal off for locked-down sandboxes that
forbid its files, with a loud warning: a crash mid-write can then corrupt the database.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .clock import Clock, aware_now
from .config import get_settings
from .errors import GyaMemoryError

BUSY_TIMEOUT_S = 30.0


def secure_connection(conn: sqlite3.Connection) -> None:
    """``PRAGMA secure_delete = ON``: SQLite overwrites deleted content with zeros instead of
    leaving it in free pages. Its default is off (some builds turn it on); we never rely on
    the build, every connection the project opens asks for it."""
    conn.execute("PRAGMA secure_delete = ON")
    (mode,) = conn.execute("PRAGMA secure_delete").fetchone()
    if int(mode) != 1:
        raise RuntimeError("this SQLite refused PRAGMA secure_delete = ON; deleted memories "
                           "would stay readable in the file")


def data_path(name: str) -> Path:
    """``name`` in the data folder (``$GYA_DATA_DIR``): where a store lives when no path is given."""
    return get_settings().data_dir / name


class UnsafeJournalWarning(RuntimeWarning, GyaMemoryError):
    """SQLite's journal is off: a crash during a write can corrupt the database."""


class SQLiteStore:
    """Base of the SQLite stores: a connection, its journal, write transactions, a clock.

    Subclasses set :attr:`schema_sql` and :attr:`contents` (what a crash could lose, for the
    warning) and call :meth:`_open` from ``__init__`` after setting ``user_id`` and ``clock``.
    """

    schema_sql = ""
    contents = "data"
    scrubbed = True  # False after a forget whose WAL checkpoint could not finish
    user_id: str
    clock: Clock

    def _open(self, path: str | os.PathLike[str], unsafe_no_journal: bool | None) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        if unsafe_no_journal is None:
            unsafe_no_journal = get_settings().unsafe_no_journal
        self.unsafe_no_journal = unsafe_no_journal
        # isolation_level=None: we open every write transaction ourselves (BEGIN IMMEDIATE).
        self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            self._configure()
            self.conn.executescript(self.schema_sql)
        except BaseException:
            self.conn.close()
            raise

    def _configure(self) -> None:
        self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        secure_connection(self.conn)
        if self.unsafe_no_journal:
            warnings.warn(
                "MEMORY_SQLITE_UNSAFE_NO_JOURNAL is on: SQLite's journal is OFF for "
                f"{self.path}. A crash or kill during a write can corrupt the database and "
                f"lose every {self.contents} in it. Use this only in a throw-away sandbox.",
                UnsafeJournalWarning,
                stacklevel=4,  # _configure <- _open <- __init__ <- the caller
            )
            self.conn.execute("PRAGMA journal_mode = OFF")
            self.conn.execute("PRAGMA synchronous = OFF")
        else:
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = FULL")

    def _scrub(self) -> bool:
        """After a delete: push the (zeroed) pages from the WAL into the file and empty the
        WAL, so deleted text is in neither. Returns False if another connection's open read
        kept the checkpoint from finishing (the next checkpoint finishes the job)."""
        if self.path == ":memory:" or self.unsafe_no_journal:
            return True
        busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        self.scrubbed = busy == 0
        return self.scrubbed

    @property
    def journal_mode(self) -> str:
        """What SQLite reports: ``wal`` normally, ``memory`` for ``:memory:``, ``off`` if unsafe."""
        return str(self.conn.execute("PRAGMA journal_mode").fetchone()[0])

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _now(self) -> str:
        return aware_now(self.clock).isoformat()

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        name = self.path if self.path == ":memory:" else Path(self.path).name
        return f"{type(self).__name__}({name!r}, user_id={self.user_id!r})"
