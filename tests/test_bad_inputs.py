"""Issue 19, item 6: every bad input gets a clear error that names the argument (and the
path), none is silently accepted, and no secret of a URL reaches a message."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from gya_memory.base.checks import redact_url
from gya_memory.hermes.curated import CuratedMemory
from gya_memory.episodic.memory import EpisodicMemory
from gya_memory.procedural.memory import Procedure
from gya_memory.hermes.sessions import SessionStore
from gya_memory.episodic.sqlite import StoreFileError, UnsafeJournalWarning

SQLITE_STORES = [EpisodicMemory, SessionStore]
SECRET = "s3cr3t-XYZ"


@pytest.fixture
def tfidf_memory():  # type: ignore[no-untyped-def]
    from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
    from gya_memory.semantic.memory import SemanticMemory

    with SemanticMemory(":memory:", user_id="alice", embedder=TFIDFEmbedder()) as mem:
        mem.store("最近在戒咖啡，想少喝一点")
        yield mem


# -- SQLite paths: sqlite3 errors that did not name the path, files made by accident ---------
@pytest.mark.parametrize("store", SQLITE_STORES)
def test_a_sqlite_path_that_cannot_be_opened_is_named(tmp_path: Path, store: type) -> None:
    (tmp_path / "notes.txt").write_text("not a database " * 40, encoding="utf-8")
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    cases = {tmp_path: "is a folder", tmp_path / "notes.txt": "file is not a database",
             tmp_path / "afile" / "x.sqlite3": "is a file, not a folder"}
    for path, why in cases.items():
        with pytest.raises(StoreFileError, match=why) as caught:
            store(path, user_id="alice")  # before: sqlite3.OperationalError / DatabaseError
        assert str(path) in str(caught.value)


@pytest.mark.parametrize("store", SQLITE_STORES)
@pytest.mark.parametrize("bad", [123, "", "   ", b"x.sqlite3", 1.5])
def test_a_path_that_is_not_a_path_is_refused_and_creates_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: type, bad: object) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="path must"):
        store(bad, user_id="alice")  # before: a file named 123 (or "b'x.sqlite3'") here
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("store", SQLITE_STORES)
@pytest.mark.parametrize("bad", ["no", "false", 0, 1, "yes"])
def test_unsafe_no_journal_must_be_a_real_bool(tmp_path: Path, store: type, bad: object) -> None:
    with pytest.raises(ValueError, match="unsafe_no_journal must be True or False"):
        store(tmp_path / "x.sqlite3", unsafe_no_journal=bad)  # before: "no" turned it OFF


def test_the_unsafe_warning_says_where_the_switch_came_from(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_SQLITE_UNSAFE_NO_JOURNAL", raising=False)
    with pytest.warns(UnsafeJournalWarning, match="unsafe_no_journal=True was given") as caught:
        EpisodicMemory(tmp_path / "x.sqlite3", unsafe_no_journal=True).close()
    assert "MEMORY_SQLITE_UNSAFE_NO_JOURNAL" not in str(caught[0].message)  # before: blamed it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EpisodicMemory(tmp_path / "y.sqlite3", unsafe_no_journal=False).close()


# -- batches and counts -------------------------------------------------------------------
@pytest.mark.parametrize("bad", [None, 5, "rows"])
def test_add_many_of_something_that_is_not_rows(bad: object) -> None:
    with EpisodicMemory(":memory:") as mem, pytest.raises(ValueError, match="rows must be"):
        mem.add_many(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [None, 5, {"a": 1}])
def test_store_many_of_something_that_is_not_a_list(tfidf_memory, bad: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="items must be a list"):
        tfidf_memory.store_many(bad)  # before: 'NoneType' object is not iterable
    assert len(tfidf_memory.all()) == 1


@pytest.mark.parametrize("top_k", [10**30, 2**63, 10_001])
def test_a_huge_top_k_is_a_clear_error(tfidf_memory, top_k: int) -> None:  # type: ignore[no-untyped-def]
    for search in (tfidf_memory.candidates, tfidf_memory.retrieve, tfidf_memory.lexical):
        with pytest.raises(ValueError, match="top_k must be an int from 1 to 10,000"):
            search("咖啡", top_k=top_k)  # before: OverflowError from the engine
    assert tfidf_memory.candidates("咖啡", top_k=10_000)


@pytest.mark.parametrize("bad", ["", 123, b"q"])
def test_a_semantic_folder_that_is_not_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                bad: object) -> None:
    from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
    from gya_memory.semantic.memory import SemanticMemory

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="path must be a folder"):
        SemanticMemory(bad, embedder=TFIDFEmbedder())  # before: "" put the store in the cwd
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match="is a file"):
        SemanticMemory(tmp_path / "file", embedder=TFIDFEmbedder())


@pytest.mark.parametrize("bad", [123, "", b"x"])
def test_a_curated_folder_that_is_not_a_path(bad: object) -> None:
    with pytest.raises(ValueError, match="folder must be"):
        CuratedMemory(bad, user_id="alice")  # type: ignore[arg-type]


def test_procedure_steps_given_as_a_list_stay_frozen() -> None:
    steps = ["boil", "steep"]
    proc = Procedure("tea", "tea", steps=steps)  # type: ignore[arg-type]
    steps.append("send money")
    assert proc.steps == ("boil", "steep")


# -- URLs: secrets never reach a message --------------------------------------------------
@pytest.mark.parametrize("url, shown", [
    (f"http://me:pa/{SECRET}@host:8000/v1", "http://***@host:8000/v1"),
    (f"http://me:{SECRET}@host/v1", "http://***@host/v1"),
    (f"https://host/v1?api-key={SECRET}&model=m", "https://host/v1?api-key=***&model=m"),
    (f"https://host/v1?key={SECRET}", "https://host/v1?key=***"),
    (f"https://host/v1?x=1&access_token={SECRET}#f", "https://host/v1?x=1&access_token=***#f"),
    (f"https://host/v1?API_KEY={SECRET}", "https://host/v1?API_KEY=***"),
    ("https://host/v1?model=m", "https://host/v1?model=m"),
])
def test_redaction_covers_raw_slashes_and_key_like_parameters(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert redact_url(f"failed at {url} twice") == f"failed at {shown} twice"


@pytest.mark.parametrize("url", [f"http://me:pa/{SECRET}@127.0.0.1:9/v1",
                                 f"http://me:{SECRET[:4]}/x@127.0.0.1:9/v1?api-key={SECRET}"])
def test_an_invalid_chat_url_is_an_llm_error_without_the_secret(url: str) -> None:
    from gya_memory.answer.llm.interface import LLMError
    from gya_memory.answer.llm.openai import OpenAIChat

    chat = OpenAIChat(url, model="m", timeout=2)
    with pytest.raises(LLMError) as caught:
        chat.list_models()  # before: requests.InvalidURL quoting "me:pa" / part of it
    text = str(caught.value)
    assert SECRET not in text and SECRET[:4] not in text and "pa/" not in text
    assert "GYA_LLM_BASE_URL" in text and caught.value.__cause__ is None
    assert SECRET not in repr(chat)


def test_an_invalid_embedding_url_hides_the_secret() -> None:
    from gya_memory.semantic.embeddings.base import EmbeddingUnavailable
    from gya_memory.semantic.embeddings.http import OllamaEmbedder

    embedder = OllamaEmbedder(f"http://me:pa/{SECRET}@127.0.0.1:9", timeout=2)
    with pytest.raises(EmbeddingUnavailable) as caught:
        embedder.embed_query("咖啡")
    assert SECRET not in str(caught.value) and caught.value.__cause__ is None


@pytest.mark.parametrize("timeout", ["5", None, float("nan"), 0, -1])
def test_a_bad_chat_timeout_is_a_clear_error(timeout: object) -> None:
    from gya_memory.answer.llm.openai import OpenAIChat

    with pytest.raises(ValueError, match="timeout must be"):
        OpenAIChat("http://127.0.0.1:9/v1", timeout=timeout)  # type: ignore[arg-type]
