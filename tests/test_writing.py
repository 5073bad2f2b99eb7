"""The write path (gya_memory.answer.writing, gya_memory.answer.dates): relative dates by rule, the
extraction prompt, the tolerant parser (every way a small model breaks its JSON), and the
add / update / skip decisions against a real Qdrant store with the real e5 embedder. The
model's replies are scripted here so every branch runs; the real model is measured by
benchmarks/bench_writing.py."""

from __future__ import annotations

import signal
import subprocess
import textwrap
import time
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from gya_memory.answer.dates import resolve
from gya_memory.semantic.embeddings.local import LocalE5Embedder
from gya_memory.answer.llm.interface import Reply
from gya_memory.semantic.memory import SemanticMemory
from gya_memory.answer.extraction import Proposal, extraction_messages, parse_proposals
from gya_memory.answer.extraction import check_messages
from gya_memory.answer.writing import WriteReport, decide, history_of, remember
from gya_memory.lab.writing_levers import by_model, by_rule, compare_messages, pick, pick_messages, screen
from tests.conftest import PYTHON, child_env

MONDAY = date(2026, 3, 2)
SESSION = [
    {"role": "user", "content": "我最近在戒咖啡，下周三要去深圳出差。"},
    {"role": "assistant", "content": "出差时可以带点花草茶。"},
    {"role": "user", "content": "好主意。我妹妹小雨在杭州读研。"},
]


# -- dates ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("下周三要去深圳", "下周三（2026-03-11）要去深圳"),
    ("这周五交报告", "这周五（2026-03-06）交报告"),
    ("明天体检，后天复查", "明天（2026-03-03）体检，后天（2026-03-04）复查"),
    ("三个月后复查", "三个月后（2026-06-02）复查"),
    ("下个月16号过生日", "下个月16号（2026-04-16）过生日"),
    ("next Wednesday", "next Wednesday (2026-03-11)"),
    ("Thursday next week", "Thursday next week (2026-03-12)"),
    ("in two weeks", "in two weeks (2026-03-16)"),
    ("last month", "last month (2026-02)"),
    ("no date here", "no date here"),
])
def test_relative_dates_are_resolved_against_the_session_date(text: str, expected: str) -> None:
    assert resolve(text, MONDAY) == expected


def test_a_month_later_on_the_31st_is_the_last_day_of_that_month() -> None:
    assert resolve("一个月后", date(2026, 1, 31)) == "一个月后（2026-02-28）"


# -- the prompt -----------------------------------------------------------------------------
def test_the_prompt_shows_only_the_users_turns_numbered_with_dates_resolved() -> None:
    messages = extraction_messages(SESSION, "2026-03-02T20:00:00")
    assert messages[0]["content"].startswith("你读用户")  # the user spoke Chinese
    assert messages[1]["role"] == "user" and messages[2]["role"] == "assistant"  # the worked example
    user = messages[-1]["content"]
    assert "[0] 我最近在戒咖啡，下周三（2026-03-11）要去深圳出差。" in user
    assert "[2] 好主意。我妹妹小雨在杭州读研。" in user
    assert "花草茶" not in user  # the assistant's words are not facts about the user
    english = extraction_messages([{"role": "user", "content": "I moved to Leeds."}], MONDAY)
    assert english[0]["content"].startswith("You read")


@pytest.mark.parametrize("zh", [True, False])
def test_every_worked_example_parses_whole_and_the_lab_one_has_two_facts_in_a_turn(zh, monkeypatch) -> None:
    """The examples the model copies must pass the parser they teach (every fact kept), and
    the lab's two-facts-a-turn example (issue 18, session 29) swaps in for both languages."""
    from gya_memory.answer import extraction
    from gya_memory.lab import writing_levers

    def parsed(example):
        shown, written = example
        turns = [line.split("] ", 1) for line in shown.splitlines() if line.startswith("[")]
        messages = []
        for number, text in turns:
            while len(messages) < int(number[1:]):
                messages.append({"role": "assistant", "content": "……" if zh else "OK."})
            messages.append({"role": "user", "content": text})
        return parse_proposals(written, messages)

    shipped = extraction.EXAMPLE_ZH if zh else extraction.EXAMPLE
    lab = writing_levers.EXAMPLE_TWO_PER_TURN_ZH if zh else writing_levers.EXAMPLE_TWO_PER_TURN
    for example, facts in ((shipped, 3), (lab, 5)):
        proposals, dropped = parsed(example)
        assert (len(proposals), dropped) == (facts, [])
    assert sorted(p.turn for p in parsed(lab)[0]) == [0, 2, 2, 4, 4]
    monkeypatch.setattr(extraction, "EXAMPLE", extraction.EXAMPLE)
    monkeypatch.setattr(extraction, "EXAMPLE_ZH", extraction.EXAMPLE_ZH)
    writing_levers.use_example_two_per_turn()
    session = SESSION if zh else [{"role": "user", "content": "I moved to Leeds."}]
    assert extraction_messages(session, MONDAY)[2]["content"] == lab[1]


