"""Episodic memory (情节记忆): structured facts about what happened, in SQLite.

One row is one fact taken from a conversation: a ``subject`` (事实主体, e.g. 偏好), the
``fact`` itself (事实内容), the ``session_id`` of the conversation it came from and when it
was written. A ``user_id`` scopes every row, so one file can hold several users and one
user's recall never returns another user's facts.

Recall is exact, along three paths: by subject, by session, and by keyword (a literal
substring of the fact). That is the strength of this layer and its limit: a question whose
words were never written down ("饮食") finds nothing. Semantic retrieval is the next layer.

Durability: every write is a committed transaction in WAL mode with ``synchronous=FULL``,
so a row is on disk when :meth:`EpisodicMemory.add` returns and survives a crash or a
``kill -9``; a busy timeout lets two processes write the same file without "database is
locked". ``MEMORY_SQLITE_UNSAFE_NO_JOURNAL=1`` turns the journal off for locked-down
sandboxes that forbid its files; a crash mid-write can then corrupt the database.

Size limits (characters): subject 100, fact 2,000, session id and user id 128.

Facts go into prompts, so every write is scanned first (:mod:`gya_memory.hermes.injection`): a row
that reads like an instruction to the model is refused with ``InstructionRefused`` and nothing
is written, unless the caller passes ``allow_instructions=True``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gya_memory.base.checks import check_count, check_flag
from gya_memory.base.checks import check_text as _check_text
from gya_memory.base.checks import DEFAULT_USER
from gya_memory.hermes.injection import check_allow, check_for_store
from gya_memory.base.checks import MAX_ID_CHARS
from gya_memory.base.config import data_path
from gya_memory.episodic.sqlite import SQLiteStore

MAX_SUBJECT_CHARS = 100
MAX_FACT_CHARS = 2000
MAX_ROW_ID = 2**63 - 1  # SQLite's largest integer
DEFAULT_DB_NAME = "episodic.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    TEXT NOT NULL,
    subject    TEXT NOT NULL,   -- 事实主体, e.g. 偏好 / preference
    fact       TEXT NOT NULL,   -- 事实内容
    session_id TEXT NOT NULL,   -- the conversation it came from
    created_at TEXT NOT NULL    -- ISO 8601 with a UTC offset
);
CREATE INDEX IF NOT EXISTS facts_user_subject ON facts(user_id, subject);
CREATE INDEX IF NOT EXISTS facts_user_session ON facts(user_id, session_id);
"""
_COLUMNS = "id, user_id, subject, fact, session_id, created_at"


@dataclass(frozen=True)
class Fact:
    """One stored fact, as recall returns it."""

    id: int
    user_id: str
    subject: str
    fact: str
    session_id: str
    created_at: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def escape_like(keyword: str) -> str:
    """Escape ``\\``, ``%`` and ``_`` so that ``LIKE ... ESCAPE '\\'`` matches them literally."""
    return keyword.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def default_path() -> Path:
    """Where the facts live when no path is given: ``$GYA_DATA_DIR/episodic.sqlite3``."""
    return data_path(DEFAULT_DB_NAME)


