"""Session search (会话搜索): every conversation's raw messages in SQLite, found with FTS5.

This is the episodic layer the way Hermes Agent builds it (``session_search``): each
message of each session is stored as it was said, and a search returns the actual
messages, with no summary and no truncation of what is stored. Memory files hold the
few key facts that are always in context; session search answers on-demand questions
like "did we talk about decaf last week?" (我们上周聊过低因咖啡吗？).

A :class:`SearchHit` is one matching message with its session id and time, a snippet of
about 50 characters with the matched text between ``«`` and ``»`` (``…`` where the snippet
cuts the message; FTS5's ``snippet()`` for indexed terms, the same format built in Python
for short terms), a score, and up to ``context`` messages before and after it *in the same
session*.

Chinese needs care. FTS5's default ``unicode61`` tokenizer splits on spaces and
punctuation, so a run of Chinese characters is one token: ``我最近在戒咖啡`` is a single
token and the query ``咖啡`` finds nothing. The index here uses the ``trigram`` tokenizer
(SQLite 3.34+): every run of three characters is a token, so any substring of three or
more characters is found through the index, in any language. A trigram index cannot
answer a one- or two-character query (咖啡, 戒), so such terms fall back to
``content LIKE '%term%'`` over the user's own rows.

How a query is read (there is no query syntax: every term is literal text):

1. The query is split into terms at whitespace, at full-width punctuation (，。？！「」…)
   and where Chinese (or Japanese/Korean) characters meet other characters, so
   ``咖啡 decaf``, ``Qdrant报错`` and ``Qdrant 报错`` give two terms each.
2. A term of three or more characters goes into the FTS5 ``MATCH`` as a quoted phrase
   (``"..."``, inner quotes doubled), so ``AND``, ``OR``, ``NOT``, ``NEAR``, ``*``, ``-``,
   ``:``, ``^`` and parentheses are plain text, never FTS5 syntax.
3. A term of one or two characters becomes ``content LIKE ? ESCAPE '\\'`` with ``%``,
   ``_`` and ``\\`` escaped, so they match literally.
4. A message must contain every term (AND). With at least one FTS term the hits are
   ordered by BM25 (``score``, higher is better) computed over *this user's* messages
   only (:class:`gya_memory.hermes.fts.BM25`, FTS5's formula): FTS5's own
   ``bm25()`` counts every user's rows, so another user's messages would change your
   scores (one user writing "coffee" 30 times took another's score for it from 2.67 to
   0). This scores every match of the user in Python: for a user whose 100k messages
   mostly match, about 0.3 s instead of 0.1 s. With only short terms the hits are
   ordered newest first and ``score`` is 0.0.

Matching ignores the case of ASCII letters on both paths (SQL ``LIKE`` folds only ASCII;
the trigram tokenizer also folds other alphabets, so ``É`` finds ``é`` only through the
index). Search is always scoped to the store's ``user_id``.

Storage and the index. The ``messages`` table holds the rows; ``messages_fts`` is an
*external-content* FTS5 table over ``messages.content`` (``content='messages'``,
``content_rowid='id'``), so the text is stored once and the index refers to it by id.
Three triggers keep the index in step with the table inside the same transaction as
the write (insert, delete, update of ``content``), also for rows changed with raw SQL.

Durability is that of :mod:`gya_memory.episodic.memory`: WAL mode with ``synchronous=FULL``,
every write a ``BEGIN IMMEDIATE`` transaction that is on disk when the call returns, a
busy timeout for writers in other processes, and ``MEMORY_SQLITE_UNSAFE_NO_JOURNAL=1``
for sandboxes that forbid the journal. :meth:`SessionStore.forget` removes messages from
the table and the index, rewrites the index (FTS5 ``optimize``), and, with
``secure_delete`` on and a WAL checkpoint, leaves the text in no byte of the files.

Size limits (characters): message content 20,000, query 1,000 (at most 16 terms),
session id and user id 128.

Search hits go into prompts, so every message is scanned before it is written
(:mod:`gya_memory.hermes.injection`): a user, assistant or tool message that reads like an
instruction to the model is refused with ``InstructionRefused`` and nothing is written,
unless the caller passes ``allow_instructions=True`` (an agent keeping the full transcript
of a chat in which the user typed such a thing does that: the row is a record, and the
context assembly screens it again before a later prompt). ``system`` messages are the
application's own prompt and are not scanned.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from gya_memory.base.checks import check_flag
from gya_memory.episodic.memory import escape_like
from gya_memory.hermes.injection import check_allow, check_for_store
from gya_memory.episodic.sqlite import SQLiteStore
from gya_memory.base.text import ROLES
from gya_memory.hermes.fts import (
    MAX_CONTEXT, MAX_LIMIT, SessionMessage, SNIPPET_CLOSE, SNIPPET_ELLIPSIS, SNIPPET_OPEN,
    SNIPPET_TOKENS, SearchHit, SessionInfo, TRIGRAM, BM25, UserStats, check_content, check_id,
    check_int, check_role, mark_outside, check_fts5_trigram, default_path, fts_phrase, like_snippet,
    query_terms,
)


_SCHEMA = f"""
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS messages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even after forget()
    user_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,   -- 1, 2, 3 ... within the session
    role       TEXT NOT NULL CHECK (role IN ({", ".join(f"'{r}'" for r in ROLES)})),
    content    TEXT NOT NULL,      -- the message exactly as it was stored
    created_at TEXT NOT NULL       -- ISO 8601 with a UTC offset
);
-- A session's transcript and the messages around a hit.
CREATE UNIQUE INDEX IF NOT EXISTS messages_user_session_seq
    ON messages(user_id, session_id, seq);
