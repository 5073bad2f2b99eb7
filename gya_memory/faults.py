"""Fault injection (故障注入): kill -9 a writer at a random moment, then check what survived.

For each write path of the package a child process writes in a loop (or runs one long
operation) and prints one line to a pipe *after* each write has returned, i.e. after it
committed. The parent kills it with ``SIGKILL`` after a random delay, reads the lines that
made it out, and opens the store again the way a restart would. A trial then reports:

- ``committed``: writes the child reported before it died;
- ``lost``: reported writes the restarted store no longer has (must be 0);
- ``corrupt``: 1 if the store fails its integrity check, cannot be opened, or shows a
  half-written batch or operation (a batch is all there or not there at all).

Paths (:data:`PATHS`): ``episodic_add_many``, ``session_append``, ``curated_write``,
``forget_user``, ``semantic_store_many``, ``reembed``, ``fallback_switch``, and
``concurrent_*`` variants where a second writer works on the same store at the same time
(the first is killed at the random moment, the second 0.1 s later; every write either
reported must survive).

``python -m gya_memory.faults child <path> <folder> <seed>`` is the child; nothing here runs
at import time. ``benchmarks/bench_faults.py`` runs many trials; ``tests/test_faults.py`` a few.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
BATCH = 5  # items per batch write
USER, OTHER = "alice", "bob"
FORGET_ROWS = 1500
SEMANTIC_SEED_MEMORIES = 60
PATHS = ("episodic_add_many", "session_append", "curated_write", "forget_user",
         "semantic_store_many", "reembed", "fallback_switch",
         "concurrent_episodic", "concurrent_sessions", "concurrent_curated")
# How long after the child says READY the kill may come (seconds). The loops write for as
# long as they live. A one-shot operation is timed once per run (:func:`calibrate`) and the
# kill comes anywhere in 0-1.3x that time, so most kills land inside it and some after it.
MAX_DELAY = {"episodic_add_many": 0.4, "session_append": 0.4, "curated_write": 0.4,
             "forget_user": 0.15, "semantic_store_many": 0.6, "reembed": 0.5,
             "fallback_switch": 3.5, "concurrent_episodic": 0.4, "concurrent_sessions": 0.4,
             "concurrent_curated": 0.4}
ONE_SHOT = ("forget_user", "reembed", "fallback_switch")


@dataclass(frozen=True)
class Trial:
    """What one kill -9 left behind."""

    path: str
    committed: int
    lost: int
    corrupt: int
    detail: str = ""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PACKAGE_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONIOENCODING"] = "utf-8"
    env.pop("MEMORY_SQLITE_UNSAFE_NO_JOURNAL", None)
    return env


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


# -- set-up in the parent ------------------------------------------------------------------------
def _fake_ollama_name() -> tuple[str, int]:
    from .embeddings import TFIDFEmbedder

    return "tfidf-as-ollama", TFIDFEmbedder().dim


def prepare(path: str, folder: Path) -> None:
    """What a trial of ``path`` needs before its child starts (in ``folder``)."""
    folder.mkdir(parents=True, exist_ok=True)
    if path == "forget_user":
        from .curated import CuratedMemory
        from .episodic import EpisodicMemory
        from .sessions import SessionStore

        for user in (USER, OTHER):
            with EpisodicMemory(folder / "episodic.sqlite3", user_id=user) as ep:
                ep.add_many([("fact", f"{user} fact {i}", "s") for i in range(FORGET_ROWS)])
            with SessionStore(folder / "sessions.sqlite3", user_id=user) as ss:
                ss.add_session("s", [{"role": "user", "content": f"{user} message {i} about tea"}
                                     for i in range(FORGET_ROWS)])
            cm = CuratedMemory(folder / "memories", user_id=user)
            cm.user.add(f"{user} profile")
            cm.memory.add(f"{user} note")
    elif path == "reembed":
        from .embeddings import TFIDFEmbedder
        from .semantic import SemanticMemory

        with SemanticMemory(folder / "qdrant", user_id=USER, embedder=TFIDFEmbedder()) as mem:
            mem.store_many([f"memory {i} about tea and coffee" for i in range(SEMANTIC_SEED_MEMORIES)])
    elif path == "fallback_switch":
        from .embeddings import OllamaEmbedder
        from .failures import FakeOllama
        from .semantic import SemanticMemory

        model, dim = _fake_ollama_name()
        with FakeOllama(model=model) as fake:
            emb = OllamaEmbedder(fake.url, model=model, dim=dim, timeout=10)
            with SemanticMemory(folder / "qdrant", user_id=USER, embedder=emb,
                                fallback=False) as mem:
                mem.store_many([f"memory {i} about tea" for i in range(SEMANTIC_SEED_MEMORIES)])


# -- the child ----------------------------------------------------------------------------------
def _child(path: str, folder: Path, seed: int, writer: str) -> None:
    loop_limit = 100_000
    if path in ("episodic_add_many", "concurrent_episodic"):
        from .episodic import EpisodicMemory

        mem = EpisodicMemory(folder / "episodic.sqlite3", user_id=USER)
        _say("READY")
        for b in range(loop_limit):
            mem.add_many([("fact", f"{writer}-b{b}-{j}", f"{writer}-b{b}") for j in range(BATCH)])
            _say(f"C {writer}-b{b}")
    elif path in ("session_append", "concurrent_sessions"):
        from .sessions import SessionStore

        store = SessionStore(folder / "sessions.sqlite3", user_id=USER)
        _say("READY")
        for b in range(loop_limit):
            store.add_session(f"{writer}-b{b}", [{"role": "user", "content": f"{writer}-b{b}-{j} tea"}
                                                 for j in range(BATCH)])
            _say(f"C {writer}-b{b}")
    elif path in ("curated_write", "concurrent_curated"):
        from .curated import MemoryFile

        notes = MemoryFile(folder / "MEMORY.md", cap=10**7, title="MEMORY")
        _say("READY")
        for b in range(loop_limit):
            notes.add(f"{writer}-entry-{b} " + "x" * 200)
            _say(f"C {writer}-entry-{b}")
    elif path == "forget_user":
        from .curated import CuratedMemory
        from .episodic import EpisodicMemory
        from .erasure import forget_user
        from .sessions import SessionStore

        stores = dict(episodic=EpisodicMemory(folder / "episodic.sqlite3", user_id=USER),
                      sessions=SessionStore(folder / "sessions.sqlite3", user_id=USER),
                      curated=CuratedMemory(folder / "memories", user_id=USER))
        _say("READY")
        forget_user(USER, **stores)
        _say("C forgot")
    elif path == "semantic_store_many":
        from .embeddings import TFIDFEmbedder
        from .semantic import SemanticMemory

        mem = SemanticMemory(folder / "qdrant", user_id=USER, embedder=TFIDFEmbedder())
        _say("READY")
        for b in range(loop_limit):
            mem.store_many([f"{writer}-b{b}-{j} tea" for j in range(BATCH)])
            _say(f"C {writer}-b{b}")
    elif path == "reembed":
        from .embeddings import TFIDFEmbedder
        from .failures import HashEmbedder
        from .semantic import SemanticMemory

        mem = SemanticMemory(folder / "qdrant", user_id=USER, embedder=TFIDFEmbedder())
        _say("READY")
        mem.reembed(HashEmbedder(64))
        _say("C reembedded")
    elif path == "fallback_switch":
        import warnings

        from .embeddings import OllamaEmbedder
        from .failures import closed_port_url
        from .semantic import SemanticMemory

        warnings.simplefilter("ignore")
        model, dim = _fake_ollama_name()
        _say("READY")
        mem = SemanticMemory(folder / "qdrant", user_id=USER, fallback=True,
                             embedder=OllamaEmbedder(closed_port_url(), model=model, dim=dim,
                                                     timeout=2))
        for b in range(loop_limit):
            mem.store_many([f"{writer}-b{b}-{j} degraded" for j in range(BATCH)])
            _say(f"C {writer}-b{b}")
    else:
        raise SystemExit(f"unknown path {path!r}")
    time.sleep(3600)  # a finished one-shot child waits for its kill


# -- checking after the restart ------------------------------------------------------------------
def _sqlite_ok(db: Path, fts: bool = False) -> str:
    from .storage import secure_connection

    conn = sqlite3.connect(db)
    try:
        secure_connection(conn)
        problems = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        if problems != ["ok"]:
            return "integrity_check: " + "; ".join(problems[:3])
        if fts:
            conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
        return ""
    except sqlite3.DatabaseError as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()


def _batches(keys: Sequence[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key in keys:
        batch = key.rsplit("-", 1)[0]
        counts[batch] = counts.get(batch, 0) + 1
    return counts


def _judge(path: str, reported: list[str], present_batches: dict[str, int], problem: str) -> Trial:
    half = {b: n for b, n in present_batches.items() if n != BATCH}
    lost = [r for r in reported if present_batches.get(r, 0) != BATCH]
    detail = problem or (f"half-written batches: {sorted(half)[:3]}" if half else "")
    return Trial(path, len(reported), len(lost), int(bool(problem or half)), detail)


def check(path: str, folder: Path, reported: list[str]) -> Trial:
    """Open the store like a restart and compare it with what the child reported."""
    try:
        if path in ("episodic_add_many", "concurrent_episodic"):
            db = folder / "episodic.sqlite3"
            problem = _sqlite_ok(db)
            if problem:
                return Trial(path, len(reported), len(reported), 1, problem)
            from .episodic import EpisodicMemory

            with EpisodicMemory(db, user_id=USER) as mem:
                return _judge(path, reported, _batches([f.fact for f in mem.all()]), "")
        if path in ("session_append", "concurrent_sessions"):
            db = folder / "sessions.sqlite3"
            problem = _sqlite_ok(db, fts=True)
            if problem:
                return Trial(path, len(reported), len(reported), 1, problem)
            from .sessions import SessionStore

            with SessionStore(db, user_id=USER) as store:
                keys = [m.content.split(" ")[0] for s in store.sessions()
                        for m in store.session(s.session_id)]
                batches = _batches(keys)
                found = {h.message.session_id for h in store.search("tea", limit=100)}
                problem = "" if not batches or found else "the search index lost the rows"
                return _judge(path, reported, batches, problem)
        if path in ("curated_write", "concurrent_curated"):
            from .curated import ENTRY_DELIMITER, MemoryFile

            notes = MemoryFile(folder / "MEMORY.md", cap=10**7, title="MEMORY")  # cleans temps
            entries = notes.entries()
            temps = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
            raw = (folder / "MEMORY.md").read_text("utf-8") if (folder / "MEMORY.md").exists() else ""
            bad = [e for e in entries if not e.endswith("x" * 200)]
            problem = ("temp files left: " + ", ".join(temps) if temps else
                       "a truncated entry" if bad else
                       "the file is not well-formed" if raw != ENTRY_DELIMITER.join(entries) else "")
            names = {e.split(" ")[0] for e in entries}
            lost = [r for r in reported if r not in names]
            return Trial(path, len(reported), len(lost), int(bool(problem)), problem)
        if path == "forget_user":
            return _check_forget(folder, reported)
        if path == "semantic_store_many":
            from .embeddings import TFIDFEmbedder
            from .semantic import SemanticMemory

            with SemanticMemory(folder / "qdrant", user_id=USER, embedder=TFIDFEmbedder()) as mem:
                keys = [m.text.split(" ")[0] for m in mem.all()]
            return _judge(path, reported, _batches(keys), "")
        if path == "reembed":
            return _check_reembed(folder, reported)
        if path == "fallback_switch":
            return _check_fallback(folder, reported)
    except Exception as exc:  # the store would not open: that is corruption for this trial
        return Trial(path, len(reported), len(reported), 1, f"{type(exc).__name__}: {exc}"[:300])
    raise ValueError(f"unknown path {path!r}")


def _check_forget(folder: Path, reported: list[str]) -> Trial:
    from .curated import CuratedMemory
    from .episodic import EpisodicMemory
    from .sessions import SessionStore

    problems = [p for p in (_sqlite_ok(folder / "episodic.sqlite3"),
                            _sqlite_ok(folder / "sessions.sqlite3", fts=True)) if p]
    if problems:
        return Trial("forget_user", len(reported), len(reported), 1, "; ".join(problems))
    counts = {}
    for user in (USER, OTHER):
        with EpisodicMemory(folder / "episodic.sqlite3", user_id=user) as ep:
            e = len(ep)
        with SessionStore(folder / "sessions.sqlite3", user_id=user) as ss:
            s = len(ss)
            hits = len(ss.search(f"{user} message", limit=100))
        c = len(CuratedMemory(folder / "memories", user_id=user).user.entries()) + \
            len(CuratedMemory(folder / "memories", user_id=user).memory.entries())
        counts[user] = (e, s, c, hits)
    half = [n for n, full in zip(counts[USER][:3], (FORGET_ROWS, FORGET_ROWS, 2)) if n not in (0, full)]
    if counts[USER][1] == 0 and counts[USER][3]:
        half.append(-1)  # rows gone but the index still finds them
    lost = 0
    if counts[OTHER][:3] != (FORGET_ROWS, FORGET_ROWS, 2):
        lost += 1  # the other user's memories are writes that were committed
    if reported and counts[USER][:3] != (0, 0, 0):
        lost += 1  # a reported forget must stay done
    detail = f"half-done: {counts[USER]}" if half else ""
    return Trial("forget_user", len(reported), lost, int(bool(half)), detail)


def _check_reembed(folder: Path, reported: list[str]) -> Trial:
    from .embeddings import TFIDFEmbedder
    from .failures import HashEmbedder
    from .semantic import SemanticMemory

    errors = []
    for embedder in ((HashEmbedder(64), TFIDFEmbedder()) if reported else
                     (TFIDFEmbedder(), HashEmbedder(64))):
        try:
            with SemanticMemory(folder / "qdrant", user_id=USER, embedder=embedder) as mem:
                n = len(mem.all())
                hit = mem.retrieve("memory 7 about tea", top_k=1, min_score=-1.0)
        except Exception as exc:
            errors.append(f"{embedder.name}: {type(exc).__name__}: {exc}"[:200])
            continue
        missing = SEMANTIC_SEED_MEMORIES - n
        lost = int(missing > 0 or (bool(reported) and not isinstance(embedder, HashEmbedder)))
        corrupt = int(not hit)
        return Trial("reembed", len(reported), lost, corrupt,
                     f"{missing} memories missing" if missing else "")
    return Trial("reembed", len(reported), len(reported), 1, "; ".join(errors))


def _check_fallback(folder: Path, reported: list[str]) -> Trial:
    import warnings

    from .embeddings import OllamaEmbedder
    from .failures import closed_port_url
    from .semantic import SemanticMemory

    model, dim = _fake_ollama_name()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with SemanticMemory(folder / "qdrant", user_id=USER, fallback=True,
                            embedder=OllamaEmbedder(closed_port_url(), model=model, dim=dim,
                                                    timeout=2)) as mem:
            mem.retrieve("tea", top_k=1)  # reading triggers the switch again if needed
            texts = [m.text for m in mem.all()]
    originals = sum(t.endswith("about tea") for t in texts)
    batches = _batches([t.split(" ")[0] for t in texts if t.endswith("degraded")])
    trial = _judge("fallback_switch", reported, batches, "")
    if originals != SEMANTIC_SEED_MEMORIES:
        return Trial("fallback_switch", trial.committed, trial.lost + 1, trial.corrupt,
                     f"{SEMANTIC_SEED_MEMORIES - originals} original memories not visible")
    return trial


# -- one trial ------------------------------------------------------------------------------------
def _spawn(path: str, folder: Path, seed: int, writer: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gya_memory.faults", "child", path, str(folder), str(seed), writer],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8", env=_env(),
    )


def _wait_ready(proc: subprocess.Popen[str], timeout: float = 120.0) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "READY":
        proc.kill()
        _, err = proc.communicate(timeout=timeout)
        raise RuntimeError(f"the writer did not start: {line!r} {err.strip()[-800:]}")


def _reported(out: str) -> list[str]:
    # Only whole lines: a line cut by the kill was not (fully) reported.
    lines = out.split("\n")
    return [ln[2:] for ln in lines[:-1] if ln.startswith("C ")]


def calibrate(path: str, folder: Path, template: Path | None = None) -> float:
    """Seconds from READY to the first reported write of an unkilled ``path`` child."""
    shutil.rmtree(folder, ignore_errors=True)
    if template is not None:
        shutil.copytree(template, folder)
    else:
        prepare(path, folder)
    proc = _spawn(path, folder, 0, "w1")
    try:
        _wait_ready(proc)
        started = time.perf_counter()
        assert proc.stdout is not None
        line = proc.stdout.readline()
        took = time.perf_counter() - started
        if not line.startswith("C "):
            raise RuntimeError(f"the {path} writer reported nothing: {line!r}")
        return took
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


def run_trial(path: str, folder: Path, seed: int, template: Path | None = None,
              max_delay: float | None = None) -> Trial:
    """One kill -9 of a ``path`` writer in a fresh ``folder`` (copied from ``template``),
    after a random delay of up to ``max_delay`` seconds (default :data:`MAX_DELAY`)."""
    if path not in PATHS:
        raise ValueError(f"path must be one of {', '.join(PATHS)}, got {path!r}")
    shutil.rmtree(folder, ignore_errors=True)
    if template is not None:
        shutil.copytree(template, folder)
    else:
        prepare(path, folder)
    rng = random.Random(seed)
    delay = rng.uniform(0.0, MAX_DELAY[path] if max_delay is None else max_delay)
    proc = _spawn(path, folder, seed, "w1")
    other = None
    try:
        _wait_ready(proc)
        if path.startswith("concurrent_"):
            other = _spawn(path, folder, seed, "w2")
            _wait_ready(other)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        reported = _reported("READY\n" + out)
        if other is not None:  # the survivor writes a little longer, then stops cleanly
            time.sleep(0.1)
            other.send_signal(signal.SIGKILL)
            out2, _ = other.communicate(timeout=60)
            reported += _reported("READY\n" + out2)
    finally:
        for p in (proc, other):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    return check(path, folder, reported)


def make_template(path: str, root: Path) -> Path | None:
    """Set up a trial folder once, to copy for every trial (None: nothing to set up)."""
    if path not in ("forget_user", "reembed", "fallback_switch"):
        return None
    template = root / f"template-{path}"
    shutil.rmtree(template, ignore_errors=True)
    prepare(path, template)
    return template


def run_trials(path: str, trials: int, root: Path, seed: int = 0,
               progress: Callable[[Trial], None] | None = None) -> list[Trial]:
    template = make_template(path, root)
    max_delay = None
    if path in ONE_SHOT:
        max_delay = 1.3 * calibrate(path, root / f"{path}-calibrate", template)
    results = []
    for i in range(trials):
        trial = run_trial(path, root / f"{path}-trial", seed * 100_003 + i, template, max_delay)
        results.append(trial)
        if progress is not None:
            progress(trial)
    return results


def summary(path: str, results: Sequence[Trial]) -> dict[str, Any]:
    return {"path": path, "trials": len(results),
            "committed": sum(t.committed for t in results),
            "lost": sum(t.lost for t in results),
            "corrupt": sum(t.corrupt for t in results),
            "details": sorted({t.detail for t in results if t.detail})[:3]}


def _main(argv: Sequence[str]) -> int:
    if len(argv) == 5 and argv[0] == "child":
        _child(argv[1], Path(argv[2]), int(argv[3]), argv[4])
        return 0
    print(json.dumps({"usage": "python -m gya_memory.faults child <path> <folder> <seed> <writer>"}))
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
