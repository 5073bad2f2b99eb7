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
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gya_memory.base.checks import DEFAULT_USER, MAX_ID_CHARS, check_flag, check_user_id
from gya_memory.base.clock import Clock, aware_now, system_clock
from gya_memory.base.config import get_settings
from gya_memory.base.errors import GyaMemoryError

BUSY_TIMEOUT_S = 30.0
WAL_WAIT_S = 2.0  # how long forget_user waits for other readers to let the WAL be emptied
SCRUB_WAIT_S = 0.5  # the same for a single forget()


def secure_connection(conn: sqlite3.Connection) -> None:
    """``PRAGMA secure_delete = ON``: SQLite overwrites deleted content with zeros instead of
    leaving it in free pages. Its default is off (some builds turn it on); we never rely on
    the build, every connection the project opens asks for it."""
    conn.execute("PRAGMA secure_delete = ON")
    (mode,) = conn.execute("PRAGMA secure_delete").fetchone()
    if int(mode) != 1:
        raise RuntimeError("this SQLite refused PRAGMA secure_delete = ON; deleted memories "
                           "would stay readable in the file")


class UnsafeJournalWarning(RuntimeWarning, GyaMemoryError):
    """SQLite's journal is off: a crash during a write can corrupt the database."""


class StoreFileError(ValueError, GyaMemoryError):
    """The path given cannot be opened as the store's SQLite file; the message names it."""


def _check_path(path: object) -> str:
    """A store's path as text: a ``str`` or ``Path`` naming a file, or ``":memory:"``
    (an ``int`` would become a file named ``123`` in the working folder; ``""`` a
    nameless temporary database)."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path must be a file path (a str or Path) or ':memory:', got "
                         f"{type(path).__name__}: {path!r:.80}")
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"path must name a file, got {path!r:.80}; give a file path or "
                         "':memory:'")
    return text


class SQLiteStore:
    """Base of the SQLite stores: a connection, its journal, write transactions, a clock.

    Subclasses set :attr:`schema_sql` and :attr:`contents` (what a crash could lose, for the
    warning) and :meth:`default_path` (the file when no ``path`` is given); ``__init__`` checks
    the user id, keeps the clock and opens the file (with its schema).
    """

    schema_sql = ""
    contents = "data"
    scrubbed = True  # False after a forget whose WAL checkpoint could not finish
    user_id: str
    clock: Clock

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        user_id: str = DEFAULT_USER,
        clock: Clock = system_clock,
        unsafe_no_journal: bool | None = None,
    ) -> None:
        self.check_sqlite()
        self.user_id = check_user_id(user_id, limit=MAX_ID_CHARS)
        self.clock = clock
        self._open(self.default_path() if path is None else path, unsafe_no_journal)

    def check_sqlite(self) -> None:
        """Raise before the file is touched if this SQLite lacks what the store needs."""

    @staticmethod
    def default_path() -> Path:
        """The file used when no ``path`` is given (each store names its own)."""
        raise NotImplementedError

    def _open(self, path: str | os.PathLike[str], unsafe_no_journal: bool | None) -> None:
        self.path = _check_path(path)
        if unsafe_no_journal is None:
            unsafe_no_journal = get_settings().unsafe_no_journal
            self._unsafe_from = "MEMORY_SQLITE_UNSAFE_NO_JOURNAL is on"
        else:
            check_flag("unsafe_no_journal", unsafe_no_journal)  # "no" is not False
            self._unsafe_from = "unsafe_no_journal=True was given"
        self.unsafe_no_journal = unsafe_no_journal
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: we open every write transaction ourselves (BEGIN IMMEDIATE).
            self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise self._unusable(exc) from None
        try:
            self._configure()
            self.conn.executescript(self.schema_sql)
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise self._unusable(exc) from None
        except BaseException:
            self.conn.close()
            raise

    def _unusable(self, exc: Exception) -> StoreFileError:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        where = Path(self.path)
        if where.is_dir():
            hint = f"it is a folder; give a file path inside it, e.g. {where / 'memory.sqlite3'}"
        elif where.parent.exists() and not where.parent.is_dir():
            hint = f"{where.parent} is a file, not a folder; choose another path"
        else:
            hint = "give a path to a new file, or to a file this store wrote"
        return StoreFileError(f"cannot open {self.path} as the {self.contents} database "
                              f"({reason}): {hint}")

    def _configure(self) -> None:
        self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        secure_connection(self.conn)
        if self.unsafe_no_journal:
            warnings.warn(
                f"{self._unsafe_from}: SQLite's journal is OFF for "
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

    def _scrub(self, wait_s: float = SCRUB_WAIT_S) -> bool:
        """After a delete: push the (zeroed) pages from the WAL into the file and empty the
        WAL, so deleted text is in neither. Another connection's open read keeps the
        checkpoint from finishing: it is retried for ``wait_s`` seconds (not SQLite's busy
        timeout, which would block 30 s per try), then this returns False
        (:attr:`scrubbed`; the next checkpoint finishes the job)."""
        if self.path == ":memory:" or self.unsafe_no_journal:
            return True
        deadline = time.monotonic() + wait_s
        self.conn.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                self.scrubbed = busy == 0
                if self.scrubbed or time.monotonic() >= deadline:
                    return self.scrubbed
                time.sleep(0.02)
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")

    def empty_wal(self, wait_s: float = WAL_WAIT_S) -> bool:
        """Empty the ``-wal`` file now, waiting up to ``wait_s`` seconds for other
        connections' reads to end; False if one still holds it (close it, then call again)."""
        return self._scrub(wait_s)

    def check_erasable(self) -> None:
        """Raise unless a forget can run now: the connection is open and the file takes a
        write (a read-only file or folder fails here, before anything is deleted)."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("ROLLBACK")
        except sqlite3.ProgrammingError:
            raise RuntimeError(f"{self!r} is closed; open it again to forget "
                               f"{self.user_id!r}. Nothing was deleted.") from None
        except sqlite3.Error as exc:
            raise PermissionError(f"cannot write {self.path} ({exc}), so nothing can be "
                                  "deleted from it. Nothing was deleted.") from None

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
