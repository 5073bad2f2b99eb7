"""The values of semantic memory (a :class:`Hit`, a :class:`Memory`, its errors) and the
checks on what goes in: ids, texts, metadata, counts. :mod:`gya_memory.semantic.memory` holds the
memory itself.
"""

from __future__ import annotations

import json
import math
import os
import re
import unicodedata
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gya_memory.base.checks import is_int, is_number
from gya_memory.base.checks import check_text as _check_text
from gya_memory.base.checks import check_user_id
from gya_memory.base.checks import MAX_ID_CHARS
from gya_memory.base.config import data_path
from gya_memory.base.errors import GyaMemoryError
from gya_memory.hermes.injection import check_allow, check_for_store
from gya_memory.base.payload import RESERVED_KEYS
from gya_memory.semantic.stores.common import VectorStore

if TYPE_CHECKING:  # numpy is imported when a memory is opened
    import numpy as np

    from gya_memory.semantic.embeddings.base import Embedder, Fingerprint


MAX_TEXT_CHARS = 2000
DEFAULT_DIR_NAME = "qdrant"
# Fixed namespace of the point ids: the same (user, text) gives the same id everywhere.
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://gya-memory/semantic/point-id/v1")
COLLECTION_RE = re.compile(r"[A-Za-z0-9_-]{1,100}")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class EmbedderMismatch(ValueError, GyaMemoryError):
    """A collection was built by one embedding model and is being opened with another."""

    def __init__(self, collection: str, stored: Fingerprint, wanted: Fingerprint) -> None:
        self.collection, self.stored, self.wanted = collection, stored, wanted
        super().__init__(
            f"collection {collection!r} holds vectors of {_describe(stored)}, but this "
            f"memory's embedder is {_describe(wanted)}; vectors of two models can't be "
            "compared. Open it with the embedder it was built with, or re-embed every "
            "memory with the new one: SemanticMemory(..., embedder=new, reembed=True), or "
            "memory.reembed(new) on an open memory."
        )


class DegradedWarning(RuntimeWarning, GyaMemoryError):
    """⚠️ The embedding service failed; the memory runs on the TF-IDF fallback."""


@dataclass(frozen=True)
class Hit:
    """One recalled memory. ``score``: cosine similarity for ``dense``, BM25 for
    ``lexical``, the fused score for ``hybrid``; higher is better in each."""

    id: str
    score: float
    text: str
    payload: dict[str, Any] = field(hash=False)
    degraded: bool = False
    source: str = "dense"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Memory:
    """One stored memory, as :meth:`SemanticMemory.all` lists it."""

    id: str
    text: str
    payload: dict[str, Any] = field(hash=False)


# -- ids and checks ------------------------------------------------------------------------
def normalise(text: str) -> str:
    """The form a memory's id is computed from: NFKC, trimmed, runs of spaces made one."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _check_chars(name: str, value: str) -> str:
    if "\x00" in value:
        raise ValueError(f"{name} contains a NUL character (\\x00); remove it")
    for i, ch in enumerate(value):
        if 0xD800 <= ord(ch) <= 0xDFFF:
            raise ValueError(f"{name} contains a lone surrogate (U+{ord(ch):04X} at character "
                             f"{i}), which is not valid Unicode text; decode the input "
                             "properly")
    return value


def check_memory_text(name: str, value: object) -> str:
    return _check_chars(name, _check_text(name, value, MAX_TEXT_CHARS))


def check_memory_user_id(user_id: object) -> str:
    """A user id as given (never stripped): the shared rule, ``checks.check_user_id``."""
    return _check_chars("user_id", check_user_id(user_id, limit=MAX_ID_CHARS))


def point_id(user_id: str, text: str) -> str:
    """The point id of ``text`` for ``user_id``: the same in every process and on every run.

    >>> point_id("u1", "用户叫张三") == point_id("u1", "  用户叫张三 ")
    True
    >>> point_id("u1", "用户叫张三") == point_id("u2", "用户叫张三")
    False
    """
    user_id = check_memory_user_id(user_id)
    text = check_memory_text("text", text)
    return str(uuid.uuid5(ID_NAMESPACE, f"{user_id}\x1f{normalise(text)}"))


def default_path() -> Path:
    """Where the memories live when neither a path nor a server is given."""
    return data_path(DEFAULT_DIR_NAME)


def _check_json_strings(name: str, value: Any) -> None:
    if isinstance(value, str):
        _check_chars(name, value)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_json_strings(f"{name}[{i}]", item)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_json_strings(f"{name}[{key!r}]", str(key))
            _check_json_strings(f"{name}[{key!r}]", item)


def _check_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    clash = sorted(RESERVED_KEYS & set(metadata))
    if clash:
        raise ValueError(f"metadata may not use the reserved key(s) {', '.join(clash)}")
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"metadata keys must be non-empty strings, got {key!r}")
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise ValueError(
                f"metadata {key}={value!r} is not JSON (use str, int, float, bool, None, "
                "lists and dicts of them)"
            ) from None
        _check_chars(f"metadata key {key!r}", key)
        _check_json_strings(f"metadata[{key!r}]", value)
    return dict(metadata)


def check_folder(path: object) -> Path:
    """The store's folder: a ``str`` or ``Path`` that is not empty (``""`` would put the
    store's files in the working folder, ``123`` a folder named ``123``)."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise ValueError(f"path must be a folder (a non-empty str or Path) or ':memory:', got "
                         f"{type(path).__name__}: {path!r:.80}")
    folder = Path(path).expanduser()
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} is a file; the semantic memory needs a folder there")
    return folder


