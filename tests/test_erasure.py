"""forget_user(): a user's memories leave every store, and every byte of every file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gya_memory.episodic import sqlite as storage
from gya_memory.base.clock import CHINA_TZ, FixedClock
from gya_memory.hermes.curated import CuratedMemory
from gya_memory.episodic.memory import EpisodicMemory
from gya_memory.erasure import ErasureReport, forget_user
from gya_memory.procedural.memory import ProceduralMemory, Procedure
from gya_memory.hermes.sessions import SessionStore

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
    from gya_memory.semantic import memory as semantic_module

    if hasattr(semantic_module.SemanticMemory, "erase_user"):
        from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder

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
    assert [p.name for p in procedures.owned_by("bob")] == ["bob_run"]
    assert not procedures.owned_by("alice")


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
    from gya_memory.semantic import memory as semantic_module

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


# -- issue 19: erasure that can't half-fail --------------------------------------------------
def _sqlite_pair(folder: Path, user: str) -> dict[str, object]:
    ep = EpisodicMemory(folder / "episodic.sqlite3", user_id=user, clock=clock())
    ss = SessionStore(folder / "sessions.sqlite3", user_id=user, clock=clock())
    ep.add_many([("偏好", f"{SENTINELS[0]} fact {j}", "s1") for j in range(20)])
    ss.add_session("s1", [{"role": "user", "content": f"{SENTINELS[0]} message {j}"}
                          for j in range(20)])
    return {"episodic": ep, "sessions": ss}


@pytest.mark.parametrize("user_id", ["张" * 27, "🙂" * 20, "*" * 76, "界" * 128])
def test_forget_user_works_for_every_valid_id(tmp_path: Path, user_id: str) -> None:
    stores = _sqlite_pair(tmp_path, user_id)
    curated = CuratedMemory(tmp_path / "memories", user_id=user_id)
    curated.user.add(f"{SENTINELS[0]} profile")  # before: OSError, the folder name too long
    report = forget_user(user_id, curated=curated, **stores)  # before: half done, then crashed
    assert (report.episodic, report.sessions, report.curated) == (20, 20, 1)
    assert files_with(tmp_path, SENTINELS[0].encode()) == []


def test_a_store_that_cannot_be_erased_stops_everything_before_any_deletion(tmp_path: Path) -> None:
    from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
    from gya_memory.procedural.records import ProceduresDamaged
    from gya_memory.semantic.memory import SemanticMemory

    stores = _sqlite_pair(tmp_path, "alice")
    semantic = SemanticMemory(tmp_path / "qdrant", user_id="alice", embedder=TFIDFEmbedder())
    semantic.store(f"{SENTINELS[0]} memory")
    semantic.close()
    with pytest.raises(RuntimeError, match="closed.*Nothing was deleted"):
        forget_user("alice", semantic=semantic, **stores)
    procedures = ProceduralMemory()
    procedures.save(tmp_path / "procedures.json")
    (tmp_path / "procedures.json").write_text("{damaged", encoding="utf-8")  # since opened
    with pytest.raises(ProceduresDamaged, match="procedures.json.*Nothing was deleted"):
        forget_user("alice", procedural=procedures, **stores)
    closed = EpisodicMemory(tmp_path / "other.sqlite3", user_id="alice")
    closed.close()
    with pytest.raises(RuntimeError, match="closed.*Nothing was deleted"):
        forget_user("alice", episodic=closed, sessions=stores["sessions"])
    assert len(stores["episodic"]) == 20 and len(stores["sessions"]) == 20  # nothing deleted


def test_a_reader_holding_the_wal_makes_forget_user_fail_loudly(tmp_path: Path) -> None:
    from gya_memory.erasure import ErasureIncomplete

    stores = _sqlite_pair(tmp_path, "alice")
    reader = sqlite3.connect(tmp_path / "episodic.sqlite3")
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM facts").fetchone()  # holds a read snapshot
    with pytest.raises(ErasureIncomplete, match="NOT FINISHED.*episodic.sqlite3-wal") as caught:
        forget_user("alice", wal_wait_s=0.2, **stores)  # before: a normal success line
    report = caught.value.report
    assert not report.wal_emptied and (report.episodic, report.sessions) == (20, 20)
    assert "NOT FINISHED" in str(report)
    assert files_with(tmp_path, SENTINELS[0].encode()) == ["episodic.sqlite3-wal"]
    reader.close()
    again = forget_user("alice", **stores)  # finishes the job
    assert again.wal_emptied and again.total == 0 and "NOT FINISHED" not in str(again)
    assert files_with(tmp_path, SENTINELS[0].encode()) == []


def test_forget_user_waits_for_a_reader_that_lets_go(tmp_path: Path) -> None:
    import threading

    stores = _sqlite_pair(tmp_path, "alice")
    reader = sqlite3.connect(tmp_path / "episodic.sqlite3", check_same_thread=False)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM facts").fetchone()
    threading.Timer(0.3, reader.close).start()
    report = forget_user("alice", wal_wait_s=5, **stores)
    assert report.wal_emptied and files_with(tmp_path, SENTINELS[0].encode()) == []


def test_ids_that_print_alike_are_one_user_for_forget_user(tmp_path: Path) -> None:
    nfd, nfc = "jose\u0301", "jos\u00e9"
    stores = _sqlite_pair(tmp_path, nfd)
    curated = CuratedMemory(tmp_path / "memories", user_id=nfd)
    curated.user.add(f"{SENTINELS[0]} profile")
    report = forget_user(nfc, curated=curated, **stores)  # before: "belongs to" / total 0
    assert report.total == 41 and report.user_id == nfc
    assert files_with(tmp_path, SENTINELS[0].encode()) == []


def test_a_killed_procedures_save_leaves_no_copy_after_forget_user(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    path = tmp_path / "procedures.json"
    ProceduralMemory().save(path)
    child = textwrap.dedent(f"""
        import os, sys, time
        from gya_memory.procedural.memory import ProceduralMemory, Procedure
        real = os.replace
        def stall(src, dst):  # the temp file is written and fsynced: die before the rename
            print("READY", flush=True)
            time.sleep(60)
        os.replace = stall
        ProceduralMemory.load({str(path)!r}, user_id="alice").register(
            Procedure("alice_tea", "alice {SENTINELS[0]}", steps=("{SENTINELS[1]}",)))
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert proc.stdout is not None and proc.stdout.readline().strip() == "READY"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert files_with(tmp_path, SENTINELS[0].encode())  # the killed writer's temp file
    report = forget_user("alice", procedural=ProceduralMemory.load(path))
    assert report.procedural == 0  # the registration never happened ...
    assert files_with(tmp_path, SENTINELS[0].encode()) == []  # ... and its copy is gone


