"""One :class:`~gya_memory.semantic.stores.edge.EdgeStore` per folder and process, shared by every memory
that opens the folder.
"""

from __future__ import annotations

import os

from gya_memory.semantic.stores.edge import EdgeStore


# -- one Edge store per folder and process -------------------------------------------------
_open_folders: dict[str, tuple[EdgeStore, int]] = {}


def open_folder(folder: str | os.PathLike[str]) -> tuple[EdgeStore, str]:
    """The :class:`EdgeStore` on ``folder``, shared by every memory of this process that
    opens it; returns it and the key to give :func:`release_folder`."""
    key = os.path.realpath(folder)
    if key in _open_folders:
        store, users = _open_folders[key]
        _open_folders[key] = (store, users + 1)
        return store, key
    store = EdgeStore(folder)
    _open_folders[key] = (store, 1)
    return store, key


def release_folder(key: str) -> None:
    """One user of the folder's store is done; the last one closes it."""
    store, users = _open_folders.get(key, (None, 0))
    if store is None:
        return
    if users > 1:
        _open_folders[key] = (store, users - 1)
    else:
        del _open_folders[key]
        store.close()