class EpisodicMemory(SQLiteStore):
    """The facts table of one SQLite file, seen as one user.

    >>> mem = EpisodicMemory(":memory:", user_id="user-001")
    >>> mem.add("偏好", "最近在戒咖啡，想少喝一点", session_id="session-A").subject
    '偏好'
    >>> [f.fact for f in mem.search("咖啡")]
    ['最近在戒咖啡，想少喝一点']
    """

    schema_sql = _SCHEMA
    contents = "memory"

    default_path = staticmethod(default_path)

    # -- set-up -----------------------------------------------------------------------
    def schema(self) -> str:
        """The SQL that defines the facts table and its indexes, as SQLite stores it."""
        rows = self.conn.execute(
            "SELECT sql FROM sqlite_master WHERE tbl_name = 'facts' ORDER BY rowid"
        )
        return ";\n\n".join(sql for (sql,) in rows) + ";"

    # -- writing ----------------------------------------------------------------------
    def _row(self, subject: object, fact: object, session_id: object,
             index: int | None = None) -> tuple[str, str, str]:
        return (
            _check_text("subject", subject, MAX_SUBJECT_CHARS, index=index),
            _check_text("fact", fact, MAX_FACT_CHARS, index=index),
            _check_text("session_id", session_id, MAX_ID_CHARS, index=index),
        )

    def add(self, subject: str, fact: str, session_id: str, *,
            allow_instructions: bool = False) -> Fact:
        """Store one fact; it is committed to disk when this returns. A fact that reads like
        an instruction to the model is refused (``InstructionRefused``) unless
        ``allow_instructions=True`` (see :meth:`add_many`)."""
        return self.add_many([(subject, fact, session_id)], allow_instructions=allow_instructions)[0]

    def add_many(self, rows: Iterable[Sequence[str]], *,
                 allow_instructions: bool = False) -> list[Fact]:
        """Store many ``(subject, fact, session_id)`` rows in one transaction.

        Every row is checked before anything is written: one bad row writes none. The check
        includes the injection scan: a subject, fact or session id that reads like an
        instruction to the model raises :class:`~gya_memory.hermes.injection.InstructionRefused`.
        ``allow_instructions=True`` stores it as it is (a record the caller vouches for, such
        as a quote of an attack); the context assembly still screens it before a prompt.
        """
        allow = check_allow(allow_instructions)
        if isinstance(rows, (str, bytes)) or not isinstance(rows, Iterable):
            raise ValueError("rows must be a list of (subject, fact, session_id) tuples, got "
                             f"{type(rows).__name__}: {rows!r:.80}")
        checked = []
        for i, row in enumerate(rows):
            if isinstance(row, (str, bytes)) or not isinstance(row, Sequence) or len(row) != 3:
                raise ValueError(f"row {i} must be (subject, fact, session_id), got {row!r:.80}")
            try:
                subject, fact, session_id = self._row(*row)
            except ValueError as exc:
                raise ValueError(f"row {i}: {exc}") from None
            check_for_store("episodic memory", [(f"row {i} fact", fact), (f"row {i} subject", subject),
                                                (f"row {i} session_id", session_id)],
                            allow_instructions=allow)
            checked.append((subject, fact, session_id))
        if not checked:
            return []
        stored: list[Fact] = []
        with self._write() as conn:
            for subject, fact, session_id in checked:
                created_at = self._now()
                cur = conn.execute(
                    "INSERT INTO facts(user_id, subject, fact, session_id, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (self.user_id, subject, fact, session_id, created_at),
                )
                assert cur.lastrowid is not None
                stored.append(Fact(cur.lastrowid, self.user_id, subject, fact, session_id, created_at))
        return stored

    # -- recall -------------------------------------------------------------------------
    def _query(self, where: str = "", params: Sequence[object] = ()) -> list[Fact]:
        sql = f"SELECT {_COLUMNS} FROM facts WHERE user_id = ? {where} ORDER BY id"
        return [Fact(*row) for row in self.conn.execute(sql, (self.user_id, *params))]

    def by_subject(self, subject: str) -> list[Fact]:
        """Every fact with exactly this subject, e.g. all 偏好 (preferences)."""
        return self._query("AND subject = ?", (_check_text("subject", subject, MAX_SUBJECT_CHARS),))

    def by_session(self, session_id: str) -> list[Fact]:
        """Everything one conversation left behind. An unknown session is an error, not []."""
        session_id = self._known_session(session_id)
        return self._query("AND session_id = ?", (session_id,))

    def search(self, keyword: str) -> list[Fact]:
        """Facts that contain ``keyword`` literally (``%``, ``_`` and ``\\`` included).

        Like SQL ``LIKE``, ASCII letters match regardless of case.
        """
        keyword = _check_text("keyword", keyword, MAX_FACT_CHARS)
        return self._query("AND fact LIKE ? ESCAPE '\\'", (f"%{escape_like(keyword)}%",))

    def all(self) -> list[Fact]:
        """Every fact of this user, oldest first."""
        return self._query()

    def get(self, fact_id: int) -> Fact:
        rows = self._query("AND id = ?", (self._check_id(fact_id),))
        if not rows:
            raise ValueError(f"no fact with id {fact_id} for user {self.user_id!r}")
        return rows[0]

    def sessions(self) -> dict[str, int]:
        """Each session of this user and how many facts it holds, in order of first fact."""
        rows = self.conn.execute(
            "SELECT session_id, COUNT(*) FROM facts WHERE user_id = ?"
            " GROUP BY session_id ORDER BY MIN(id)",
            (self.user_id,),
        )
        return dict(rows.fetchall())

    def __len__(self) -> int:
        return int(self.conn.execute(
            "SELECT COUNT(*) FROM facts WHERE user_id = ?", (self.user_id,)
        ).fetchone()[0])

    # -- forgetting ---------------------------------------------------------------------
    def forget(
        self,
        *,
        fact_id: int | None = None,
        session_id: str | None = None,
        everything: bool = False,
    ) -> int:
        """Delete one fact, one session's facts, or (``everything=True``) all of this user's.

        Give exactly one of the three. Returns how many facts were deleted. Other users'
        facts are never touched.
        """
        everything = check_flag("everything", everything)
        chosen = [fact_id is not None, session_id is not None, everything]
        if sum(chosen) != 1:
            raise ValueError("forget() takes exactly one of fact_id=, session_id=, everything=True")
        if fact_id is not None:
            self.get(fact_id)  # raises if it is not this user's
            where, params = "AND id = ?", (fact_id,)
        elif session_id is not None:
            where, params = "AND session_id = ?", (self._known_session(session_id),)
        else:
            where, params = "", ()
        with self._write() as conn:
            cur = conn.execute(f"DELETE FROM facts WHERE user_id = ? {where}", (self.user_id, *params))
        self._scrub()
        return cur.rowcount

    # -- helpers --------------------------------------------------------------------------
    def _known_session(self, session_id: object) -> str:
        session_id = _check_text("session_id", session_id, MAX_ID_CHARS)
        exists = self.conn.execute(  # an index lookup, whatever the user's row count
            "SELECT 1 FROM facts WHERE user_id = ? AND session_id = ? LIMIT 1",
            (self.user_id, session_id),
        ).fetchone()
        if exists is None:
            listed = ", ".join(self.sessions()) or "none yet"
            raise ValueError(
                f"unknown session {session_id!r} for user {self.user_id!r} (known: {listed})"
            )
        return session_id

    @staticmethod
    def _check_id(fact_id: object) -> int:
        fact_id = check_count("fact_id", fact_id)
        if fact_id > MAX_ROW_ID:
            raise ValueError(f"fact_id must be a positive int SQLite can hold (at most "
                             f"{MAX_ROW_ID:,}), got {fact_id!r}")
        return fact_id



def _main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m gya_memory.episodic.memory",
        description="Print one user's facts from an episodic SQLite file, one JSON per line.",
    )
    parser.add_argument("path")
    parser.add_argument("--user", default=DEFAULT_USER)
    args = parser.parse_args(argv)
    if not Path(args.path).exists():
        parser.error(f"no such file: {args.path}")
    with EpisodicMemory(args.path, user_id=args.user) as mem:
        for fact in mem.all():
            sys.stdout.write(json.dumps(fact.as_dict(), ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