def test_semantic_forget_everything_removes_the_bytes(tmp_path: Path) -> None:
    from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
    from gya_memory.semantic.memory import SemanticMemory

    folder = tmp_path / "qdrant"
    with SemanticMemory(folder, user_id="alice", embedder=TFIDFEmbedder()) as alice, \
            SemanticMemory(folder, user_id="bob", embedder=TFIDFEmbedder()) as bob:
        alice.store_many([f"{SENTINELS[0]} memory {j}" for j in range(10)])
        bob.store("bob's own memory BOBS-OWN-1")
        assert alice.forget(everything=True) == 10
        assert files_with(folder, SENTINELS[0].encode()) == []  # before: payload and WAL files
        assert len(bob.all()) == 1
    assert files_with(folder, SENTINELS[0].encode()) == []


@pytest.mark.parametrize("user_id", ["界" * 128, "🙂" * 64, "*" * 128, "jose\u0301" * 25])
def test_forget_user_over_all_five_stores_for_long_ids(tmp_path: Path, user_id: str,
                                                      insecure_sqlite: list) -> None:
    """The issue's erasure target for every valid id, over every store at once: ids whose
    UTF-8 form is far over 255 bytes (a folder name's limit), and an NFD id forgotten by
    its NFC spelling; the sentinel is in no byte under the data folder afterwards."""
    import unicodedata

    from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
    from gya_memory.semantic.memory import SemanticMemory

    stores = _sqlite_pair(tmp_path, user_id)
    curated = CuratedMemory(tmp_path / "memories", user_id=user_id, clock=clock())
    curated.user.add(f"{SENTINELS[0]} profile")
    semantic = SemanticMemory(tmp_path / "qdrant", user_id=user_id, embedder=TFIDFEmbedder())
    semantic.store_many([f"{SENTINELS[0]} memory {j}" for j in range(5)])
    procedures = ProceduralMemory()
    procedures.register(Procedure("tea", f"{SENTINELS[0]} tea", steps=("boil",), owner=user_id))
    procedures.save(tmp_path / "procedures.json")
    report = forget_user(unicodedata.normalize("NFC", user_id), curated=curated,
                         semantic=semantic, procedural=procedures, **stores)
    assert (report.episodic, report.sessions, report.curated, report.semantic,
            report.procedural) == (20, 20, 1, 5, 1)
    assert report.wal_emptied
    semantic.close()
    for store in stores.values():
        store.close()  # type: ignore[attr-defined]
    assert files_with(tmp_path, SENTINELS[0].encode()) == []


def test_a_procedure_owner_is_one_id_however_it_is_spelt(tmp_path: Path) -> None:
    nfd, nfc = "jose\u0301", "jos\u00e9"
    procedures = ProceduralMemory()
    procedures.register(Procedure("tea", "tea", steps=("boil",), owner=nfd))
    assert procedures.owned_by(nfc)[0].owner == nfc  # before: [] (the owner kept as NFD)
    assert ProceduralMemory(user_id=nfc).erase_user(nfd) == 0  # an empty registry of its own
    assert procedures.erase_user(nfc) == 1  # before: 0, and forget_user said total 0
