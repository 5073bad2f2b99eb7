"""Failure paths (失败路径): the pieces that make memory failures reproducible on demand.

A memory layer is judged by what it does when something breaks. This module holds the
stand-ins and fault injectors that notebook 08 uses to break things *the same way on every
run*, so each failure can be shown, explained and tested:

- :class:`FakeOllama`: a tiny HTTP server speaking Ollama's ``POST /api/embed`` on
  127.0.0.1, backed by any :class:`~gya_memory.semantic.embeddings.Embedder` of this package. It is a
  **stand-in for a real Ollama** in a classroom (or CI) without one: ``stop()`` makes its port
  refuse connections, like a service that dies after start, and ``start()`` brings it back
  on the same port. :func:`closed_port_url` gives a URL where nothing listens at all.
- :class:`HashEmbedder`: a toy "other model" (hashed characters and bigrams) of any
  dimension, to show what happens when vectors of two models meet.
- :func:`crash_mid_transaction`: a child process writes :class:`EpisodicMemory` facts,
  commits a first batch, then dies with ``os._exit(137)`` (for the file, the same as
  ``kill -9``: no rollback, no cleanup) in the middle of a second, large transaction. The
  kill point is fixed (the clock of the store kills the process at a given row) and the
  page cache is tiny, so SQLite has already spilled half-written pages to disk; the result
  is the same on every run. :class:`CrashReport` says what a restart finds.
- :func:`store_in_new_process`: writes memories into an embedded Qdrant from a brand-new
  process with a chosen ``PYTHONHASHSEED``, once with ids from salted ``hash()`` and once
  with :func:`~gya_memory.semantic.memory.point_id` (uuid5): the duplicate pile-up, reproduced.
- :class:`HeldFolder`: a child process that keeps a Qdrant folder open (and so locked) until
  it is told to close, or is killed.

The stand-ins (:class:`FakeOllama`, :class:`HashEmbedder`) and the crash injector
(:func:`crash_mid_transaction`) live in :mod:`gya_memory.faults.fakes`, which the tests use too;
they are re-exported here. Every child process runs with captured output and a fixed ``PYTHONHASHSEED``; nothing it
prints reaches the notebook unless returned on purpose.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
from gya_memory.base.payload import DEGRADED_WRITE, TEXT, USER_ID
from gya_memory.faults.fakes import crash_child, last_json, run_child, child_env


def collections_table(memory: Any) -> list[dict[str, Any]]:
    """For a :class:`~gya_memory.semantic.memory.SemanticMemory`: each of its two collections
    (primary and ``__fallback``) that exists, with the model its fingerprint names, the
    vector size, how many points this user has there, and how many were written there
    during an outage (``degraded_write``). Shows that two models never share one."""
    from gya_memory.semantic.stores.common import Where

    store = memory.backend
    rows = []
    for name in (memory.collection, memory.fallback_collection):
        if not store.exists(name):
            continue
        spec = store.spec(name)
        fingerprint = spec.metadata.get("gya_memory", {}).get("fingerprint", {})
        user = Where(user_id=memory.user_id)
        outage = Where(user_id=memory.user_id, equal=((DEGRADED_WRITE, True),))
        rows.append({"collection": name, "model": fingerprint.get("model"),
                     "dim": spec.dim, "points": store.count(name, user),
                     "written during outage": store.count(name, outage),
                     "in use": name == memory.active_collection})
    return rows


# -- Qdrant: ids from a new process -------------------------------------------------------
def store_in_new_process(folder: str | os.PathLike[str], texts: Sequence[str], *,
                         hash_seed: int, user_id: str = "user-zh-001") -> dict[str, Any]:
    """Store ``texts`` in the embedded Qdrant at ``folder`` from a brand-new process whose
    ``PYTHONHASHSEED`` is ``hash_seed``, as an agent restarted in a fresh process would, once
    per id scheme, each in its own collection:

    - ``hash_ids``: point id ``abs(hash(text)) % 10**12``, the article's formula (an
      unsigned int, so Qdrant takes it; but ``hash()`` of a ``str`` is salted per process);
    - ``uuid5_ids``: :func:`gya_memory.semantic.memory.point_id` (uuid5 of user and text), what
      :class:`~gya_memory.semantic.memory.SemanticMemory` uses.

    Vectors are TF-IDF. Returns ``{"hash_ids": {"ids": [...], "count": n}, "uuid5_ids":
    {...}}``, ``count`` being the points in that collection after the write.
    """
    texts = list(texts)
    out = run_child(["store", str(folder), user_id, json.dumps(texts)],
                     env=child_env(hash_seed))
    if out.returncode != 0:
        raise RuntimeError(f"the child failed: {out.stderr.strip()[-800:]}")
    return last_json(out.stdout)


def _store_child(folder: str, user_id: str, texts_json: str) -> None:
    from qdrant_client import QdrantClient, models

    from gya_memory.semantic.values import point_id

    texts = json.loads(texts_json)
    embedder = TFIDFEmbedder()
    vectors = embedder.embed_documents(texts).tolist()
    schemes: dict[str, list[int | str]] = {
        "hash_ids": [abs(hash(t)) % 10**12 for t in texts],
        "uuid5_ids": [point_id(user_id, t) for t in texts],
    }
    result = {}
    client = QdrantClient(path=folder)
    try:
        for name, ids in schemes.items():
            if not client.collection_exists(name):
                client.create_collection(name, vectors_config=models.VectorParams(
                    size=embedder.dim, distance=models.Distance.COSINE))
            client.upsert(name, points=models.Batch(
                ids=ids, vectors=vectors,
                payloads=[{TEXT: t, USER_ID: user_id} for t in texts]), wait=True)
            result[name] = {"ids": ids, "count": client.count(name, exact=True).count}
    finally:
        client.close()
    sys.stdout.write(json.dumps(result) + "\n")


# -- Qdrant: a folder held open by another process ----------------------------------------
class HeldFolder:
    """A child process that opens the memory folder ``folder`` (Qdrant Edge,
    :class:`~gya_memory.semantic.stores.edge.EdgeStore`) and keeps it open, so its shards' write-ahead
    logs stay locked (as another kernel with an open
    :class:`~gya_memory.semantic.memory.SemanticMemory` would), until :meth:`release` (it closes
    the store and exits) or :meth:`kill` (``kill -9``: nothing is closed).

    >>> with HeldFolder("_data/08/qdrant") as other:       # doctest: +SKIP
    ...     SemanticMemory("_data/08/qdrant")              # raises StoreLocked
    """

    def __init__(self, folder: str | os.PathLike[str], *, timeout: float = 60) -> None:
        self.folder = str(folder)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "gya_memory.faults.failures", "hold", self.folder],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", env=child_env(),
        )
        assert self._proc.stdout is not None
        ready = self._proc.stdout.readline().strip()
        if ready != "ready":
            _, err = self._proc.communicate(timeout=timeout)
            raise RuntimeError(f"the child could not open {self.folder}: {err.strip()[-800:]}")
        self.stderr = ""

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def release(self, timeout: float = 60) -> int:
        """Ask the child to close its client and exit; returns its exit code (0)."""
        if self.alive:
            _, self.stderr = self._proc.communicate("close\n", timeout=timeout)
        return self._proc.wait()

    def kill(self, timeout: float = 60) -> int:
        """Kill the child without letting it close anything; returns its exit code (-9)."""
        if self.alive:
            self._proc.kill()
            _, self.stderr = self._proc.communicate(timeout=timeout)
        return self._proc.wait()

    def __enter__(self) -> HeldFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def _hold_child(folder: str) -> None:
    from gya_memory.semantic.stores.edge import EdgeStore

    store = EdgeStore(folder)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    if sys.stdin.readline().strip() == "close":
        store.close()


def _main(argv: Sequence[str]) -> int:
    command, *args = argv
    if command == "crash":
        path, mode, committed, uncommitted, cache = args
        crash_child(path, mode, int(committed), int(uncommitted), int(cache))
    elif command == "store":
        _store_child(*args)
    elif command == "hold":
        _hold_child(*args)
    else:
        raise SystemExit(f"unknown command {command!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