-- One user's rows in id order (the rowid is the index's last key): the LIKE fallback
-- reads them newest first and stops after `limit` hits.
CREATE INDEX IF NOT EXISTS messages_user ON messages(user_id);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content, content='messages', content_rowid='id', tokenize='trigram'
);
CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
COMMIT;
"""
_COLUMNS = "id, user_id, session_id, seq, role, content, created_at"
_M_COLUMNS = ", ".join(f"m.{c}" for c in _COLUMNS.split(", "))


class SessionStore(SQLiteStore):
    """Every session's raw messages in one SQLite file, seen as one user.

    >>> store = SessionStore(":memory:", user_id="user-001")
    >>> _ = store.add_session("s1", [
    ...     {"role": "user", "content": "我最近在戒咖啡，想少喝一点"},
    ...     {"role": "assistant", "content": "好的，可以试试低因咖啡。"},
    ... ])
    >>> [(h.message.seq, h.snippet) for h in store.search("咖啡", context=0)]
    [(2, '好的，可以试试低因«咖啡»。'), (1, '我最近在戒«咖啡»，想少喝一点')]
    >>> hit = store.search("低因咖啡")[0]
    >>> hit.snippet, [m.content for m in hit.before]
    ('好的，可以试试«低因咖啡»。', ['我最近在戒咖啡，想少喝一点'])
    """

    schema_sql = _SCHEMA
    contents = "session"

    default_path = staticmethod(default_path)

    def check_sqlite(self) -> None:
        """FTS5 with the trigram tokenizer, before the file is touched."""
        check_fts5_trigram()

    # -- set-up -----------------------------------------------------------------------
    def schema(self) -> str:
        """The SQL that defines the table, its indexes, the FTS5 index and its triggers."""
        rows = self.conn.execute(
            "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND"
            " (tbl_name = 'messages' OR name = 'messages_fts') ORDER BY rowid"
        )
        return ";\n\n".join(sql for (sql,) in rows) + ";"

    # -- writing ----------------------------------------------------------------------
    @staticmethod
    def _check_messages(messages: object) -> list[tuple[str, str]]:
        """Every message checked before anything is written: ``[(role, content), ...]``."""
        if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
            raise ValueError("messages must be a list of {'role': ..., 'content': ...} dicts, "
                             f"got {type(messages).__name__}")
        checked = []
        for i, msg in enumerate(messages):
            if not isinstance(msg, Mapping):
                raise ValueError(
                    f"message {i} must be a dict with role and content, got {msg!r:.80}")
            extra = sorted(set(msg) - {"role", "content"})
            if extra:
                raise ValueError(f"message {i} has keys other than role and content: {extra}; "
                                 "only role and content are stored")
            if "role" not in msg or "content" not in msg:
                raise ValueError(f"message {i} needs both 'role' and 'content', got {sorted(msg)}")
            try:
                checked.append((check_role(msg["role"]), check_content(msg["content"])))
            except ValueError as exc:
                raise ValueError(f"message {i}: {exc}") from None
        if not checked:
            raise ValueError("messages is empty; a session needs at least one message")
        return checked

    def _insert(self, conn: sqlite3.Connection, session_id: str,
                checked: Sequence[tuple[str, str]]) -> list[SessionMessage]:
        """Append checked messages to a session; the caller holds the write transaction."""
        (last,) = conn.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM messages WHERE user_id = ? AND session_id = ?",
            (self.user_id, session_id),
        ).fetchone()
        stored = []
        for seq, (role, content) in enumerate(checked, start=last + 1):
            created_at = self._now()
            cur = conn.execute(
                "INSERT INTO messages(user_id, session_id, seq, role, content, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (self.user_id, session_id, seq, role, content, created_at),
            )
            assert cur.lastrowid is not None
            stored.append(SessionMessage(cur.lastrowid, self.user_id, session_id, seq, role, content,
                                  created_at))
        return stored

    def add_message(self, session_id: str, role: str, content: str, *,
                    allow_instructions: bool = False) -> SessionMessage:
        """Append one message to a session (a new session starts at its first message)."""
        return self.add_session(session_id, [{"role": role, "content": content}],
                                allow_instructions=allow_instructions)[0]

    def add_session(self, session_id: str, messages: Iterable[Mapping[str, str]], *,
                    allow_instructions: bool = False) -> list[SessionMessage]:
        """Append ``[{"role": ..., "content": ...}, ...]`` to a session in one transaction.

        Roles are system, user, assistant and tool. Every message is checked first: one
        bad message writes none. The check includes the injection scan: a non-system
        message that reads like an instruction to the model raises
        :class:`~gya_memory.hermes.injection.InstructionRefused`; ``allow_instructions=True``
        stores it as it is. If the session exists, the messages are appended to it.
        """
        allow = check_allow(allow_instructions)
        session_id = check_id("session_id", session_id)
        checked = self._check_messages(messages)
        check_for_store("session store", [(f"message {i} ({role})", content)
                                          for i, (role, content) in enumerate(checked)
                                          if role != "system"], allow_instructions=allow)
        with self._write() as conn:
            return self._insert(conn, session_id, checked)

    # -- reading ----------------------------------------------------------------------
    def session(self, session_id: str) -> list[SessionMessage]:
        """The raw transcript of one session, in order. An unknown session is an error."""
        session_id = self._known_session(session_id)
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM messages WHERE user_id = ? AND session_id = ? ORDER BY seq",
            (self.user_id, session_id),
        )
        return [SessionMessage(*row) for row in rows]

    def sessions(self) -> list[SessionInfo]:
        """Each session of this user, in the order they started."""
        rows = self.conn.execute(
            "SELECT s.session_id, f.created_at, l.created_at, s.n FROM ("
            "  SELECT session_id, MIN(id) AS first, MAX(id) AS last, COUNT(*) AS n"
            "  FROM messages WHERE user_id = ? GROUP BY session_id"
            ") AS s JOIN messages AS f ON f.id = s.first JOIN messages AS l ON l.id = s.last"
            " ORDER BY s.first",
            (self.user_id,),
        )
        return [SessionInfo(*row) for row in rows]

    def __len__(self) -> int:
        return int(self.conn.execute(
            "SELECT COUNT(*) FROM messages WHERE user_id = ?", (self.user_id,)
        ).fetchone()[0])

    # -- search -----------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        context: int = 2,
        session_id: str | None = None,
    ) -> list[SearchHit]:
        """Messages of this user that contain every term of ``query`` (see the module
        docstring), best first, at most ``limit``, each with up to ``context`` messages
        before and after it from its session. ``session_id`` searches one session only."""
        terms = query_terms(query)
        limit = check_int("limit", limit, 1, MAX_LIMIT)
        context = check_int("context", context, 0, MAX_CONTEXT)
        if session_id is not None:
            session_id = self._known_session(session_id)
        long_terms = [t for t in terms if len(t) >= TRIGRAM]
        short_terms = [t for t in terms if len(t) < TRIGRAM]

        where, params = ["m.user_id = ?"], [self.user_id]
        if session_id is not None:
            where.append("m.session_id = ?")
            params.append(session_id)
        for term in short_terms:
            where.append("m.content LIKE ? ESCAPE '\\'")
            params.append(f"%{escape_like(term)}%")

        hits: list[tuple[SessionMessage, str, float]] = []
        if long_terms:
            # Every match of this user, ranked here by BM25 over this user's messages only
            # (session_search.BM25): FTS5's bm25() would count other users' rows too.
            # CROSS JOIN keeps FTS5 as the outer loop: one MATCH, then a rowid lookup
            # per candidate; the other order would run the MATCH once per user row.
            match = " ".join(fts_phrase(t) for t in long_terms)
            rows = self.conn.execute(
                "SELECT m.id, m.content"
                " FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid"
                f" WHERE messages_fts MATCH ? AND {' AND '.join(where)}",
                (match, *params),
            ).fetchall()
            score_of = BM25(long_terms, self._stats(long_terms))
            scored = sorted(((score_of(content), rowid) for rowid, content in rows),
                            key=lambda sr: (-sr[0], -sr[1]))[:limit]
            for score, rowid in scored:
                msg = SessionMessage(*self.conn.execute(
                    f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (rowid,)).fetchone())
                (snippet,) = self.conn.execute(
                    "SELECT snippet(messages_fts, 0, ?, ?, ?, ?) FROM messages_fts"
                    " WHERE messages_fts MATCH ? AND rowid = ?",
                    (SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS, SNIPPET_TOKENS, match, msg.id),
                ).fetchone()
                hits.append((msg, mark_outside(snippet, short_terms), score))
        else:
            # Newest first through an index of this user's rows, stopping at `limit`.
            index = "messages_user_session_seq" if session_id is not None else "messages_user"
            rows = self.conn.execute(
                f"SELECT {_M_COLUMNS} FROM messages AS m INDEXED BY {index}"
                f" WHERE {' AND '.join(where)} ORDER BY m.id DESC LIMIT ?",
                (*params, limit),
            ).fetchall()
            hits = [(SessionMessage(*row), like_snippet(row[5], short_terms), 0.0) for row in rows]
        return [SearchHit(msg, snippet, score, *self._around(msg, context))
                for msg, snippet, score in hits]

    def _stats(self, terms: Sequence[str]) -> UserStats:
        """BM25's statistics over this user's messages only (one pass over their rows,
        plus one index query per term)."""
        count, tokens = self.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(MAX(length(content) - ?, 0)), 0) FROM messages"
            " INDEXED BY messages_user WHERE user_id = ?", (TRIGRAM - 1, self.user_id),
        ).fetchone()
        containing = {t: int(self.conn.execute(
            "SELECT COUNT(*) FROM messages_fts CROSS JOIN messages AS m"
            " ON m.id = messages_fts.rowid WHERE messages_fts MATCH ? AND m.user_id = ?",
            (fts_phrase(t), self.user_id)).fetchone()[0]) for t in terms}
        return UserStats(int(count), tokens / count if count else 0.0, containing)

    def _around(self, msg: SessionMessage, context: int) -> tuple[list[SessionMessage], list[SessionMessage]]:
        if context == 0:
            return [], []
        key = (self.user_id, msg.session_id, msg.seq, context)
        before = self.conn.execute(
            f"SELECT {_COLUMNS} FROM messages WHERE user_id = ? AND session_id = ? AND seq < ?"
            " ORDER BY seq DESC LIMIT ?", key,
        ).fetchall()
        after = self.conn.execute(
            f"SELECT {_COLUMNS} FROM messages WHERE user_id = ? AND session_id = ? AND seq > ?"
            " ORDER BY seq LIMIT ?", key,
        ).fetchall()
        return [SessionMessage(*r) for r in reversed(before)], [SessionMessage(*r) for r in after]

    # -- forgetting ---------------------------------------------------------------------
    def forget(self, *, session_id: str | None = None, everything: bool = False) -> int:
        """Delete one session, or (``everything=True``) every session of this user, from
        the table and the search index. Give exactly one. Returns the messages deleted;
        other users' messages are never touched."""
        everything = check_flag("everything", everything)
        if (session_id is not None) + everything != 1:
            raise ValueError("forget() takes exactly one of session_id= or everything=True")
        if session_id is not None:
            where, params = "AND session_id = ?", (self._known_session(session_id),)
        else:
            where, params = "", ()
        with self._write() as conn:
            cur = conn.execute(f"DELETE FROM messages WHERE user_id = ? {where}",
                               (self.user_id, *params))
            # Rewrite the index without the deleted rows' terms (FTS5 otherwise keeps them
            # in old segments next to "delete" markers until a merge).
            conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
        self._scrub()
        return cur.rowcount

    # -- helpers --------------------------------------------------------------------------
    def _known_session(self, session_id: object) -> str:
        session_id = check_id("session_id", session_id)
        exists = self.conn.execute(
            "SELECT 1 FROM messages WHERE user_id = ? AND session_id = ? LIMIT 1",
            (self.user_id, session_id),
        ).fetchone()
        if exists is None:
            known = [s.session_id for s in self.sessions()]
            listed = ", ".join(known[:10])
            if len(known) > 10:
                listed += f" and {len(known) - 10} more"
            raise ValueError(f"unknown session {session_id!r} for user {self.user_id!r} "
                             f"(known: {listed or 'none yet'})")
        return session_id
