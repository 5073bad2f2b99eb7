"""kill -9 of a real child process in the middle of writing and of migrations.

A child process opens a memory folder (Qdrant Edge), starts ``store_many`` or ``reembed``,
and stops at a chosen point (it prints ``at <point>`` and waits); the test kills it with
SIGKILL there, then opens the folder again and checks that nothing was lost or duplicated,
and that the collection in use is the old one or the new one, complete.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
from gya_memory.faults.fakes import HashEmbedder
from gya_memory.semantic.values import EmbedderMismatch, point_id
from gya_memory.semantic.memory import SemanticMemory
from gya_memory.semantic.stores.common import POINTER_FILE, SHARDS_DIR

from .conftest import PYTHON, child_env

TEXTS = [f"memory {i}: 用户第{i}次提到咖啡" for i in range(300)]

CHILD = r'''
import sys, time
from gya_memory.semantic.stores import edge as stores
from gya_memory.semantic.embeddings import TFIDFEmbedder
from gya_memory.faults.fakes import HashEmbedder
from gya_memory.semantic.memory import SemanticMemory

folder, action, point = sys.argv[1], sys.argv[2], sys.argv[3]
TEXTS = [f"memory {i}: 用户第{i}次提到咖啡" for i in range(300)]

def stop(tag):
    if tag == point:
        print("at", tag, flush=True)
        time.sleep(600)

upserts = {"n": 0}
orig_upsert, orig_switch = stores.EdgeStore.upsert, stores.EdgeStore.switch
orig_write, orig_remove = stores.EdgeStore._write_pointer, stores.EdgeStore._remove_shard
def upsert(self, name, points):
    orig_upsert(self, name, points)
    upserts["n"] += 1
    stop(f"upsert-{upserts['n']}")
def switch(self, name, temp, *, expected):
    stop("before-switch")
    orig_switch(self, name, temp, expected=expected)
def remove(self, shard):
    stop("before-old-removed")
    orig_remove(self, shard)
stores.EdgeStore.upsert, stores.EdgeStore.switch = upsert, switch
stores.EdgeStore._remove_shard = remove

mem = SemanticMemory(folder, embedder=TFIDFEmbedder(), user_id="u1")
if action == "store":
    mem.store_many(TEXTS, batch_size=50)
else:
    mem.reembed(HashEmbedder(64), batch_size=50)
print("done", flush=True)
'''


def kill_at(folder: Path, action: str, point: str) -> None:
    """Run the child until it reaches ``point``, then SIGKILL it."""
    proc = subprocess.Popen([PYTHON, "-c", CHILD, str(folder), action, point],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child_env())
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != f"at {point}":
        proc.kill()
        _, err = proc.communicate(timeout=60)
        raise AssertionError(f"the child did not reach {point}: {line!r} {err[-2000:]}")
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL


def shards(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / SHARDS_DIR).iterdir())


@pytest.mark.parametrize("point", ["upsert-2", "upsert-5"])
def test_kill_during_store_many_loses_nothing_written_and_duplicates_nothing(
    tmp_path: Path, point: str
) -> None:
    folder = tmp_path / "qdrant"
    kill_at(folder, "store", point)
    written = int(point.split("-")[1]) * 50
    with SemanticMemory(folder, embedder=TFIDFEmbedder(), user_id="u1") as mem:
        assert mem.count() == written  # every batch that returned is there
        assert {m.text for m in mem.all()} == set(TEXTS[:written])
        # the agent stores everything again after the restart: no duplicates
        ids = mem.store_many(TEXTS)
        assert ids == [point_id("u1", t) for t in TEXTS]
        assert mem.count() == len(TEXTS) == len({m.id for m in mem.all()})


def _filled(folder: Path) -> None:
    with SemanticMemory(folder, embedder=TFIDFEmbedder(), user_id="u1") as mem:
        mem.store_many(TEXTS)
    with SemanticMemory(folder, embedder=TFIDFEmbedder(), user_id="u2") as other:
        other.store("用户叫李四")


@pytest.mark.parametrize("point", ["upsert-3", "before-switch"])
def test_kill_before_a_migration_switches_leaves_the_old_collection_whole(
    tmp_path: Path, point: str
) -> None:
    folder = tmp_path / "qdrant"
    _filled(folder)
    before = shards(folder)
    kill_at(folder, "reembed", point)
    assert len(shards(folder)) == 2  # the old shard and the unfinished new one
    # The old embedder still opens it: the pointer was never switched.
    with SemanticMemory(folder, embedder=TFIDFEmbedder(), user_id="u1") as mem:
        assert mem.count() == len(TEXTS)
        assert mem.retrieve(TEXTS[7], top_k=1, min_score=0.0)[0].text == TEXTS[7]
    assert shards(folder) == before  # the leftover was removed on open
    with pytest.raises(EmbedderMismatch):
        SemanticMemory(folder, embedder=HashEmbedder(64), user_id="u1")
    # and the migration can simply be run again
    with SemanticMemory(folder, embedder=HashEmbedder(64), user_id="u1", reembed=True) as mem:
        assert mem.count() == len(TEXTS)
    with SemanticMemory(folder, embedder=HashEmbedder(64), user_id="u2") as other:
        assert [m.text for m in other.all()] == ["用户叫李四"]


def test_kill_after_the_switch_leaves_the_new_collection_whole(tmp_path: Path) -> None:
    folder = tmp_path / "qdrant"
    _filled(folder)
    kill_at(folder, "reembed", "before-old-removed")
    assert len(shards(folder)) == 2  # the old shard was not removed yet
    assert (folder / POINTER_FILE).exists()
    with pytest.raises(EmbedderMismatch):  # the switch happened: the old model is refused
        SemanticMemory(folder, embedder=TFIDFEmbedder(), user_id="u1")
    with SemanticMemory(folder, embedder=HashEmbedder(64), user_id="u1") as mem:
        assert mem.count() == len(TEXTS)
        assert {m.text for m in mem.all()} == set(TEXTS)
    assert len(shards(folder)) == 1  # the old shard went on the next open
    with SemanticMemory(folder, embedder=HashEmbedder(64), user_id="u2") as other:
        assert other.count() == 1
