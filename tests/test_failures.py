"""The failure injectors of notebook 08: a killed SQLite writer, a stand-in Ollama that can be
stopped, hash vs uuid5 ids across processes, and a Qdrant folder held by another process.

Every test here runs real parts (SQLite, an HTTP server on 127.0.0.1, embedded Qdrant, child
processes); none needs a model or the network.
"""

from __future__ import annotations

import urllib.error
import urllib.request
import warnings
from pathlib import Path

import numpy as np
import pytest

from gya_memory.semantic.embeddings.base import EmbeddingUnavailable
from gya_memory.semantic.embeddings.http import OllamaEmbedder
from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
from gya_memory.faults.fakes import CrashReport, FakeOllama, HashEmbedder, closed_port_url, crash_mid_transaction, hide_port
from gya_memory.faults.failures import HeldFolder, collections_table, store_in_new_process
from gya_memory.semantic.values import DegradedWarning, point_id
from gya_memory.semantic.memory import SemanticMemory
from gya_memory.semantic.stores.common import StoreLocked

COFFEE = "最近在戒咖啡，想少喝一点"
MEMORIES = ["用户叫张三", COFFEE, "用户是一名后端工程师", "The user's name is Alice"]


# -- SQLite: a writer killed mid-transaction -------------------------------------------------
@pytest.mark.parametrize("journal", [True, "delete", "truncate"])
def test_crash_with_a_journal_keeps_every_commit_and_nothing_of_the_open_transaction(
    tmp_path: Path, journal: bool | str
) -> None:
    report = crash_mid_transaction(tmp_path / "facts.sqlite3", journal=journal)
    assert report.exit_code == 137
    assert report.journal == ("wal" if journal is True else journal)
    assert report.integrity == "ok"
    assert report.committed_rows == report.committed == 100
    assert report.uncommitted_rows == 0
    assert report.recall == 20  # by_subject('偏好'): every 5th of the 100 committed facts
    assert report.intact and report.child_warnings == ()
    expected = ("-shm", "-wal") if journal is True else ("-journal",)
    assert report.left_behind == expected  # the crash left its journal: proof it was mid-write


def test_crash_without_a_journal_corrupts_the_database_the_same_way_every_time(
    tmp_path: Path,
) -> None:
    report = crash_mid_transaction(tmp_path / "off.sqlite3", journal=False)
    assert report.journal == "off" and report.exit_code == 137
    assert report.child_warnings == ("UnsafeJournalWarning",)  # set by the environment variable
    assert report.left_behind == ()
    assert report.integrity == "database disk image is malformed"
    assert report.recall == "DatabaseError: database disk image is malformed"
    assert report.committed_rows == 100  # a full table scan still reads them ...
    assert report.uncommitted_rows == 8  # ... and 8 rows that were never committed
    assert not report.intact
    # The kill point is fixed: a second run leaves the very same bytes and findings.
    again = crash_mid_transaction(tmp_path / "again" / "off.sqlite3", journal=False)
    assert again == report
    # The journal is the only difference: with DELETE the file was left identical, and
    # the -journal beside it undid the damage.
    rollback = crash_mid_transaction(tmp_path / "delete.sqlite3", journal="delete")
    assert rollback.db_digest == report.db_digest and rollback.intact


def test_a_small_crash_without_a_journal_is_silent(tmp_path: Path) -> None:
    quiet = crash_mid_transaction(tmp_path / "q.sqlite3", journal=False, uncommitted=5,
                                  cache_pages=2)
    assert quiet.integrity.startswith("row ") and "missing from index" in quiet.integrity
    assert quiet.uncommitted_rows == 5 and quiet.recall == 21  # a fact never committed
    fits = crash_mid_transaction(tmp_path / "f.sqlite3", journal=False, uncommitted=5)
    assert fits.intact  # nothing had been spilled to the file yet


def test_crash_checks_its_arguments(tmp_path: Path) -> None:
    existing = tmp_path / "exists.sqlite3"
    existing.write_bytes(b"")
    with pytest.raises(ValueError, match="exists"):
        crash_mid_transaction(existing)
    with pytest.raises(ValueError, match="journal"):
        crash_mid_transaction(tmp_path / "x.sqlite3", journal="memory")
    with pytest.raises(ValueError, match="uncommitted"):
        crash_mid_transaction(tmp_path / "y.sqlite3", uncommitted=0)
    row = CrashReport("wal", 137, (), "0", "ok", 1, 0, 0, 1, 1).as_row()
    assert row["journal"] == "wal" and row["left beside the db"] == "-"


