"""Where semantic memories live: one small interface, two Qdrant back ends.

- :class:`EdgeStore`: **Qdrant Edge** (``qdrant-edge-py``), Qdrant's own engine (Rust) inside
  this process, on a folder. Each collection is one *shard*: segments with an HNSW index for
  the dense vectors, an inverted index for the sparse lexical vectors, a keyword payload index
  on ``user_id`` and a write-ahead log (WAL). A second process opening the folder fails on the
  WAL's lock and gets :class:`StoreLocked`.
- :class:`ClientStore`: ``qdrant-client`` against a Qdrant **server** (``QDRANT_URL``), or its
  pure-Python local mode (``":memory:"``), which speaks the same API as a server.

Both store, per point, a dense vector (``"dense"``), a sparse lexical vector (``"lexical"``,
IDF applied by the engine, see :mod:`gya_memory.semantic.sparse`) and a JSON payload, and both answer
dense, sparse and hybrid (prefetch + fusion, inside the engine) queries filtered to one user.

Collections are switched, never rewritten in place: :meth:`VectorStore.build` makes a new one
under a temporary name, :meth:`VectorStore.switch` checks its count and then moves the
collection's name to it in one atomic step (Edge: a small JSON file written with fsync +
``os.replace``; a server: a collection alias), and only then drops the old one. A process
killed at any point leaves the old or the new collection complete.
"""

from __future__ import annotations

from gya_memory.semantic.stores.client import ClientStore
from gya_memory.semantic.stores.common import (
    DENSE,
    FULL_SCAN_KB,
    HNSW_EF_CONSTRUCT,
    HNSW_M,
    HNSW_PAYLOAD_M,
    LEXICAL,
    POINTER_FILE,
    SCROLL_PAGE,
    SHARDS_DIR,
    CollectionSpec,
    Found,
    FusionSpec,
    PointData,
    StoreLocked,
    VectorStore,
    Where,
)
from gya_memory.semantic.stores.edge import EdgeStore
from gya_memory.semantic.stores.folders import open_folder, release_folder

__all__ = [
    "DENSE", "FULL_SCAN_KB", "HNSW_EF_CONSTRUCT", "HNSW_M", "HNSW_PAYLOAD_M", "LEXICAL",
    "POINTER_FILE", "SCROLL_PAGE", "SHARDS_DIR", "ClientStore", "CollectionSpec", "EdgeStore",
    "Found", "FusionSpec", "PointData", "StoreLocked", "VectorStore", "Where", "open_folder",
    "release_folder",
]
