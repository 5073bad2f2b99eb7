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
``forget_user``, ``semantic_store_many``, ``reembed``, ``fallback_switch``,
``procedures_register``, and
``concurrent_*`` variants where a second writer works on the same store at the same time
(the first is killed at the random moment, the second 0.1 s later; every write either
reported must survive).

``python -m gya_memory.faults.trials child <path> <folder> <seed>`` is the child; nothing here runs
at import time. ``benchmarks/bench_faults.py`` runs many trials; ``tests/test_faults.py`` a few.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gya_memory.faults.checks import (
    BATCH,
    FORGET_ROWS,
    OTHER,
    SEMANTIC_SEED_MEMORIES,
    Trial,
    USER,
    fake_ollama_name,
    check,
)


PACKAGE_ROOT = Path(__file__).resolve().parents[2]


PATHS = ("episodic_add_many", "session_append", "curated_write", "forget_user",
         "semantic_store_many", "reembed", "fallback_switch",
         "concurrent_episodic", "concurrent_sessions", "concurrent_curated",
         "procedures_register", "concurrent_procedures")
# How long after the child says READY the kill may come (seconds). The loops write for as
# long as they live. A one-shot operation is timed once per run (:func:`calibrate`) and the
# kill comes anywhere in 0-1.3x that time, so most kills land inside it and some after it.
MAX_DELAY = {"episodic_add_many": 0.4, "session_append": 0.4, "curated_write": 0.4,
             "forget_user": 0.15, "semantic_store_many": 0.6, "reembed": 0.5,
             "fallback_switch": 3.5, "concurrent_episodic": 0.4, "concurrent_sessions": 0.4,
             "concurrent_curated": 0.4, "procedures_register": 0.4,
             "concurrent_procedures": 0.4}
ONE_SHOT = ("forget_user", "reembed", "fallback_switch")


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


def prepare(path: str, folder: Path) -> None:
    """What a trial of ``path`` needs before its child starts (in ``folder``)."""
    folder.mkdir(parents=True, exist_ok=True)
    if path == "forget_user":
        from gya_memory.hermes.curated import CuratedMemory
        from gya_memory.episodic.memory import EpisodicMemory
        from gya_memory.hermes.sessions import SessionStore

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
        from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
        from gya_memory.semantic.memory import SemanticMemory

        with SemanticMemory(folder / "qdrant", user_id=USER, embedder=TFIDFEmbedder()) as mem:
            mem.store_many([f"memory {i} about tea and coffee" for i in range(SEMANTIC_SEED_MEMORIES)])
    elif path == "fallback_switch":
        from gya_memory.semantic.embeddings.http import OllamaEmbedder
        from gya_memory.faults.fakes import FakeOllama
        from gya_memory.semantic.memory import SemanticMemory

        model, dim = fake_ollama_name()
        with FakeOllama(model=model) as fake:
            emb = OllamaEmbedder(fake.url, model=model, dim=dim, timeout=10)
            with SemanticMemory(folder / "qdrant", user_id=USER, embedder=emb,
                                fallback=False) as mem:
                mem.store_many([f"memory {i} about tea" for i in range(SEMANTIC_SEED_MEMORIES)])


# -- the child ----------------------------------------------------------------------------------
def _child(path: str, folder: Path, seed: int, writer: str) -> None:
    loop_limit = 100_000
    if path in ("episodic_add_many", "concurrent_episodic"):
        from gya_memory.episodic.memory import EpisodicMemory

        mem = EpisodicMemory(folder / "episodic.sqlite3", user_id=USER)
        _say("READY")
        for b in range(loop_limit):
            mem.add_many([("fact", f"{writer}-b{b}-{j}", f"{writer}-b{b}") for j in range(BATCH)])
            _say(f"C {writer}-b{b}")
    elif path in ("session_append", "concurrent_sessions"):
        from gya_memory.hermes.sessions import SessionStore

        store = SessionStore(folder / "sessions.sqlite3", user_id=USER)
        _say("READY")
        for b in range(loop_limit):
            store.add_session(f"{writer}-b{b}", [{"role": "user", "content": f"{writer}-b{b}-{j} tea"}
                                                 for j in range(BATCH)])
            _say(f"C {writer}-b{b}")
    elif path in ("curated_write", "concurrent_curated"):
        from gya_memory.hermes.bounded_file import MemoryFile

        notes = MemoryFile(folder / "MEMORY.md", cap=10**7, title="MEMORY")
        _say("READY")
        for b in range(loop_limit):
            notes.add(f"{writer}-entry-{b} " + "x" * 200)
            _say(f"C {writer}-entry-{b}")
    elif path in ("procedures_register", "concurrent_procedures"):
        from gya_memory.procedural.memory import ProceduralMemory, Procedure

        procs = ProceduralMemory(path=folder / "procedures.json", user_id=USER)
        _say("READY")
        for b in range(loop_limit):
            procs.register(Procedure(f"{writer}-p{b}", "x" * 200, steps=("s",)))
            _say(f"C {writer}-p{b}")
    elif path == "forget_user":
        from gya_memory.hermes.curated import CuratedMemory
        from gya_memory.episodic.memory import EpisodicMemory
        from gya_memory.erasure import forget_user
        from gya_memory.hermes.sessions import SessionStore

        stores = dict(episodic=EpisodicMemory(folder / "episodic.sqlite3", user_id=USER),
                      sessions=SessionStore(folder / "sessions.sqlite3", user_id=USER),
                      curated=CuratedMemory(folder / "memories", user_id=USER))
        _say("READY")
        forget_user(USER, **stores)
        _say("C forgot")
    elif path == "semantic_store_many":
        from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
        from gya_memory.semantic.memory import SemanticMemory

        mem = SemanticMemory(folder / "qdrant", user_id=USER, embedder=TFIDFEmbedder())
        _say("READY")
        for b in range(loop_limit):
            mem.store_many([f"{writer}-b{b}-{j} tea" for j in range(BATCH)])
            _say(f"C {writer}-b{b}")
    elif path == "reembed":
        from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
        from gya_memory.faults.fakes import HashEmbedder
        from gya_memory.semantic.memory import SemanticMemory

        mem = SemanticMemory(folder / "qdrant", user_id=USER, embedder=TFIDFEmbedder())
        _say("READY")
        mem.reembed(HashEmbedder(64))
        _say("C reembedded")
    elif path == "fallback_switch":
        import warnings

        from gya_memory.semantic.embeddings.http import OllamaEmbedder
        from gya_memory.faults.fakes import closed_port_url
        from gya_memory.semantic.memory import SemanticMemory

        warnings.simplefilter("ignore")
        model, dim = fake_ollama_name()
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


# -- one trial ------------------------------------------------------------------------------------
def _spawn(path: str, folder: Path, seed: int, writer: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gya_memory.faults.trials", "child", path, str(folder), str(seed), writer],
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
    print(json.dumps({"usage": "python -m gya_memory.faults.trials child <path> <folder> <seed> <writer>"}))
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
