"""forget_user(): a user's memories leave every store, and every byte of every file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gya_memory import storage
from gya_memory.clock import CHINA_TZ, FixedClock
from gya_memory.curated import CuratedMemory
from gya_memory.episodic import EpisodicMemory
from gya_memory.erasure import ErasureReport, forget_user
from gya_memory.procedural import ProceduralMemory, Procedure
from gya_memory.sessions import SessionStore

SENTINELS = ("SENTINEL-7f3a9c", "哨兵秘密四七")
BAD_IDS = ["alice ", " alice", "alice\n", "alice\t", "alice\xa0", "\u200balice", "alice\x00"]


def clock() -> FixedClock:
    from datetime import datetime

    return FixedClock(datetime(2026, 9, 1, 9, 0, tzinfo=CHINA_TZ))


@pytest.fixture
def insecure_sqlite(monkeypatch: pytest.MonkeyPatch) -> list[sqlite3.Connection]:
    """Every new SQLite connection starts with secure_delete OFF (SQLite's own default), so
    a passing test proves the project turns it on itself."""
    opened: list[sqlite3.Connection] = []
    real = sqlite3.connect

    def connect(*args, **kwargs):  # type: ignore[no-untyped-def]
        conn = real(*args, **kwargs)
        conn.execute("PRAGMA secure_delete = OFF")
        opened.append(conn)
        return conn

    monkeypatch.setattr(storage.sqlite3, "connect", connect)
    return opened


def files_with(folder: Path, needle: bytes) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and needle in p.read_bytes())


def fill(folder: Path, user: str, tag: str, sentinels: tuple[str, ...]) -> dict[str, object]:
    ep = EpisodicMemory(folder / "episodic.sqlite3", user_id=user, clock=clock())
    ss = SessionStore(folder / "sessions.sqlite3", user_id=user, clock=clock())
    cm = CuratedMemory(folder / "memories", user_id=user, clock=clock())
    for i, s in enumerate(sentinels):
        ep.add_many([("偏好", f"{tag} {s} fact {j}", f"s{i}") for j in range(30)])
        ss.add_session(f"s{i}", [{"role": "user", "content": f"{tag} {s} message {j} " * 5}
                                 for j in range(30)])
        cm.user.add(f"{tag} {s} profile")
        cm.memory.add(f"{tag} {s} note")
    return {"episodic": ep, "sessions": ss, "curated": cm}


def test_forget_user_leaves_no_byte_behind(tmp_path: Path, insecure_sqlite: list) -> None:
    folder = tmp_path / "data"
    alice = fill(folder, "alice", "A", SENTINELS)
    bob = fill(folder, "bob", "B", ("BOBS-OWN-1", "鲍勃的东西"))
    assert insecure_sqlite  # the hook saw the connections
    procedures = ProceduralMemory()
    procedures.register(Procedure("alice_tea", f"alice {SENTINELS[0]}", steps=(SENTINELS[1],),
                                  owner="alice"))
    procedures.register(Procedure("bob_run", "bob's run", steps=("s",), owner="bob"))
    procedures.save(folder / "procedures.json")
    semantic = None
    from gya_memory import semantic as semantic_module

    if hasattr(semantic_module.SemanticMemory, "erase_user"):
        from gya_memory.embeddings import TFIDFEmbedder

        semantic = semantic_module.SemanticMemory(folder / "qdrant", user_id="alice",
                                                  embedder=TFIDFEmbedder())
        semantic.store_many([f"A {s} memory {j}" for s in SENTINELS for j in range(5)])
    for s in SENTINELS:
        assert files_with(folder, s.encode())  # it is there before

    report = forget_user("alice", procedural=procedures, semantic=semantic, **alice)
    assert isinstance(report, ErasureReport)
    assert (report.episodic, report.sessions, report.curated, report.procedural) == (60, 60, 4, 1)
    assert report.wal_emptied and "forgot 'alice'" in str(report)
    # while the stores are still open ...
    for s in SENTINELS:
        assert files_with(folder, s.encode()) == [], s
    for store in (*alice.values(), *bob.values()):
        if hasattr(store, "close"):
            store.close()
    if semantic is not None:
        semantic.close()
    # ... and after they are closed
    for s in SENTINELS:
        assert files_with(folder, s.encode()) == [], s
    # bob is untouched
    with EpisodicMemory(folder / "episodic.sqlite3", user_id="bob") as ep:
        assert len(ep) == 60
    with SessionStore(folder / "sessions.sqlite3", user_id="bob") as ss:
        assert len(ss) == 60 and ss.search("BOBS-OWN-1")
    assert CuratedMemory(folder / "memories", user_id="bob").user.entries()
    assert [p.name for p in procedures] == ["bob_run"]


def test_forget_user_needs_the_users_own_stores(tmp_path: Path) -> None:
    ep = EpisodicMemory(tmp_path / "e.sqlite3", user_id="bob")
    ep.add("x", "bob's fact", "s")
    with pytest.raises(ValueError, match="belongs to user 'bob'"):
        forget_user("alice", episodic=ep)
    with pytest.raises(ValueError, match="at least one store"):
        forget_user("alice")
    with pytest.raises(ValueError, match="user_id"):
        forget_user("bob ", episodic=ep)
    assert len(ep) == 1


def test_semantic_without_erase_user_is_a_clear_error(tmp_path: Path) -> None:
    class OldSemantic:
        user_id = "alice"

    ep = EpisodicMemory(tmp_path / "e.sqlite3", user_id="alice")
    ep.add("x", "kept", "s")
    with pytest.raises(RuntimeError, match="erase_user"):
        forget_user("alice", episodic=ep, semantic=OldSemantic())
    assert len(ep) == 1  # nothing was deleted


def test_semantic_erase_user_is_called() -> None:
    from gya_memory import semantic as semantic_module

    if not hasattr(semantic_module.SemanticMemory, "erase_user"):
        pytest.skip("SemanticMemory.erase_user() arrives with the Qdrant Edge branch")

    class Fake:
        user_id = "alice"
        calls = 0

        def erase_user(self) -> int:
            Fake.calls += 1
            return 3

    assert forget_user("alice", semantic=Fake()).semantic == 3 and Fake.calls == 1


@pytest.mark.parametrize("bad", BAD_IDS)
def test_user_ids_with_whitespace_or_controls_are_refused_everywhere(tmp_path: Path, bad: str) -> None:
    with EpisodicMemory(tmp_path / "e.sqlite3", user_id="alice") as ep:
        ep.add("x", "alice's fact", "s")
    with SessionStore(tmp_path / "s.sqlite3", user_id="alice") as ss:
        ss.add_message("s", "user", "alice's message")
    for make in (lambda: EpisodicMemory(tmp_path / "e.sqlite3", user_id=bad),
                 lambda: SessionStore(tmp_path / "s.sqlite3", user_id=bad),
                 lambda: CuratedMemory(tmp_path, user_id=bad),
                 lambda: Procedure("p", "d", steps=("s",), owner=bad)):
        with pytest.raises(ValueError, match="user_id|owner"):
            make()
    with EpisodicMemory(tmp_path / "e.sqlite3", user_id="alice") as ep:
        assert len(ep) == 1
    with SessionStore(tmp_path / "s.sqlite3", user_id="alice") as ss:
        assert len(ss) == 1