# -- a stand-in Ollama ---------------------------------------------------------------------
def test_fake_ollama_serves_api_embed_and_stops(tmp_path: Path) -> None:
    tfidf = TFIDFEmbedder()
    with FakeOllama(tfidf) as fake:
        assert fake.running and fake.model == "char-1-3" and fake.dim == tfidf.dim
        client = OllamaEmbedder(fake.url, model=fake.model, timeout=5)
        vectors = client.embed_documents(MEMORIES[:2])
        np.testing.assert_allclose(vectors, tfidf.embed_documents(MEMORIES[:2]), atol=1e-6)
        assert client.dim == tfidf.dim and fake.served == 2
        # Ollama's answers to a model that is not pulled, and to another path
        with pytest.raises(EmbeddingUnavailable, match="404.*ollama pull nope"):
            OllamaEmbedder(fake.url, model="nope", dim=8, timeout=5).embed_query("x")
        request = urllib.request.Request(fake.url + "/api/other", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=5)
        assert err.value.code == 404
        port = fake.port
        fake.stop()
        assert not fake.running and "stopped" in repr(fake)
        with pytest.raises(EmbeddingUnavailable, match="refused"):
            client.embed_query("咖啡")
        fake.start()  # back, on the same port
        assert fake.port == port
        assert client.embed_query("咖啡").shape == (tfidf.dim,)
    assert not fake.running


def test_a_service_that_dies_after_start_moves_reads_and_writes_to_the_fallback() -> None:
    with FakeOllama() as fake:
        memory = SemanticMemory(":memory:", user_id="u1",
                                embedder=OllamaEmbedder(fake.url, model=fake.model, timeout=5))
        memory.store_many(MEMORIES[:3])
        fake.stop()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            memory.store(MEMORIES[3])
        assert [w.category for w in caught] == [DegradedWarning]
        assert "127.0.0.1:<port>" in hide_port(str(caught[0].message))
        rows = {r["collection"]: r for r in collections_table(memory)}
        assert rows["memories"]["points"] == 3 and rows["memories"]["model"] == "ollama/char-1-3"
        fallback = rows["memories__fallback"]
        assert fallback["points"] == 4 and fallback["written during outage"] == 1
        assert fallback["in use"] and fallback["dim"] == TFIDFEmbedder().dim
        assert all(h.degraded for h in memory.retrieve("咖啡"))
        fake.start()
        assert memory.recover() == 1
        assert {r["collection"]: r["points"] for r in collections_table(memory)} == {
            "memories": 4, "memories__fallback": 4}
        memory.close()


def test_closed_port_refuses_and_ports_are_hidden() -> None:
    url = closed_port_url()
    assert hide_port(url) == "http://127.0.0.1:<port>"
    assert hide_port("at localhost:8080/x") == "at localhost:<port>/x"
    with pytest.raises(EmbeddingUnavailable, match="refused"):
        OllamaEmbedder(url, timeout=5).embed_query("咖啡")


def test_hash_embedder_is_another_model_of_any_size() -> None:
    toy = HashEmbedder(64)
    a, b = toy.embed_documents([COFFEE]), HashEmbedder(64).embed_documents([COFFEE])
    assert a.shape == (1, 64) and np.array_equal(a, b)  # deterministic across instances
    assert abs(float(np.linalg.norm(a)) - 1) < 1e-5
    assert toy.fingerprint.model == "hash/char-1-2-64" != TFIDFEmbedder().fingerprint.model
    with pytest.raises(ValueError):
        HashEmbedder(2)


# -- Qdrant: ids from new processes, and a held folder -------------------------------------
def test_hash_ids_pile_up_across_processes_and_uuid5_ids_do_not(tmp_path: Path) -> None:
    folder = tmp_path / "ids"
    first = store_in_new_process(folder, MEMORIES, hash_seed=1)
    second = store_in_new_process(folder, MEMORIES, hash_seed=2)
    assert first["hash_ids"]["ids"] != second["hash_ids"]["ids"]
    assert all(isinstance(i, int) and 0 <= i < 10**12 for i in first["hash_ids"]["ids"])
    assert (first["hash_ids"]["count"], second["hash_ids"]["count"]) == (4, 8)
    assert first["uuid5_ids"]["ids"] == second["uuid5_ids"]["ids"] == [
        point_id("user-zh-001", t) for t in MEMORIES]
    assert (first["uuid5_ids"]["count"], second["uuid5_ids"]["count"]) == (4, 4)
    # the article's id for the coffee memory under PYTHONHASHSEED=1, as notebook 04 shows
    assert first["hash_ids"]["ids"][1] == 279197314718


def test_a_folder_held_by_another_process_is_locked_until_released(tmp_path: Path) -> None:
    folder = tmp_path / "qdrant"
    holder = HeldFolder(folder)
    try:
        assert holder.alive
        with pytest.raises(StoreLocked, match="open in another client"):
            SemanticMemory(folder, embedder=TFIDFEmbedder())
        assert holder.release() == 0 and not holder.alive
    finally:
        holder.kill()
    with SemanticMemory(folder, embedder=TFIDFEmbedder()) as memory:
        memory.store(COFFEE)
        assert memory.count() == 1
