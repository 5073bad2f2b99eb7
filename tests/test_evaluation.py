"""The evaluation set and the code that scores it (no chat model: scripted answers)."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pytest

from gya_memory.lab.scenarios import CONDITIONS, Scenario, load_scenarios, store_scenarios
from gya_memory.lab.evaluation import choose_judge_min, distractors_used, end_to_end_table, judge_sweep, outcome, retrieval_rows, retrieval_table, run_end_to_end, targets
from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
from gya_memory.answer.gate import Gate


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return load_scenarios()


def test_the_set_is_balanced_and_split_once_for_all(scenarios: list[Scenario]) -> None:
    assert len(scenarios) >= 40
    for lang in ("zh", "en"):
        mine = [s for s in scenarios if s.lang == lang]
        assert len(mine) == 24
        assert [s.split for s in mine] == ["tune"] * 10 + ["test"] * 14
    assert len({s.topic for s in scenarios}) >= 15
    assert len({s.id for s in scenarios}) == len(scenarios)
    assert len({s.user for s in scenarios}) == len(scenarios)


def test_every_scenario_is_well_formed(scenarios: list[Scenario]) -> None:
    for s in scenarios:
        ids = [m.id for m in s.memories]
        assert 3 <= len(ids) <= 8 and len(set(ids)) == len(ids), s.id
        assert 1 <= len(s.relevant) <= 2 and set(s.relevant) <= set(ids), s.id
        assert s.trap in ids and s.trap not in s.relevant, s.id
        # each fact can be found in a relevant memory, word for word
        for fact in s.must_state:
            assert any(f.lower() in " ".join(s.relevant_texts).lower() for f in fact), s.id
        # the question paraphrases: it doesn't repeat the fact
        for fact in s.must_state:
            for form in fact:
                if re.search(r"[\u4e00-\u9fff]{2,}", form) or len(form) >= 5:
                    assert form.lower() not in s.question.lower(), (s.id, form)


def test_the_evaluation_set_shares_nothing_with_the_calibration_set(
        scenarios: list[Scenario]) -> None:
    labelled = json.loads(resources.files("gya_memory.data")
                          .joinpath("labelled_memories.json").read_text("utf-8"))
    calibration = {m["text"] for m in labelled["memories"]} | {q["text"] for q in labelled["queries"]}
    ours = {m.text for s in scenarios for m in s.memories} | \
        {s.question for s in scenarios} | {s.no_hit_question for s in scenarios}
    assert not calibration & ours


def test_bad_split_is_refused() -> None:
    with pytest.raises(ValueError, match="split must be one of"):
        load_scenarios("train")


# -- outcomes -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def peanut(scenarios: list[Scenario]) -> Scenario:
    return next(s for s in scenarios if s.id == "zh-01")


def test_outcomes_of_answers_with_memory(peanut: Scenario) -> None:
    placed = [peanut.text_of("m1"), peanut.text_of("m2")]
    q = peanut.question
    assert outcome(peanut, "memory", "你对花生过敏，宫保鸡丁里有花生，别吃 [1]。", placed, q)[0] == "used"
    assert outcome(peanut, "memory", "可以吃，你喜欢吃辣，川菜都能吃。", placed, q)[0] == "misused"
    assert outcome(peanut, "memory", "我不知道。", placed, q)[0] == "admits"
    assert outcome(peanut, "memory", "宫保鸡丁是一道经典菜。", placed, q)[0] == "ignored"
    label, leaked, _ = outcome(peanut, "memory", "你对花生过敏，别吃；你也爱吃辣，川菜可以。", placed, q)
    assert (label, leaked) == ("used", True)


def test_outcomes_of_answers_without_a_relevant_memory(peanut: Scenario) -> None:
    q = peanut.no_hit_question
    placed = [peanut.text_of(peanut.trap)]
    assert outcome(peanut, "no_hit", "我不知道，你还没告诉过我。", placed, q)[0] == "admits"
    assert outcome(peanut, "no_hit", "你对青霉素过敏。", placed, q)[0] == "invented"
    assert outcome(peanut, "no_hit", "花粉季吃氯雷他定就行。", placed, q)[0] == "misused"
    assert outcome(peanut, "no_memory", "抗生素要遵医嘱。", [], peanut.question)[0] == "no facts"
    assert distractors_used(peanut, "花粉季吃氯雷他定就行。", placed, q, "no_hit") == placed


# -- the pipeline, with a real store and scripted answers ------------------------------------
class Scripted:
    """An agent stand-in: answers from a table, shows what the gate placed."""

    def __init__(self, memory: Any, answers: dict[str, str]) -> None:
        self.memory, self.answers = memory, answers

    def ask(self, question: str) -> Any:
        from gya_memory.answer.agent import MemoryAgent

        class Fixed:
            name = "scripted"

            def chat(self, messages: Any, **_: Any) -> Any:
                from gya_memory.answer.llm.interface import Reply
                return Reply(answers[question], "scripted", 1, 1, [], "stop")

        answers = self.answers
        return MemoryAgent(self.memory, Fixed(), gate=Gate(judge_min=None)).ask(question)  # type: ignore[arg-type]


def test_retrieval_and_end_to_end_tables(scenarios: list[Scenario]) -> None:
    chosen = [s for s in scenarios if s.id in ("zh-01", "en-01")]
    stores = store_scenarios(chosen, TFIDFEmbedder())
    rows = retrieval_rows(chosen, stores, Gate(judge_min=None))
    assert [(r.scenario, r.kind) for r in rows] == [
        ("zh-01", "answerable"), ("zh-01", "no_hit"), ("en-01", "answerable"), ("en-01", "no_hit")]
    assert all(len(r.ranking) == len(next(s for s in chosen if s.id == r.scenario).memories)
               for r in rows)
    table = retrieval_table(rows)
    assert list(table.index) == ["zh", "en"] and table.loc["zh", "questions"] == 1
    answers = {s.question: "我不知道。" for s in chosen} | {s.no_hit_question: "我不知道。" for s in chosen}
    done = run_end_to_end(chosen, stores, lambda m: Scripted(m, answers))
    assert [a.condition for a in done] == list(CONDITIONS) * 2
    assert {a.outcome for a in done if a.condition != "memory"} == {"admits"}
    e2e = end_to_end_table(done)
    assert e2e.loc[("zh", "no_hit"), "admits"] == 1.0
    reached = targets(rows, done)
    assert set(reached["language"]) == {"zh", "en"} and "reached" in reached


def test_judge_sweep_and_choice() -> None:
    from gya_memory.lab.evaluation import RetrievalRow

    rows = [
        RetrievalRow("a", "zh", "answerable", "q", [("m1", 0.9)], ["m1"], [("m1", True, "passed", 0.7)]),
        RetrievalRow("a", "zh", "no_hit", "q", [("m2", 0.9)], [], [("m2", True, "passed", 0.5)]),
    ]
    sweep = judge_sweep(rows, [0.4, 0.6, 0.8])
    assert list(sweep["zh relevant passes"]) == [1.0, 1.0, 0.0]
    assert list(sweep["zh false hit"]) == [1.0, 0.0, 0.0]
    assert choose_judge_min(sweep) == 0.6
