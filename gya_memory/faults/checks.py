"""What a restart finds after a kill -9: integrity, committed batches whole or absent, and
the one-shot operations (forget, re-embed, fallback switch) done or not done, never half.
:mod:`gya_memory.faults.trials` runs the trials.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


BATCH = 5  # items per batch write
USER, OTHER = "alice", "bob"
FORGET_ROWS = 1500
SEMANTIC_SEED_MEMORIES = 60


@dataclass(frozen=True)
class Trial:
    """What one kill -9 left behind."""

    path: str
    committed: int
    lost: int
    corrupt: int
    detail: str = ""


def fake_ollama_name() -> tuple[str, int]:
    from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder

    return "tfidf-as-ollama", TFIDFEmbedder().dim


# -- checking after the restart ------------------------------------------------------------------
def _sqlite_ok(db: Path, fts: bool = False) -> str:
    from gya_memory.episodic.sqlite import secure_connection

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
            from gya_memory.episodic.memory import EpisodicMemory

            with EpisodicMemory(db, user_id=USER) as mem:
                return _judge(path, reported, _batches([f.fact for f in mem.all()]), "")
        if path in ("session_append", "concurrent_sessions"):
            db = folder / "sessions.sqlite3"
            problem = _sqlite_ok(db, fts=True)
            if problem:
                return Trial(path, len(reported), len(reported), 1, problem)
            from gya_memory.hermes.sessions import SessionStore

            with SessionStore(db, user_id=USER) as store:
                keys = [m.content.split(" ")[0] for s in store.sessions()
                        for m in store.session(s.session_id)]
                batches = _batches(keys)
                found = {h.message.session_id for h in store.search("tea", limit=100)}
                problem = "" if not batches or found else "the search index lost the rows"
                return _judge(path, reported, batches, problem)
        if path in ("curated_write", "concurrent_curated"):
            from gya_memory.hermes.bounded_file import ENTRY_DELIMITER, MemoryFile

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
        if path in ("procedures_register", "concurrent_procedures"):
            from gya_memory.procedural.memory import ProceduralMemory

            procs = ProceduralMemory(path=folder / "procedures.json", user_id=USER)  # cleans temps
            temps = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
            names = {p.name for p in procs.owned_by(USER)}
            lost = [r for r in reported if r not in names]
            return Trial(path, len(reported), len(lost), int(bool(temps)),
                         f"temp files left: {', '.join(temps)}" if temps else "")
        if path == "forget_user":
            return _check_forget(folder, reported)
        if path == "semantic_store_many":
            from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
            from gya_memory.semantic.memory import SemanticMemory

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
    from gya_memory.hermes.curated import CuratedMemory
    from gya_memory.episodic.memory import EpisodicMemory
    from gya_memory.hermes.sessions import SessionStore

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
    from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
    from gya_memory.faults.fakes import HashEmbedder
    from gya_memory.semantic.memory import SemanticMemory

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

    from gya_memory.semantic.embeddings.http import OllamaEmbedder
    from gya_memory.faults.fakes import closed_port_url
    from gya_memory.semantic.memory import SemanticMemory

    model, dim = fake_ollama_name()
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
