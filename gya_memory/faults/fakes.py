"""Test and teaching kits: stand-ins for services and a crash injector, used by the tests and
by notebook 08 (through :mod:`gya_memory.faults.failures`, which re-exports them).

- :class:`FakeOllama`: Ollama's ``POST /api/embed`` on 127.0.0.1, backed by any
  :class:`~gya_memory.semantic.embeddings.Embedder`; ``stop()`` makes its port refuse connections.
- :class:`HashEmbedder`: a toy "other model" of any dimension.
- :func:`closed_port_url`, :func:`hide_port`: a URL where nothing listens; a port hidden in text.
- :func:`crash_mid_transaction`: a child process killed with ``os._exit(137)`` in the middle
  of a SQLite transaction, always at the same row; :class:`CrashReport` says what a restart finds.
- :func:`child_env`: the environment of a reproducible child process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from gya_memory.base.checks import is_int
from gya_memory.semantic.embeddings.base import Embedder
from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
from gya_memory.episodic.sqlite import secure_connection


PACKAGE_ROOT = Path(__file__).resolve().parents[2]
KILLED = 137
"""Exit code of the crashing child: 128 + 9, what a shell reports after ``kill -9``."""
JOURNAL_MODES = ("wal", "delete", "truncate", "persist", "off")
CRASH_USER = "user-zh-001"
_SUBJECTS = ("偏好", "职业", "姓名", "preference", "occupation")
_PORT_RE = re.compile(r"(127\.0\.0\.1|localhost):\d+")


# -- child processes --------------------------------------------------------------------
def child_env(hash_seed: int | str = 0, **extra: str) -> dict[str, str]:
    """Environment for a child Python process: this package importable, UTF-8 output, a
    fixed ``PYTHONHASHSEED`` (so its ``hash()`` values are reproducible) and ``extra``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PACKAGE_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONHASHSEED"] = str(hash_seed)
    env.pop("MEMORY_SQLITE_UNSAFE_NO_JOURNAL", None)
    env.update(extra)
    return env


def run_child(args: Sequence[str], *, env: dict[str, str], timeout: float = 120
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gya_memory.faults.failures", *args],
                          capture_output=True, text=True, encoding="utf-8", env=env,
                          timeout=timeout)


def last_json(out: str) -> dict[str, Any]:
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError("the child process printed no result")
    return json.loads(lines[-1])


# -- an Ollama look-alike ---------------------------------------------------------------
class HashEmbedder(Embedder):
    """A toy embedding model: every character and character bigram gets a fixed random
    direction (a Gaussian vector seeded by the gram's blake2b hash), and a text is the sum
    of its grams' directions. Deterministic, dense, ``dim`` of your choice, and unrelated to
    every real model, which is its use: "some other model" whose vectors must never be
    compared with another model's."""

    def __init__(self, dim: int = 384, *, min_score: float | None = None) -> None:
        if not is_int(dim, low=8):
            raise ValueError(f"dim must be an int of at least 8, got {dim!r}")
        self.name = f"hash/char-1-2-{dim}"
        self.dim = dim
        self._min_score = min_score

    def _direction(self, gram: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest(),
                              "big")
        return np.random.default_rng(seed).standard_normal(self.dim)

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        rows = []
        for text in texts:
            grams = list(text) + [text[i : i + 2] for i in range(len(text) - 1)]
            rows.append(np.sum([self._direction(g) for g in grams], axis=0))
        return np.stack(rows)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self._reply(400, {"error": "invalid JSON body"})
        if self.path != "/api/embed":
            return self._reply(404, {"error": "404 page not found"})
        fake = self.server.fake
        if body.get("model") != fake.model:
            return self._reply(404, {"error": f"model \"{body.get('model')}\" not found, "
                                              "try pulling it first"})
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts:
            return self._reply(400, {"error": "input must be a string or a list of strings"})
        try:
            vectors = fake.embedder.embed_documents(texts)
        except ValueError as exc:
            return self._reply(400, {"error": str(exc)})
        fake.served += len(texts)
        return self._reply(200, {"model": fake.model,
                                 "embeddings": np.asarray(vectors, dtype=float).tolist()})

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:  # no request log on stderr
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOllama


