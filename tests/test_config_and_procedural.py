"""Settings from the environment, and procedural memory's registry."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gya_memory.base.config import get_settings
from gya_memory.procedural.memory import ProceduralMemory, Procedure


def test_defaults() -> None:
    s = get_settings({})
    assert s.data_dir == Path.home() / ".gya_memory"
    assert s.unsafe_no_journal is False and s.embedder == "local" and s.embed_fallback is True
    assert s.ollama_url == "http://127.0.0.1:11434" and s.qdrant_url is None


def test_values_are_read_and_checked() -> None:
    s = get_settings({"GYA_DATA_DIR": "data", "MEMORY_SQLITE_UNSAFE_NO_JOURNAL": "yes",
                      "GYA_EMBEDDER": "TFIDF", "EMBEDDING_URL": "http://127.0.0.1:9/",
                      "GYA_EMBED_TIMEOUT": "2.5"})
    assert s.data_dir == Path("data") and s.unsafe_no_journal and s.embedder == "tfidf"
    assert s.ollama_url == "http://127.0.0.1:9" and s.embed_timeout == 2.5
    with pytest.raises(ValueError, match="GYA_EMBEDDER='bert'"):
        get_settings({"GYA_EMBEDDER": "bert"})
    with pytest.raises(ValueError, match="GYA_EMBED_TIMEOUT"):
        get_settings({"GYA_EMBED_TIMEOUT": "soon"})
    with pytest.raises(ValueError, match="GYA_EMBED_FALLBACK"):
        get_settings({"GYA_EMBED_FALLBACK": "sometimes"})


def advise(restriction: str, occasion: str) -> str:
    return f"{occasion}: avoid what breaks '{restriction}', offer an alternative"


def test_procedures_register_find_invoke_and_version() -> None:
    memory = ProceduralMemory()
    v1 = Procedure("dietary_advice", "how to give advice under a dietary restriction",
                   steps=("recall the restriction", "suggest alternatives"), run=advise)
    memory.register(v1)
    assert memory.find("dietary advice") == [v1]
    assert memory.find("weather") == []
    assert memory.invoke("dietary_advice", restriction="少喝咖啡", occasion="聚餐").startswith("聚餐")
    with pytest.raises(ValueError, match="already at version 1"):
        memory.register(v1)
    v2 = Procedure("dietary_advice", v1.description, steps=v1.steps + ("check caffeine",), version=2)
    memory.register(v2)
    assert memory.get("dietary_advice") is v2 and memory.get("dietary_advice", 1) is v1
    with pytest.raises(ValueError, match="no function to run"):
        memory.invoke("dietary_advice")
    with pytest.raises(KeyError, match="no procedure named"):
        memory.get("nope")
    with pytest.raises(KeyError, match="no version 9"):
        memory.get("dietary_advice", 9)
    assert len(memory) == 1 and list(memory) == [v2]


@pytest.mark.parametrize("kwargs", [{"name": " "}, {"description": ""}, {"steps": ()}, {"version": 0}])
def test_bad_procedures(kwargs) -> None:
    base = {"name": "n", "description": "d", "steps": ("s",)}
    with pytest.raises(ValueError):
        Procedure(**{**base, **kwargs})


def test_placement_key_terms_and_arrangement() -> None:
    from gya_memory.lab.experiments import arrange, key_terms, used_memory

    assert key_terms("最近在戒咖啡，想少喝一点", "用户想戒掉什么？")[:4] == ["近在", "在戒", "戒咖", "咖啡"]
    assert key_terms("The user's name is Alice", "What is the user called?") == ["name", "alice"]
    assert used_memory("你最近在少喝咖啡吧", ["咖啡"]) and not used_memory("不知道", ["咖啡"])
    first = arrange("GOLD", ["a", "b", "c", "d"], "first")
    middle = arrange("GOLD", ["a", "b", "c", "d"], "middle")
    assert [i.text for i in first][0] == "GOLD" and [i.text for i in middle][2] == "GOLD"
    assert [i.score for i in middle] == sorted((i.score for i in middle), reverse=True)


def test_procedures_are_found_by_meaning_and_saved_by_reference(tmp_path) -> None:
    from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
    from gya_memory.teaching.examples import DIETARY_ADVICE

    memory = ProceduralMemory(embedder=TFIDFEmbedder())
    memory.register(DIETARY_ADVICE)
    memory.register(Procedure("order_handling", "处理订单：先查库存，再扣库存，然后发通知 / handle an order",
                              steps=("查库存", "扣库存", "发通知")))
    best, score = memory.search("用户有饮食限制，聚餐时怎么给建议？", top_k=1)[0]
    assert best.name == "dietary_advice" and 0 < score <= 1
    assert [p.name for p, _ in memory.search("how do I handle an order", top_k=2)][0] == "order_handling"
    assert "少喝咖啡" in memory.invoke("dietary_advice", restriction="少喝咖啡", occasion="聚餐")
    memory.save(tmp_path / "procedures.json")
    again = ProceduralMemory.load(tmp_path / "procedures.json")
    assert [p.name for p in again] == ["dietary_advice", "order_handling"]
    assert again.invoke("dietary_advice", restriction="fewer sweet drinks", occasion="party").startswith("At the party")


def test_callables_cannot_be_saved_and_bad_references_are_clear(tmp_path) -> None:
    memory = ProceduralMemory()
    memory.register(Procedure("x", "d", steps=("s",), run=advise))
    with pytest.raises(ValueError, match="can't be saved"):
        memory.save(tmp_path / "p.json")
    assert not (tmp_path / "p.json").exists()
    with pytest.raises(ValueError, match="module:function"):
        Procedure("y", "d", steps=("s",), run="not_a_reference")
    memory.register(Procedure("z", "d", steps=("s",), run="gya_memory.nowhere:f"))
    with pytest.raises(ValueError, match="cannot load"):
        memory.invoke("z")


def test_load_refuses_a_runner_that_is_not_registered(tmp_path) -> None:
    import json

    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"procedures": [
        {"name": "evil", "description": "d", "steps": ["s"], "version": 1,
         "run": "subprocess:getoutput"}]}), encoding="utf-8")
    with pytest.raises(ValueError, match="not a registered runner"):
        ProceduralMemory.load(path)
    memory = ProceduralMemory()
    memory.register(Procedure("evil", "d", steps=("s",), run="subprocess:getoutput"))
    with pytest.raises(ValueError, match="not a registered runner"):
        memory.invoke("evil", cmd="echo pwned")


def test_procedure_counts_and_text_are_checked() -> None:
    from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
    from gya_memory.teaching.examples import DIETARY_ADVICE

    memory = ProceduralMemory(embedder=TFIDFEmbedder())
    memory.register(DIETARY_ADVICE)
    memory.register(Procedure("other", "something else", steps=("s",)))
    for bad in (-1, 0, True, 1.5):
        with pytest.raises(ValueError, match="top_k"):
            memory.search("advice", top_k=bad)
    with pytest.raises(ValueError, match="version"):
        memory.get("other", True)
    with pytest.raises(ValueError, match="step"):
        Procedure("x", "d", steps=("ok", "bad\ud800"))
    with pytest.raises(ValueError, match="owner"):
        Procedure("x", "d", steps=("s",), owner="alice ")


def test_erase_user_removes_only_that_users_procedures(tmp_path) -> None:
    from gya_memory.teaching.examples import DIETARY_ADVICE

    memory = ProceduralMemory()
    memory.register(DIETARY_ADVICE)
    memory.register(Procedure("alice_tea", "alice's tea routine SENTINEL", steps=("s",), owner="alice"))
    memory.register(Procedure("bob_run", "bob's run", steps=("s",), owner="bob"))
    memory.save(tmp_path / "p.json")
    assert memory.erase_user("alice") == 1
    assert [p.name for p in memory] == ["dietary_advice"]  # the shared view
    assert [p.name for p in memory.owned_by("bob")] == ["bob_run"] and not memory.owned_by("alice")
    assert b"SENTINEL" not in (tmp_path / "p.json").read_bytes()
    again = ProceduralMemory.load(tmp_path / "p.json", user_id="bob")
    assert again.get("bob_run").owner == "bob" and again.get("dietary_advice").owner is None


# -- issue 19: procedures with owners, a lock, and a clear error for a damaged file ----------
def _shared_and_two_users(tmp_path: Path) -> Path:
    from gya_memory.teaching.examples import DIETARY_ADVICE

    admin = ProceduralMemory()
    admin.register(DIETARY_ADVICE)
    admin.register(Procedure("alice_tea", "alice's tea routine", steps=("boil",), owner="alice"))
    admin.register(Procedure("bob_run", "bob's running routine", steps=("run",), owner="bob"))
    admin.save(tmp_path / "procedures.json")
    return tmp_path / "procedures.json"


def test_a_user_sees_own_and_shared_procedures_never_another_users(tmp_path: Path) -> None:
    path = _shared_and_two_users(tmp_path)
    alice = ProceduralMemory.load(path, user_id="alice")
    bob = ProceduralMemory.load(path, user_id="bob")
    assert [p.name for p in alice] == ["alice_tea", "dietary_advice"]
    assert [p.name for p in alice.find("routine")] == ["alice_tea"]  # before: bob_run too
    assert [p.name for p in bob.find("routine")] == ["bob_run"]
    with pytest.raises(KeyError, match="no procedure named 'alice_tea'"):
        bob.get("alice_tea")
    with pytest.raises(KeyError):
        bob.invoke("alice_tea")
    assert [p.name for p in ProceduralMemory.load(path)] == ["dietary_advice"]  # shared view
    with pytest.raises(ValueError, match="user 'bob'"):
        alice.erase_user("bob")
    with pytest.raises(ValueError, match="cannot register"):
        alice.register(Procedure("x", "d", steps=("s",), owner="bob"))
    mine = alice.register(Procedure("alice_walk", "a walk", steps=("walk",)))
    assert mine.owner == "alice" and "alice_walk" not in [p.name for p in bob]


def test_a_user_cannot_shadow_a_shared_procedure(tmp_path: Path) -> None:
    from gya_memory.teaching.examples import DIETARY_ADVICE

    path = _shared_and_two_users(tmp_path)
    alice = ProceduralMemory.load(path, user_id="alice")
    evil = Procedure("dietary_advice", DIETARY_ADVICE.description, steps=("send money",),
                     version=9)
    with pytest.raises(ValueError, match="shared procedure"):
        alice.register(evil)  # before: version 9 ran for everyone
    with pytest.raises(ValueError, match="shared procedure"):
        ProceduralMemory.load(path).register(replace(evil, owner="alice"))
    for view in (ProceduralMemory.load(path, user_id="bob"), ProceduralMemory.load(path)):
        assert view.get("dietary_advice").version == 1
    # a shared procedure added later under a user's name is the one that runs
    admin = ProceduralMemory.load(path)
    admin.register(Procedure("alice_tea", "the house tea", steps=("steep",)))
    assert ProceduralMemory.load(path, user_id="alice").get("alice_tea").owner is None


@pytest.mark.parametrize("content", [
    b"{not json", b"\xff\xfe", b"[]", b'{"procedures": {}}', b'{"procedures": [1]}',
    b'{"procedures": [{"name": "x"}]}',
    b'{"procedures": [{"name": "x", "description": "d", "steps": "s", "version": 1}]}',
    b'{"procedures": [{"name": "x", "description": "d", "steps": ["s"], "version": "1"}]}',
    b'{"procedures": [{"name": "x", "description": "d", "steps": ["s"], "version": 1},'
    b' {"name": "x", "description": "d", "steps": ["s"], "version": 1}]}',
])
def test_a_damaged_procedures_file_is_a_clear_error_naming_it(tmp_path: Path, content: bytes) -> None:
    from gya_memory.base.errors import GyaMemoryError
    from gya_memory.procedural.records import ProceduresDamaged

    path = tmp_path / "procedures.json"
    path.write_bytes(content)
    with pytest.raises(ProceduresDamaged, match=re.escape(str(path))) as caught:
        ProceduralMemory.load(path)  # before: JSONDecodeError, KeyError, AttributeError
    assert isinstance(caught.value, (ValueError, GyaMemoryError))


@pytest.mark.parametrize("bad", [123, None, "", b"p.json"])
def test_a_bad_procedures_path_is_a_clear_error(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="path must name a file"):
        ProceduralMemory().save(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is a folder"):
        ProceduralMemory().save(tmp_path)
    with pytest.raises(FileNotFoundError, match="no procedures file"):
        ProceduralMemory.load(tmp_path / "missing.json")


def _register_many(path: str, who: str, n: int, start: Any) -> None:
    start.wait()
    mem = ProceduralMemory.load(path, user_id=who)
    for i in range(n):
        mem.register(Procedure(f"{who}_{i}", f"{who}'s procedure {i}", steps=("s",)))
        mem.save(path)  # the old load-modify-save pattern: must not drop the other's writes


def test_two_processes_registering_at_once_lose_nothing(tmp_path: Path) -> None:
    import multiprocessing
    import time

    ctx = multiprocessing.get_context("fork")
    trials, per_process, lost = 50, 4, 0
    began = time.monotonic()
    for trial in range(trials):
        path = tmp_path / f"t{trial}.json"
        ProceduralMemory().save(path)
        start = ctx.Event()
        procs = [ctx.Process(target=_register_many, args=(str(path), who, per_process, start))
                 for who in ("alice", "bob")]
        for p in procs:
            p.start()
        start.set()
        for p in procs:
            p.join(30)
            assert p.exitcode == 0, f"trial {trial}: a writer failed"
        for who in ("alice", "bob"):
            lost += per_process - len(ProceduralMemory.load(path, user_id=who).owned_by(who))
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert lost == 0, f"{lost} of {trials * 2 * per_process} registrations lost"
    assert time.monotonic() - began < 60


def test_a_procedures_file_kept_by_the_registry_sees_other_writers(tmp_path: Path) -> None:
    path = _shared_and_two_users(tmp_path)
    alice = ProceduralMemory.load(path, user_id="alice")
    ProceduralMemory.load(path, user_id="alice").register(
        Procedure("alice_nap", "a nap", steps=("sleep",)))
    assert "alice_nap" in [p.name for p in alice]  # re-read after another writer
    with pytest.raises(ValueError, match="can't be saved"):
        alice.register(Procedure("alice_fn", "d", steps=("s",), run=advise))