@pytest.mark.parametrize(("messages", "match"), [
    ("hello", "list of"),
    ([{"role": "user"}], r"messages\[0\]"),
    ([{"role": "system", "content": "x"}], r"messages\[0\]"),
    ([{"role": "assistant", "content": "hi"}], "no user turn"),
])
def test_bad_messages_are_refused_clearly(messages: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_messages(messages)


@pytest.mark.parametrize("when", ["yesterday", 20260302, None])
def test_a_bad_date_is_refused_clearly(when: Any) -> None:
    with pytest.raises(ValueError, match="when must be"):
        extraction_messages(SESSION, when)


# -- the parser -----------------------------------------------------------------------------
def test_clean_json_lines_are_read() -> None:
    text = ('{"fact": "在戒咖啡", "about": "user", "turn": 0}\n'
            '{"fact": "妹妹小雨在杭州读研", "about": "妹妹小雨", "turn": 2}')
    proposals, dropped = parse_proposals(text, SESSION)
    assert proposals == [Proposal("在戒咖啡", "user", 0), Proposal("妹妹小雨在杭州读研", "妹妹", 2)]
    # "user" from the model gives way to a relation the fact opens with
    proposals, _ = parse_proposals('{"fact": "妹妹小雨在杭州读研", "about": "user", "turn": 2}', SESSION)
    assert proposals[0].about != "user"
    assert dropped == []


def test_broken_json_is_read_field_by_field_and_the_rest_is_dropped_with_a_reason() -> None:
    text = textwrap.dedent("""\
        Here are the facts:
        [{'fact': '在戒咖啡', 'about': 'user', 'turn': 0},
         {"fact": "妹妹小雨在杭州读研", "about": "妹妹小雨", "turn": "2",}
         {"about": "user", "turn": 0}
         {"fact": "Quitting coffee", "turn": 0}
         {"fact": "在戒咖啡", "turn": 0}
         {"fact": "下周三（2026-03-11）去深圳出差", "turn": 0
        """)
    proposals, dropped = parse_proposals(text, SESSION)
    assert [p.text for p in proposals] == ["在戒咖啡", "妹妹小雨在杭州读研"]
    assert sorted(why for _, why in dropped) == [
        "no fact", "not in the user's language (zh)", "repeated in the same reply", "unfinished object"]


def test_a_wrong_turn_number_is_replaced_by_the_user_turn_the_fact_comes_from() -> None:
    proposals, _ = parse_proposals('{"fact": "妹妹小雨在杭州读研", "turn": 7}', SESSION)
    assert proposals[0].turn == 2
    proposals, _ = parse_proposals('{"fact": "在戒咖啡", "turn": 1}', SESSION)  # 1 is the assistant's
    assert proposals[0].turn == 0


def test_none_and_prose_give_no_proposals() -> None:
    assert parse_proposals("none", SESSION) == ([], [])
    assert parse_proposals("I could not find any facts.", SESSION) == ([], [])


def test_an_overlong_fact_is_dropped() -> None:
    proposals, dropped = parse_proposals('{"fact": "%s", "turn": 0}' % ("咖啡" * 150), SESSION)
    assert proposals == [] and dropped[0][1] == "fact over 200 characters"


# -- decisions, against a real store --------------------------------------------------------
class Comparing:
    """A scripted chat model: ``chat`` returns ``reply``; ``next_token_probs`` answers the
    same/replaces/new comparison with ``verdict``, the listwise pick with ``letter`` ("n":
    none) and the second look with P(yes) ``worth``."""

    gives_probabilities = True

    def __init__(self, reply: str = "none", verdict: str = "new", letter: str = "a",
                 worth: float = 0.9) -> None:
        self.reply, self.verdict, self.letter, self.worth = reply, verdict, letter, worth
        self.compared: list[str] = []
        self.picked: list[str] = []

    def chat(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> Reply:
        return Reply(self.reply, "scripted", 10, 10, [], "stop")

    def next_token_probs(self, messages: Sequence[Mapping[str, Any]], *, top: int = 10) -> dict[str, float]:
        said = messages[-1]["content"]
        if said.startswith("New:"):
            self.picked.append(said)
            return {self.letter: 0.8, "x": 0.2}
        if said.startswith("Note:"):
            return {"yes": self.worth, "no": 1 - self.worth}
        self.compared.append(said)
        return {self.verdict[:3]: 0.9, "x": 0.1}


@pytest.fixture(scope="module")
def e5() -> LocalE5Embedder:
    return LocalE5Embedder()


@pytest.fixture
def memory(e5: LocalE5Embedder, tmp_path: Path) -> SemanticMemory:
    m = SemanticMemory(tmp_path / "q", user_id="w", embedder=e5)
    m.store("每天喝三杯咖啡", about="user")
    m.store("妹妹小雨在杭州读研", about="user's sister")
    return m


def test_a_word_for_word_repeat_is_skipped_without_asking_the_model(memory: SemanticMemory) -> None:
    llm = Comparing(verdict="new")
    d = decide(Proposal("每天喝三杯咖啡", "user", 0), memory, llm)
    assert (d.action, d.reason) == ("skip", "already stored word for word") and llm.compared == []


@pytest.mark.parametrize(("verdict", "action"), [("same", "skip"), ("replaces", "update"), ("new", "add")])
def test_the_models_comparison_decides(memory: SemanticMemory, verdict: str, action: str) -> None:
    d = decide(Proposal("最近在戒咖啡", "user", 0), memory, Comparing(verdict=verdict), compare_min=0.5,
               how=by_model("first"))
    assert d.action == action
    assert d.compared[0][0] == "每天喝三杯咖啡"  # what it was compared with is kept
    if action == "update":
        assert d.replaced == "每天喝三杯咖啡"


def test_by_default_the_model_never_replaces_a_memory(memory: SemanticMemory) -> None:
    """Updates are off (writing.HOW): on the tuning split every update the 1.5B model made
    replaced the wrong memory. A close new fact is added beside the old one, unasked."""
    llm = Comparing('{"fact": "最近在戒咖啡", "about": "user", "turn": 0}', verdict="replaces")
    d = decide(Proposal("最近在戒咖啡", "user", 0), memory, llm, compare_min=0.5)
    assert (d.action, d.replaced) == ("add", None) and "updates are off" in d.reason
    assert llm.compared == [] and llm.picked == []
    report = remember(memory, llm, SESSION, session_id="s2", when=MONDAY)
    assert report.counts().get("update", 0) == 0
    assert {"每天喝三杯咖啡", "最近在戒咖啡"} <= {m.text for m in memory.all()}
    assert history_of(memory).all() == []


def test_an_unknown_way_to_decide_is_refused_before_anything_is_written(memory: SemanticMemory) -> None:
    llm = Comparing('{"fact": "最近在戒咖啡", "about": "user", "turn": 0}')
    before = sorted(m.text for m in memory.all())
    for call in (lambda: decide(Proposal("最近在戒咖啡", "user", 0), memory, llm, how="maybe"),  # type: ignore[arg-type]
                 lambda: remember(memory, llm, SESSION, session_id="s2", when=MONDAY, how="maybe")):  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="how must be one of off or a model's way"):
            call()
    assert sorted(m.text for m in memory.all()) == before
    with pytest.raises(ValueError, match="way must be one of first, best, pick, yesno, same"):
        by_model("maybe")


def test_same_asks_only_where_the_restatement_rule_would_look(e5: LocalE5Embedder, tmp_path: Path) -> None:
    """``by_model("same")`` (session 33, kept off): "the same?" for an earlier session's
    memory, never for a fact with a sign of change or a new number, and never an update."""
    memory = SemanticMemory(tmp_path / "q", user_id="w", embedder=e5)
    memory.store("每天喝三杯咖啡", about="user", session_id="s1")
    same = by_model("same")

    def decided(text: str, session: str, verdict: str) -> tuple[str, list[str]]:
        llm = Comparing(verdict=verdict)
        d = decide(Proposal(text, "user", 0), memory, llm, compare_min=0.5, how=same,
                   session_id=session, restate_min=9.0)
        return d.action, llm.compared

    action, asked = decided("每天三杯咖啡，雷打不动", "s2", "yes")
    assert action == "skip" and asked == ["Old: 每天喝三杯咖啡 New: 每天三杯咖啡，雷打不动 ->"]
    assert decided("每天三杯咖啡，雷打不动", "s2", "no")[0] == "add"
    for text, session in (("每天三杯咖啡，雷打不动", "s1"),   # the same session
                          ("现在每天只喝一杯咖啡", "s2"),      # a sign of change
                          ("每天喝3杯咖啡，加2份奶", "s2")):   # a number the memory lacks
        assert decided(text, session, "yes") == ("add", []), text


def test_a_fact_about_someone_else_is_never_the_same_as_the_users(memory: SemanticMemory) -> None:
    llm = Comparing(verdict="same")
    d = decide(Proposal("在杭州读研", "user", 0), memory, llm, compare_min=0.5, how=by_model("first"))
    assert "妹妹小雨在杭州读研" not in " ".join(llm.compared)
    assert d.action in ("add", "skip")


@pytest.mark.parametrize(("letter", "action", "replaced"), [
    ("a", "update", "每天喝三杯咖啡"), ("n", "add", None)])
def test_the_listwise_pick_chooses_which_memory_is_compared(
        memory: SemanticMemory, letter: str, action: str, replaced: str | None) -> None:
    memory.store("每周三晚上练瑜伽", about="user")
    llm = Comparing(verdict="replaces", letter=letter)
    d = decide(Proposal("最近在戒咖啡", "user", 0), memory, llm, compare_min=0.5, how=by_model("pick"))
    assert (d.action, d.replaced) == (action, replaced)
    shown = llm.picked[0]
    assert shown.startswith("New: 最近在戒咖啡\nA. 每天喝三杯咖啡") and "妹妹" not in shown
    assert len(llm.compared) == (1 if letter == "a" else 0)  # only the picked one is compared


def test_the_pick_prompt_letters_the_stored_notes_and_reads_letters_or_none() -> None:
    assert pick_messages("搬到了上海", ["住在杭州", "每周三练瑜伽"])[-1]["content"] == (
        "New: 搬到了上海\nA. 住在杭州\nB. 每周三练瑜伽\n->")
    with pytest.raises(ValueError, match="stored"):
        pick_messages("x", [])

    class Letters:
        def next_token_probs(self, messages: Any, *, top: int = 10) -> dict[str, float]:
            return {"b": 0.3, "n": 0.1, "c": 0.5, "the": 0.1}  # "c": not a letter shown

    assert pick(Letters(), "搬到了上海", ["住在杭州", "每周三练瑜伽"]) == {"a": 0.0, "b": 0.75, "none": 0.25}


def test_the_second_look_drops_what_is_not_worth_keeping_and_says_why() -> None:
    proposals = [Proposal("对青霉素过敏", "user", 0), Proposal("觉得气泡水不错", "user", 2)]
    kept, dropped = screen(Comparing(worth=0.2), proposals, minimum=0.5)
    assert kept == [] and dropped[0] == ("对青霉素过敏", "not worth keeping (P(yes) 0.20)")
    kept, dropped = screen(Comparing(worth=0.8), proposals, minimum=0.5)
    assert kept == proposals and dropped == []
    assert screen(Comparing(worth=0.0), proposals, minimum=0.0) == (proposals, [])  # off


def test_a_report_reads_as_a_table_of_decisions(memory: SemanticMemory) -> None:
    llm = Comparing('{"fact": "最近在戒咖啡", "turn": 0}\n{"fact": 坏', verdict="replaces")
    report = remember(memory, llm, SESSION, session_id="s2", when=MONDAY, how=by_model("first"))
    rows = report.rows()
    assert [r["action"] for r in rows][-1] == "dropped"
    assert rows[0]["memory"] == "最近在戒咖啡" and rows[0]["closest stored"].endswith("每天喝三杯咖啡")
    assert isinstance(report, WriteReport)


def test_remember_adds_updates_and_keeps_the_old_version_as_history(memory: SemanticMemory) -> None:
    llm = Comparing('{"fact": "最近在戒咖啡", "about": "user", "turn": 0}', verdict="replaces")
    report = remember(memory, llm, SESSION, session_id="s2", when=MONDAY, how=by_model("first"))
    assert report.counts()["update"] == 1
    texts = {m.text for m in memory.all()}
    assert "最近在戒咖啡" in texts and "每天喝三杯咖啡" not in texts
    old = history_of(memory).all()
    assert [(m.text, m.payload["valid_until"], m.payload["superseded_by"]) for m in old] == [
        ("每天喝三杯咖啡", "2026-03-02", "最近在戒咖啡")]
    new = next(m for m in memory.all() if m.text == "最近在戒咖啡")
    assert (new.payload["session_id"], new.payload["turn"], new.payload["about"]) == ("s2", 0, "user")
    assert "update" in report.to_text() and "replaces: 每天喝三杯咖啡" in report.to_text()


def test_remember_refuses_a_bad_session_id_before_calling_the_model(memory: SemanticMemory) -> None:
    llm = Comparing()
    with pytest.raises(ValueError, match="session_id"):
        remember(memory, llm, SESSION, session_id="", when=MONDAY)
    assert llm.compared == []


def test_the_comparison_prompt_puts_the_old_note_first() -> None:
    assert compare_messages("住在杭州", "搬到了上海")[-1]["content"] == "Old: 住在杭州 New: 搬到了上海 ->"


KILL_DURING_UPDATE = """
import sys, time
from gya_memory.semantic.embeddings import LocalE5Embedder
from gya_memory.semantic.memory import SemanticMemory
from gya_memory.answer.writing import history_of
m = SemanticMemory(sys.argv[1], user_id="w", embedder=LocalE5Embedder())
m.store("每天喝三杯咖啡", about="user")
history_of(m).store("每天喝三杯咖啡", valid_until="2026-03-02")  # the first step of an update
print("copied", flush=True)
time.sleep(60)  # killed here, before the new memory is stored and the old one deleted
"""


def test_a_kill_during_an_update_loses_neither_version(tmp_path: Path, e5: LocalE5Embedder) -> None:
    folder = tmp_path / "q"
    child = subprocess.Popen([PYTHON, "-c", KILL_DURING_UPDATE, str(folder)], stdout=subprocess.PIPE,
                             text=True, env=child_env())
    assert child.stdout is not None and child.stdout.readline().strip() == "copied"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    time.sleep(0.2)
    m = SemanticMemory(folder, user_id="w", embedder=e5)
    assert [x.text for x in m.all()] == ["每天喝三杯咖啡"]
    assert [x.text for x in history_of(m).all()] == ["每天喝三杯咖啡"]


def test_the_agent_writes_through_the_same_path(memory: SemanticMemory) -> None:
    from gya_memory.answer.agent import MemoryAgent

    llm = Comparing('{"fact": "下周三（2026-03-11）要去深圳出差", "about": "user", "turn": 0}')
    report = MemoryAgent(memory, llm).remember(SESSION, session_id="s3", when=MONDAY)  # type: ignore[arg-type]
    assert [d.action for d in report.decisions] == ["add"]
    assert "下周三（2026-03-11）要去深圳出差" in {m.text for m in memory.all()}


def test_the_agent_passes_how_on(memory: SemanticMemory) -> None:
    from gya_memory.answer.agent import MemoryAgent

    llm = Comparing('{"fact": "最近在戒咖啡", "about": "user", "turn": 0}', verdict="replaces")
    agent = MemoryAgent(memory, llm)  # type: ignore[arg-type]
    assert agent.remember(SESSION, session_id="s3", when=MONDAY, how=by_model("first")).counts()["update"] == 1
    assert [m.text for m in history_of(memory).all()] == ["每天喝三杯咖啡"]


# -- how=by_rule(): a sign of change, an earlier session, the same thing named -----------
def session_one(e5: LocalE5Embedder, folder: Path, facts: Sequence[tuple[str, str]]) -> SemanticMemory:
    """A store holding ``facts`` ((text, about) pairs) as written in session s1."""
    m = SemanticMemory(folder, user_id=folder.name, embedder=e5)
    for text, about in facts:
        m.store(text, about=about, session_id="s1")
    return m


@pytest.fixture
def car(e5: LocalE5Embedder, tmp_path: Path) -> SemanticMemory:
    return session_one(e5, tmp_path / "car", [("开一辆2018年的卡罗拉", "user"), ("每月房租三千五", "user"),
                                              ("妹妹开一辆白色的卡罗拉", "user's sister")])


def test_the_rule_updates_what_an_earlier_session_named_without_asking_the_model(car: SemanticMemory) -> None:
    llm = Comparing(verdict="new")
    d = decide(Proposal("卖掉了卡罗拉，换了一辆比亚迪海豹", "user", 0), car, llm, how=by_rule(), session_id="s2")
    assert (d.action, d.replaced) == ("update", "开一辆2018年的卡罗拉")
    assert "卡罗" in d.reason and llm.compared == []


@pytest.mark.parametrize(("text", "session", "why"), [
    ("卖掉了卡罗拉，换了一辆比亚迪海豹", "s1", "no earlier memory names the same thing"),  # same session
    ("周末想去看看比亚迪海豹", "s2", "no sign of change"),
    ("现在每天骑车上班", "s2", "no earlier memory names the same thing"),
])
def test_the_rule_adds_when_one_of_its_three_signs_is_missing(car: SemanticMemory, text: str,
                                                              session: str, why: str) -> None:
    d = decide(Proposal(text, "user", 0), car, Comparing(), how=by_rule(), session_id=session)
    assert (d.action, d.replaced, d.reason) == ("add", None, why)


def test_the_rule_never_replaces_a_fact_about_someone_else(car: SemanticMemory) -> None:
    d = decide(Proposal("妹妹换了一辆特斯拉，卡罗拉卖了", "user's sister", 0), car, Comparing(),
               how=by_rule(), session_id="s2")
    assert (d.action, d.replaced) == ("update", "妹妹开一辆白色的卡罗拉")


def test_remember_with_the_rule_keeps_the_old_fact_as_history(car: SemanticMemory) -> None:
    llm = Comparing('{"fact": "卖掉了卡罗拉，换了一辆比亚迪海豹", "about": "user", "turn": 0}')
    report = remember(car, llm, SESSION, session_id="s2", when=MONDAY, how=by_rule())
    assert report.counts()["update"] == 1
    assert [m.text for m in history_of(car).all()] == ["开一辆2018年的卡罗拉"]
    assert "开一辆2018年的卡罗拉" not in {m.text for m in car.all()}


# -- a restatement, by e5's latent terms ---------------------------------------------------
@pytest.fixture
def said_before(e5: LocalE5Embedder, tmp_path: Path) -> SemanticMemory:
    return session_one(e5, tmp_path / "said", [
        ("每月房租三千五", "user"), ("Secondary school maths teacher in Cardiff", "user"),
        ("Has eight years of no-claims", "user"), ("妹妹小雨在杭州读研", "user's sister")])


@pytest.mark.parametrize("text", ["房租还是三千五，没变", "Teaches maths in Cardiff"])
def test_a_later_session_saying_it_again_is_skipped(said_before: SemanticMemory, text: str) -> None:
    """No sign of change, the same person, an earlier session, latent terms at least
    writing.RESTATE_MIN close: the stored memory already says it (no model asked)."""
    d = decide(Proposal(text, "user", 0), said_before, None, session_id="s2")
    assert d.action == "skip" and d.reason.startswith("says again what a stored memory says")


@pytest.mark.parametrize(("text", "about", "session"), [
    ("每月房租四千", "user", "s2"),                  # a number the stored memory lacks: a change
    ("Has nine years of no-claims", "user", "s2"),
    ("房租还是三千五，没变", "user", "s1"),           # the same session: not a restatement
    ("在杭州读研究生", "user", "s2"),                  # the user, not the sister
    ("Now teaches maths in Cardiff", "user", "s2"),  # a sign of change
])
def test_a_change_another_person_or_the_same_session_is_not_a_restatement(
        said_before: SemanticMemory, text: str, about: str, session: str) -> None:
    d = decide(Proposal(text, about, 0), said_before, None, session_id=session)
    assert d.action == "add"


def test_the_restatement_floor_can_be_turned_off(said_before: SemanticMemory) -> None:
    d = decide(Proposal("房租还是三千五，没变", "user", 0), said_before, None, session_id="s2",
               restate_min=1.01)
    assert d.action == "add"


def test_a_question_is_not_stored_as_a_fact() -> None:
    """A proposal ending in a question keeps the statements before it; a bare question, or
    one after an "if", is dropped with its reason."""
    messages = [{"role": "user", "content": "同事小美是回族，需要注意什么吗？要是我换成电车呢？"}]
    text = ('{"fact": "小美是回族，需要注意什么吗?", "about": "小美", "turn": 0}\n'
            '{"fact": "要是我换成电车，是不是就不用操心这些了？", "about": "我", "turn": 0}\n'
            '{"fact": "成都夏天一般多热？", "about": "我", "turn": 0}')
    proposals, dropped = parse_proposals(text, messages)
    assert [p.text for p in proposals] == ["小美是回族"]
    assert [why for _, why in dropped] == ["a question, not a fact"] * 2


def test_whom_a_proposal_is_about_is_a_key_the_gate_reads() -> None:
    """The model's "about" (妹妹小雨, 自己, the user's own name) becomes a relation key or
    "user" (:func:`gya_memory.answer.about.written_about`), so the stored memory fits the
    questions about that person."""
    messages = [{"role": "user", "content": "我叫张三。妹妹小雨在杭州读研，我自己还在苏州做会计。"}]
    text = ('{"fact": "妹妹小雨在杭州读研", "about": "妹妹小雨", "turn": 0}\n'
            '{"fact": "小雨对芒果过敏", "about": "user", "turn": 0}\n'
            '{"fact": "在苏州做会计", "about": "自己", "turn": 0}\n'
            '{"fact": "张三是会计", "about": "张三", "turn": 0}')
    proposals, _ = parse_proposals(text, messages)
    assert [p.about for p in proposals] == ["妹妹", "妹妹", "user", "user"]


@pytest.mark.parametrize(("turn", "facts", "kept"), [
    ("气泡水不错。压力又来了，不过挺开心。谢谢你上次提醒我。挺贵的。我对花生过敏。",
     ["气泡水不错", "压力又来了，不过挺开心", "感谢上次提醒我", "挺贵的", "对花生过敏"], ["对花生过敏"]),
    ("Nervous but excited! Lunch at work is a nightmare. Jacket potatoes it is. "
     "I'm nervous about flying, though.",
     ["Nervous but excited", "Lunch at work is a nightmare", "Jacket potatoes it is",
      "Nervous about flying"], ["Nervous about flying"]),
    # the way back from a trip, a meal on it, a feeling said of "User" (session 30, tuning split)
    ("从东京回来了！拉面吃了好几顿，生鱼片我一口都不碰。", ["从东京回来了", "拉面吃了好几顿", "生鱼片一口都不碰"],
     ["生鱼片一口都不碰"]),
    ("Back from Iceland! Nervous but excited about the new job. I moved back from Berlin to London.",
     ["Back from Iceland", "User returned from Iceland", "User is nervous but excited",
      "Moved back from Berlin to London"], ["Moved back from Berlin to London"]),
])
def test_a_passing_remark_is_not_stored(turn: str, facts: list[str], kept: list[str]) -> None:
    """A feeling with no object, a few-word opinion of a thing, or thanks: dropped with its
    reason. A feeling about something, or a fact, stays."""
    messages = [{"role": "user", "content": turn}]
    text = "\n".join(f'{{"fact": "{f}", "about": "user", "turn": 0}}' for f in facts)
    proposals, dropped = parse_proposals(text, messages)
    assert [p.text for p in proposals] == kept
    assert {why for _, why in dropped} == {"a passing remark, not a lasting fact"}
    en = [{"role": "user", "content": "Is Shinjuku handy? I live in Leeds."}]
    proposals, dropped = parse_proposals('{"fact": "Lives in Leeds", "turn": 0}\n'
                                         '{"fact": "Is Shinjuku handy?", "turn": 0}', en)
    assert [p.text for p in proposals] == ["Lives in Leeds"] and len(dropped) == 1


def test_an_option_weighed_is_not_stored() -> None:
    """An A-not-A question without its question mark, a choice said in passing and what
    would happen if: options the user weighed, dropped with their reason (the labelled set's
    *hypothetical*). A preference with "would like … if" and a plain fact stay."""
    zh = [{"role": "user", "content": "旺财老啃沙发，养一只猫陪它会不会好点？漏食玩具可以试试。晚饭一兰吧。我对花生过敏。"}]
    text = ('{"fact": "养一只猫陪它，会不会好点", "turn": 0}\n{"fact": "漏食玩具可以试试", "turn": 0}\n'
            '{"fact": "一兰吧", "turn": 0}\n{"fact": "对花生过敏", "turn": 0}')
    proposals, dropped = parse_proposals(text, zh)
    assert [p.text for p in proposals] == ["对花生过敏"]
    assert [why for _, why in dropped] == ["an option weighed, not a fact"] * 3
    en = [{"role": "user", "content": "If we get a bigger flat I'll feed the cats in separate "
                                      "rooms. I would like to visit Kyoto if it's cheap."}]
    text = ('{"fact": "User will feed the cats in separate rooms if they get a bigger flat", "turn": 0}\n'
            '{"fact": "Would like to visit Kyoto if it is cheap", "turn": 0}')
    proposals, dropped = parse_proposals(text, en)
    assert [p.text for p in proposals] == ["Would like to visit Kyoto if it is cheap"]
    assert [why for _, why in dropped] == ["an option weighed, not a fact"]


def test_a_name_or_number_the_user_never_said_is_not_stored() -> None:
    """The worked example's daughter Lily, copied into a session about the user's own
    allotment, and a number the user took back, are dropped with what was not said. A
    resolved date, a name the user did say and a Chinese numeral written as digits stay."""
    messages = [{"role": "user", "content": "I grow tomatoes on my allotment in Oxford. "
                 "My best 10k is 52 minutes, sorry, 55. Race on May 24 with my sister Jo."},
                {"role": "assistant", "content": "Nice! Good luck, Jo and you."}]
    text = ('{"fact": "User\'s daughter Lily grows tomatoes in Oxford", "turn": 0}\n'
            '{"fact": "Best 10k is 52 minutes", "turn": 0}\n'
            '{"fact": "Best 10k is 55 minutes", "turn": 0}\n'
            '{"fact": "Racing on 2026-05-24 with her sister Jo", "turn": 0}')
    proposals, dropped = parse_proposals(text, messages)
    assert [p.text for p in proposals] == ["Best 10k is 55 minutes", "Racing on 2026-05-24 with her sister Jo"]
    assert [why for _, why in dropped] == ["not said by the user: Lily", "not said by the user: 52"]
    zh = [{"role": "user", "content": "租了个一室户，月租六千。"}]
    assert [p.text for p in parse_proposals('{"fact": "月租6000", "turn": 0}', zh)[0]] == ["月租6000"]


# -- a correction in the same breath ------------------------------------------------------
@pytest.mark.parametrize("said, kept", [
    ("My best 10k is 52 minutes, sorry, 55, I always round down.",
     "My best 10k is 55 minutes, I always round down."),
    ("我对青霉素……不对，我是对头孢过敏，青霉素没事。", "我是对头孢过敏，青霉素没事。"),
    ("我每天跑5公里，不对，6公里。", "我每天跑6公里。"),
    ("We have 3 cats, I mean 4.", "We have 4 cats."),
])
def test_a_correction_in_the_same_breath_keeps_the_second_form(said: str, kept: str) -> None:
    from gya_memory.answer.extraction import self_repaired

    assert self_repaired(said) == kept


@pytest.mark.parametrize("said", [
    "好主意。哦不对，深圳那趟不是下周三，是下周四。",  # says what changed in its own words
    "你说得不对，我没去过。",  # the assistant corrected, nothing of the user's taken back
    "I have 2 kids, sorry if that matters.",
    "Sorry, I meant to ask about 2 things.",
])
def test_no_correction_leaves_the_turn_as_it_was(said: str) -> None:
    from gya_memory.answer.extraction import self_repaired

    assert self_repaired(said) == said


def test_the_extraction_prompt_shows_the_corrected_turn() -> None:
    messages = [{"role": "user", "content": "我对青霉素……不对，我是对头孢过敏。"}]
    shown = extraction_messages(messages, "2026-02-25")[-1]["content"]
    assert "头孢" in shown and "青霉素" not in shown