class FakeOllama:
    """A stand-in for an Ollama server: ``POST /api/embed`` on 127.0.0.1, answered by
    ``embedder`` (default: this package's TF-IDF) under the name ``model``.

    Only for teaching and tests, where no real Ollama runs. Like Ollama, it takes
    ``{"model": ..., "input": [...]}`` and answers ``{"model": ..., "embeddings": [...]}``;
    an unknown model gets HTTP 404 "not found, try pulling it first". It has no
    query/document distinction (neither has Ollama's API): every text is embedded as a
    document. ``stop()`` closes the port (connections are then refused), ``start()`` opens
    it again on the same port::

        with FakeOllama(LocalE5Embedder()) as fake:
            service = OllamaEmbedder(fake.url, model=fake.model, timeout=5)
            ...
            fake.stop()     # the service dies
            fake.start()    # and comes back
    """

    def __init__(self, embedder: Embedder | None = None, *, model: str | None = None,
                 port: int = 0) -> None:
        self.embedder = embedder if embedder is not None else TFIDFEmbedder()
        self.model = model or self.embedder.name.rsplit("/", 1)[-1]
        self.port = port
        self.served = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:<port>`` (give it to OllamaEmbedder)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def dim(self) -> int:
        return self.embedder.dim

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> FakeOllama:
        """Listen (on a free port the first time, on the same port after a stop)."""
        if self._server is None:
            server = _Server(("127.0.0.1", self.port), _Handler)
            server.fake = self
            self.port = server.server_address[1]
            self._server = server
            self._thread = threading.Thread(target=server.serve_forever, daemon=True,
                                            name="fake-ollama")
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering and close the port: from now on connections are refused."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._server = self._thread = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"FakeOllama(model={self.model!r}, dim={self.dim}, {state})"


