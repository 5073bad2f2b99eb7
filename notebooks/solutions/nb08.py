"""Solutions to the exercises of notebook 08, failure paths."""

from __future__ import annotations

import sqlite3
import tempfile
import uuid
import warnings
from pathlib import Path


def exercise_08_1():
    """A database is intact only when integrity_check runs and says exactly 'ok'."""

    def is_intact(path) -> bool:
        try:
            conn = sqlite3.connect(path)
            try:
                rows = conn.execute("PRAGMA integrity_check").fetchall()
            finally:
                conn.close()
        except sqlite3.DatabaseError:  # "database disk image is malformed"
            return False
        return rows == [("ok",)]

    return is_intact


def exercise_08_2():
    """An id from the user and the text only: uuid5 is the same in every process."""

    def stable_id(user_id: str, text: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{user_id}\n{text}"))

    return stable_id


def exercise_08_3():
    """Journal off, 5 rows, 10-page cache: intact, because nothing was spilled yet."""
    from gya_memory.teaching import crash_mid_transaction

    with tempfile.TemporaryDirectory() as tmp:
        r = crash_mid_transaction(Path(tmp) / "exercise.sqlite3", journal=False, uncommitted=5)
    return (r.intact, "b")


def exercise_08_4():
    """recover() while the stand-in service is stopped (TF-IDF behind HTTP, no model)."""
    from gya_memory import SemanticMemory
    from gya_memory.semantic import EmbeddingUnavailable, OllamaEmbedder
    from gya_memory.teaching import FakeOllama

    with FakeOllama() as svc, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = SemanticMemory(":memory:", embedder=OllamaEmbedder(svc.url, model=svc.model,
                                                              timeout=5))
        m.store("用户叫张三")
        svc.stop()
        m.store("最近在戒咖啡，想少喝一点")  # falls back to TF-IDF, warns
        name = None
        try:
            m.recover()
        except EmbeddingUnavailable as exc:
            name = type(exc).__name__
        answer = (name, m.degraded, m.count())
        m.close()
    return answer
