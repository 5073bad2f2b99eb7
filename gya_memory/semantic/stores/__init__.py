"""Where semantic memories live: one small interface, two Qdrant back ends.

- :class:`~gya_memory.semantic.stores.edge.EdgeStore`: **Qdrant Edge** (``qdrant-edge-py``), Qdrant's own engine (Rust) inside
  this process, on a folder. Each collection is one *shard*: segments with an HNSW index for
  the dense vectors, an inverted index for the sparse lexical vectors, a keyword payload index
  on ``user_id`` and a write-ahead log (WAL). A second process opening the folder fails on the
  WAL's lock and gets :class:`~gya_memory.semantic.stores.common.StoreLocked`.
- :class:`~gya_memory.semantic.stores.client.ClientStore`: ``qdrant-client`` against a Qdrant **server** (``QDRANT_URL``), or its
  pure-Python local mode (``":memory:"``), which speaks the same API as a server.

Both store, per point, a dense vector (``"dense"``), a sparse lexical vector (``"lexical"``,
IDF applied by the engine, see :mod:`gya_memory.semantic.sparse`) and a JSON payload, and both answer
dense, sparse and hybrid (prefetch + fusion, inside the engine) queries filtered to one user.

Collections are switched, never rewritten in place: :meth:`~gya_memory.semantic.stores.common.VectorStore.build` makes a new one
under a temporary name, :meth:`~gya_memory.semantic.stores.common.VectorStore.switch` checks its count and then moves the
collection's name to it in one atomic step (Edge: a small JSON file written with fsync +
``os.replace``; a server: a collection alias), and only then drops the old one. A process
killed at any point leaves the old or the new collection complete.

Modules: ``common`` (the interface, :class:`~gya_memory.semantic.stores.common.VectorStore`,
and its records), ``edge`` and ``edge_types`` (Qdrant Edge), ``client`` (qdrant-client),
``folders`` (one Edge store per folder and process). Import each name from the module that
defines it (``tests/test_layers.py``); this file re-exports nothing.
"""