def closed_port_url() -> str:
    """``http://127.0.0.1:<port>`` for a port nothing listens on (it was free a moment ago;
    a connection to it is refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def hide_port(text: str) -> str:
    """``text`` with local port numbers replaced by ``<port>``: they change on every run."""
    return _PORT_RE.sub(lambda m: f"{m.group(1)}:<port>", text)


# -- SQLite: a writer killed mid-transaction ----------------------------------------------
@dataclass(frozen=True)
class CrashReport:
    """What a restart finds after a writer died in the middle of a transaction.

    - ``journal``: the journal mode SQLite reported in the writer (``wal``, ``delete``, ...,
      ``off``); ``exit_code``: 137, as after ``kill -9``;
    - ``left_behind``: files next to the database the crash left (``-wal``, ``-journal``...);
    - ``db_digest``: SHA-256 (first 16 hex digits) of the database file as the crash left
      it, before anything opened it again;
    - ``integrity``: ``ok``, the first problem ``PRAGMA integrity_check`` found (and how
      many more), or the error SQLite raised;
    - ``committed_rows`` / ``uncommitted_rows``: rows of the committed first batch
      (session-A) and of the transaction that never committed (session-B), read by a full
      table scan; ``None`` if the table could not be read;
    - ``recall``: how many facts recall by subject (``偏好``, through the index, the same
      query as :meth:`EpisodicMemory.by_subject`) returns, or the error it raised.
    """

    journal: str
    exit_code: int
    left_behind: tuple[str, ...]
    db_digest: str
    integrity: str
    committed_rows: int | None
    uncommitted_rows: int | None
    recall: int | str
    committed: int
    uncommitted: int
    child_warnings: tuple[str, ...] = ()

    @property
    def intact(self) -> bool:
        """The restart found exactly the committed data and nothing of the dead transaction."""
        return (self.integrity == "ok" and self.committed_rows == self.committed
                and self.uncommitted_rows == 0
                and self.recall == _count_subject(self.committed, _SUBJECTS[0]))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def as_row(self) -> dict[str, Any]:
        """The columns a notebook table shows."""
        return {"journal": self.journal, "exit code": self.exit_code,
                "left beside the db": " ".join(self.left_behind) or "-",
                "integrity_check": self.integrity,
                f"session-A rows (committed {self.committed})": self.committed_rows,
                "session-B rows (never committed)": self.uncommitted_rows,
                "by_subject('偏好')": self.recall}


def _count_subject(n: int, subject: str) -> int:
    return sum(1 for i in range(n) if _SUBJECTS[i % len(_SUBJECTS)] == subject)


def crash_mid_transaction(
    path: str | os.PathLike[str], *, journal: bool | str = True, committed: int = 100,
    uncommitted: int = 400, cache_pages: int = 10,
) -> CrashReport:
    """Kill a writer of ``path`` in the middle of a transaction, then look at the file.

    A child process opens an :class:`~gya_memory.episodic.memory.EpisodicMemory` on ``path`` (which
    must not exist yet) and

    1. stores ``committed`` facts (session-A) with ``add_many``: one committed transaction;
    2. lowers SQLite's page cache to ``cache_pages`` pages, so a transaction larger than
       that must spill modified pages to disk before it commits (any real transaction that
       outgrows the cache does the same, the default cache is 2 MB);
    3. starts ``add_many`` of ``uncommitted + 1`` facts (session-B) and, when the store's
       clock is asked for the timestamp of the last one, calls ``os._exit(137)``: the
       process ends on the spot, the transaction open, with no rollback and no cleanup.

    ``journal``: ``True`` (the store's default, WAL), ``False`` (what
    ``MEMORY_SQLITE_UNSAFE_NO_JOURNAL=1`` does: journal off; the variable is set in the
    child), or a mode by name: ``"wal"``, ``"delete"`` (SQLite's default rollback journal),
    ``"truncate"``, ``"persist"``, ``"off"``.

    Then this process opens the file as a restart would and reports (:class:`CrashReport`).
    With the same arguments and SQLite version the result is the same on every run.
    """
    if isinstance(journal, bool):
        mode = "wal" if journal else "off"
    else:
        mode = str(journal).lower()
    if mode not in JOURNAL_MODES:
        raise ValueError(f"journal must be True, False or one of {', '.join(JOURNAL_MODES)}; "
                         f"got {journal!r}")
    for name, value in (("committed", committed), ("uncommitted", uncommitted),
                        ("cache_pages", cache_pages)):
        if not is_int(value, low=1):
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    db = Path(path)
    if db.exists():
        raise ValueError(f"{db} exists; the crash needs a fresh file")
    db.parent.mkdir(parents=True, exist_ok=True)
    extra = {"MEMORY_SQLITE_UNSAFE_NO_JOURNAL": "1"} if mode == "off" else {}
    out = run_child(["crash", str(db), mode, str(committed), str(uncommitted),
                      str(cache_pages)], env=child_env(**extra))
    if out.returncode != KILLED:
        raise RuntimeError(f"the writer should have died with {KILLED}, it exited with "
                           f"{out.returncode}: {out.stderr.strip()[-500:]}")
    started = last_json(out.stdout)
    left = tuple(sorted(p.name[len(db.name):] for p in db.parent.iterdir()
                        if p.name.startswith(db.name + "-")))
    digest = hashlib.sha256(db.read_bytes()).hexdigest()[:16]
    integrity, rows, recall = _inspect(db)
    return CrashReport(
        journal=started["journal_mode"], exit_code=out.returncode, left_behind=left,
        db_digest=digest, integrity=integrity, committed_rows=rows.get("session-A"),
        uncommitted_rows=rows.get("session-B"), recall=recall, committed=committed,
        uncommitted=uncommitted, child_warnings=tuple(started["warnings"]),
    )


def _inspect(db: Path) -> tuple[str, dict[str, int | None], int | str]:
    """Open ``db`` like a restart (a hot journal is rolled back, a WAL is replayed) and
    check it; returns (integrity, rows per session, recall by subject)."""
    conn = sqlite3.connect(db)
    secure_connection(conn)
    try:
        try:
            problems = [row[0] for row in conn.execute("PRAGMA integrity_check")]
            integrity = problems[0] + (f" (+{len(problems) - 1} more)" if len(problems) > 1
                                       else "")
        except sqlite3.DatabaseError as exc:
            integrity = str(exc)
        rows: dict[str, int | None] = {"session-A": None, "session-B": None}
        try:
            found = dict(conn.execute("SELECT session_id, COUNT(*) FROM facts NOT INDEXED "
                                      "GROUP BY session_id").fetchall())
            rows = {s: int(found.get(s, 0)) for s in rows}
        except sqlite3.DatabaseError:
            pass
        try:
            recall: int | str = len(conn.execute(
                "SELECT id FROM facts WHERE user_id = ? AND subject = ? ORDER BY id",
                (CRASH_USER, _SUBJECTS[0])).fetchall())
        except sqlite3.DatabaseError as exc:
            recall = f"DatabaseError: {exc}"
    finally:
        conn.close()
    return integrity, rows, recall


def crash_child(path: str, mode: str, committed: int, uncommitted: int,
                 cache_pages: int) -> None:
    import warnings
    from datetime import datetime, timedelta

    from gya_memory.base.clock import CHINA_TZ
    from gya_memory.episodic.memory import EpisodicMemory

    calls = 0
    start = datetime(2026, 9, 1, 9, 0, tzinfo=CHINA_TZ)

    def dying_clock() -> datetime:  # the fault injector: dies at a fixed row
        nonlocal calls
        calls += 1
        if calls > committed + uncommitted:
            os._exit(KILLED)
        return start + timedelta(minutes=calls)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mem = EpisodicMemory(path, user_id=CRASH_USER, clock=dying_clock)
    if mode not in ("wal", "off"):
        mem.conn.execute(f"PRAGMA journal_mode = {mode}")
    sys.stdout.write(json.dumps({"journal_mode": mem.journal_mode,
                                 "warnings": [w.category.__name__ for w in caught]}) + "\n")
    sys.stdout.flush()
    mem.add_many([(_SUBJECTS[i % 5], f"committed fact #{i:04d}: 最近在戒咖啡，想少喝一点 / "
                                     "cutting back on coffee", "session-A")
                  for i in range(committed)])
    mem.conn.execute(f"PRAGMA cache_size = {cache_pages}")
    mem.add_many([(_SUBJECTS[i % 5], f"half-written fact #{i:04d}: 用户住在杭州，周末去西湖"
                                     "跑步 / lives in Hangzhou", "session-B")
                  for i in range(uncommitted + 1)])
    raise AssertionError("unreachable: the clock ends the process")