MAX_TOP_K = 10_000
"""The most hits one search may ask for (the engine overflows on a huge ``top_k``)."""


def check_top_k(top_k: object) -> int:
    if not is_int(top_k, low=1, high=MAX_TOP_K):
        raise ValueError(f"top_k must be an int from 1 to {MAX_TOP_K:,}, got {top_k!r:.80}")
    return top_k


def check_items(items: object, user_id: str, *, allow_instructions: object = False,
                 store: str = "semantic memory") -> dict[str, tuple[str, dict[str, Any]]]:
    """``store_many``'s items, every one checked before anything is written: point id ->
    (text, metadata), a text given twice kept once (the last one). A text (or a string
    metadata value) that reads like an instruction to the model raises
    :class:`~gya_memory.hermes.injection.InstructionRefused` unless ``allow_instructions``."""
    allow = check_allow(allow_instructions)
    if isinstance(items, (str, bytes)):
        raise ValueError("store_many() takes a list of texts; for one text use store()")
    if not isinstance(items, Iterable) or isinstance(items, Mapping):
        raise ValueError("items must be a list of texts or (text, metadata) pairs, got "
                         f"{type(items).__name__}: {items!r:.80}")
    checked: dict[str, tuple[str, dict[str, Any]]] = {}
    for i, item in enumerate(items):
        try:
            if isinstance(item, str):
                text, metadata = item, {}
            elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Mapping):
                text, metadata = item
            else:
                raise ValueError("expected a string (or a (text, metadata) pair), got "
                                 f"{type(item).__name__}: {item!r:.80}")
            text = check_memory_text("text", text)
            metadata = _check_metadata(metadata)
        except ValueError as exc:
            raise ValueError(f"texts[{i}]: {exc}") from None
        check_for_store(store, [(f"texts[{i}]", text)]
                        + [(f"texts[{i}] metadata[{k!r}]", v) for k, v in metadata.items()
                           if isinstance(v, str)], allow_instructions=allow)
        checked.pop(pid := point_id(user_id, text), None)
        checked[pid] = (text, metadata)
    return checked


def check_batch_size(batch_size: object) -> int:
    if not is_int(batch_size, low=1):
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    return batch_size


def check_min_score(min_score: object) -> float | None:
    if min_score is None:
        return None
    if not is_number(min_score):
        raise ValueError(f"min_score must be a number or None, got {min_score!r}")
    if not math.isfinite(min_score):
        raise ValueError(f"min_score must be a finite number, got {min_score!r}")
    return float(min_score)


def _describe(fp: Fingerprint) -> str:
    return f"{fp.model} ({fp.dim} dimensions, {fp.distance})"


def close_store(store: VectorStore) -> None:
    store.close()


def as_matrix(vectors: Any, n: int, embedder: Embedder) -> np.ndarray:
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.shape != (n, embedder.dim) or not np.isfinite(matrix).all():
        raise ValueError(
            f"embedder {embedder.name!r} returned an array of shape {matrix.shape} (or with "
            f"NaN/inf); expected ({n}, {embedder.dim}) finite numbers"
        )
    return matrix
