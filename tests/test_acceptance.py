"""The acceptance set (scenarios.load_acceptance) and the outcome rules of the acceptance
check (acceptance.outcome), on answers written by hand: no model here."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources

import pytest

from gya_memory.lab.acceptance import CONDITIONS, HELPS_MIN, outcome, question_for, substance, wanted
from gya_memory.answer.questions import KINDS
from gya_memory.lab.scenarios import load_acceptance, load_scenarios

TRAP_KINDS = {"other_person", "missing_detail", "outdated", "other_item", "plan_vs_done"}


@pytest.fixture(scope="module")
def scenarios():
    return load_acceptance()


@pytest.fixture(scope="module")
def by_id(scenarios):
    return {s.id: s for s in scenarios}


# -- the set ------------------------------------------------------------------------------------
def test_the_counts(scenarios) -> None:
    assert len(scenarios) == 120
    assert len(load_acceptance("tune")) == 48 and len(load_acceptance("test")) == 72
    assert len(load_acceptance(lang="zh")) == 60 and len(load_acceptance(lang="en")) == 60
    assert Counter((s.lang, s.split) for s in scenarios) == {
        ("zh", "tune"): 24, ("zh", "test"): 36, ("en", "tune"): 24, ("en", "test"): 36}
    assert len(load_acceptance("test", "en")) == 36
    assert Counter(s.trap_kind for s in scenarios) == {k: 24 for k in TRAP_KINDS}
    for lang in ("zh", "en"):  # and evenly per language
        assert Counter(s.trap_kind for s in scenarios if s.lang == lang) == {k: 12 for k in TRAP_KINDS}


def test_a_bad_split_is_refused() -> None:
    with pytest.raises(ValueError, match="split"):
        load_acceptance("train")


def test_every_scenario_is_complete(scenarios) -> None:
    assert len({s.id for s in scenarios}) == 120 and len({s.user for s in scenarios}) == 120
    for s in scenarios:
        assert 10 <= len(s.memories) <= 30, s.id
        assert len({m.id for m in s.memories}) == len(s.memories), s.id
        assert s.question and s.no_hit_question and s.general_question, s.id
        assert s.question_kind in ("fact", "advice") and s.no_hit_kind in KINDS, s.id
        assert s.must_state and all(forms for forms in s.must_state), s.id
        assert all(m.about for m in s.memories), s.id
        # the split is fixed by the number: 01-12 of each part tune, 13-30 test
        assert s.split == ("tune" if int(s.id.rsplit("-", 1)[1]) <= 12 else "test"), s.id


def test_every_relevant_and_trap_id_names_a_memory_of_its_scenario(scenarios) -> None:
    for s in scenarios:
        ids = {m.id for m in s.memories}
        assert s.relevant and set(s.relevant) <= ids, s.id
        assert s.trap in ids and s.trap not in s.relevant, s.id
        assert s.relevant_texts == [s.text_of(i) for i in s.relevant]


def test_at_least_a_third_of_the_questions_are_advice(scenarios) -> None:
    for lang in ("zh", "en"):
        part = [s for s in scenarios if s.lang == lang]
        assert sum(s.question_kind == "advice" for s in part) >= len(part) / 3


def test_no_memory_text_is_shared_with_the_older_sets(scenarios) -> None:
    data = resources.files("gya_memory.data")
    labelled = json.loads(data.joinpath("labelled_memories.json").read_text("utf-8"))
    older = {m["text"] for m in labelled["memories"]}
    older |= {m.text for s in load_scenarios() for m in s.memories}

    def norm(text: str) -> str:
        return "".join(text.split()).lower()

    older = {norm(t) for t in older}
    shared = sorted({m.text for s in scenarios for m in s.memories if norm(m.text) in older})
    assert shared == []


def test_the_fresh_english_fact_set_is_apart_from_the_acceptance_set(scenarios) -> None:
    """``benchmarks/data/acceptance_fresh_en.json`` (session 33): 30 English fact questions
    written after every lever of the acceptance set was chosen, asked once to check one
    (docs/acceptance.md, "A fresh set of English fact questions")."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "acceptance_fresh_en.json"
    fresh = load_scenarios(path=path)
    assert len(fresh) == 30 and {(s.lang, s.split, s.question_kind, s.no_hit_kind) for s in fresh} \
        == {("en", "test", "fact", "fact")}
    assert Counter(s.trap_kind for s in fresh) == {k: 6 for k in TRAP_KINDS}
    for s in fresh:
        assert len(s.relevant) == 1 and s.trap not in s.relevant, s.id
        said = s.text_of(s.relevant[0]).lower()
        assert any(form.lower() in said for form in s.must_state[0]), s.id
    older = {"".join(m.text.split()).lower() for s in scenarios for m in s.memories}
    older |= {"".join(q.split()).lower() for s in scenarios for q in (s.question, s.no_hit_question)}
    asked = [t for s in fresh for t in (s.question, s.no_hit_question, *s.relevant_texts,
                                         s.text_of(s.trap))]
    # one trap of the fresh set is also a memory of an acceptance user; no question is shared
    assert [t for t in asked if "".join(t.split()).lower() in older] \
        == ["Takes a statin for high cholesterol"]


def test_the_second_fresh_set_has_both_languages_and_every_trap_kind(scenarios) -> None:
    """``benchmarks/data/acceptance_fresh2.json`` (session 33): 24 Chinese and 24 English fact
    questions, written to check one setting of the reader's bar (docs/acceptance.md)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "acceptance_fresh2.json"
    fresh = load_scenarios(path=path)
    assert Counter(s.lang for s in fresh) == {"zh": 24, "en": 24}
    assert {(s.split, s.question_kind, s.no_hit_kind) for s in fresh} == {("test", "fact", "fact")}
    for lang in ("zh", "en"):
        kinds = Counter(s.trap_kind for s in fresh if s.lang == lang)
        assert set(kinds) == TRAP_KINDS and sorted(kinds.values()) == [4, 5, 5, 5, 5]
    for s in fresh:
        said = s.text_of(s.relevant[0]).lower()
        assert len(s.relevant) == 1 and any(f.lower() in said for f in s.must_state[0]), s.id
    older = {"".join(t.split()).lower() for s in scenarios
             for t in (s.question, s.no_hit_question, *(m.text for m in s.memories))}
    shared = [t for s in fresh for t in (s.question, s.no_hit_question, *s.relevant_texts)
              if "".join(t.split()).lower() in older]
    assert shared == ["我现在在哪家公司上班？"]  # a common question, asked of other memories


# -- the conditions -----------------------------------------------------------------------------
def test_each_condition_asks_its_question_and_wants_its_outcome(by_id) -> None:
    s = by_id["zh-a-01"]
    assert question_for(s, "memory") == (s.question, s.question_kind)
    assert question_for(s, "empty") == (s.question, s.question_kind)
    assert question_for(s, "no_hit") == (s.no_hit_question, s.no_hit_kind)
    assert question_for(s, "general") == question_for(s, "empty_general") == (s.general_question, "general")
    assert wanted("memory", "advice") == {"used"} and wanted("no_hit", "fact") == {"admits"}
    assert wanted("empty", "fact") == {"admits"} and wanted("empty", "advice") == {"helps"}
    assert wanted("general", "general") == wanted("empty_general", "general") == {"helps"}
    assert CONDITIONS == ("memory", "no_hit", "empty", "general", "empty_general")


# -- outcome rules on hand-written answers --------------------------------------------------------
# zh-a-01: 三七粉 and a user on warfarin (m9); the no-hit question asks the user's own blood
# pressure next to the father's (m3, another person).
def test_outcomes_with_memory_zh(by_id) -> None:
    s = by_id["zh-a-01"]
    relevant, look_alike = s.text_of("m9"), s.text_of("m3")
    q = s.question
    assert outcome(s, "memory", "你在吃华法林抗凝，三七粉会增加出血风险，先别吃，问问医生。",
                   [relevant], q, "advice")[0] == "used"
    assert outcome(s, "memory", "你父亲在吃缬沙坦，三七粉最好先别吃。",
                   [relevant, look_alike], q, "advice")[0] == "misused"
    label, invented = outcome(s, "memory", "你对阿司匹林过敏。", [relevant], q, "advice")
    assert label == "invented" and invented == ["你对阿司匹林过敏"]
    assert outcome(s, "memory", "我不知道。", [relevant], q, "advice")[0] == "admits"


def test_outcomes_without_a_hit_zh(by_id) -> None:
    s = by_id["zh-a-01"]
    q, trap = s.no_hit_question, s.text_of(s.trap)
    assert outcome(s, "no_hit", "我不知道，你还没告诉过我你的血压。", [], q, "fact")[0] == "admits"
    assert outcome(s, "no_hit", "你的血压大概是120/80。", [], q, "fact")[0] == "invented"
    # built on the look-alike the gate let through
    assert outcome(s, "no_hit", "你父亲在吃缬沙坦控制。", [trap], q, "fact")[0] == "misused"
    # or on the look-alike's content even when it was not placed
    assert outcome(s, "no_hit", "可以参考缬沙坦的用法。", [], q, "fact")[0] == "misused"


def test_outcomes_on_an_empty_store_zh(by_id) -> None:
    s = by_id["zh-a-01"]
    q = s.question
    helps = "三七粉有活血作用，如果在吃抗凝药或有出血风险，先问医生；崴脚早期先冰敷、抬高休息。"
    assert substance(helps) >= HELPS_MIN
    assert outcome(s, "empty", helps, [], q, "advice")[0] == "helps"
    refusal = "我不知道，你还没告诉过我。"
    assert substance(refusal) < HELPS_MIN
    assert outcome(s, "empty", refusal, [], q, "advice")[0] == "refuses"
    assert outcome(s, "empty", "你在吃华法林，别吃。", [], q, "advice")[0] == "invented"
    # a fact question on an empty store: admitting is what is wanted
    f = by_id["zh-a-03"]
    assert f.question_kind == "fact"
    assert outcome(f, "empty", "我不知道，你还没告诉过我。", [], f.question, "fact")[0] == "admits"
    assert outcome(f, "empty", "你当年想去的是北京大学。", [], f.question, "fact")[0] == "invented"


def test_outcomes_of_a_general_question_zh(by_id) -> None:
    s = by_id["zh-a-01"]
    q = s.general_question
    helps = "肿胀消退后再开始热敷，通常两三天，之前先冰敷、抬高。"
    assert outcome(s, "general", helps, [], q, "general")[0] == "helps"
    assert outcome(s, "empty_general", helps, [], q, "general")[0] == "helps"
    assert outcome(s, "general", "你在吃华法林抗凝，肿胀消退后再开始热敷。", [], q, "general")[0] == (
        "mentions memory")
    assert outcome(s, "general", "我不知道。", [], q, "general")[0] == "refuses"
    assert outcome(s, "empty_general", "我不知道。", [], q, "general")[0] == "refuses"


# en-a-02: takeout for Noor, whose IBS triggers are garlic and onion; the no-hit question asks
# the dietitian's name next to a memory without it (missing detail).
def test_outcomes_in_english(by_id) -> None:
    s = by_id["en-a-02"]
    relevant = s.relevant_texts[0]
    q, nq, gq = s.question, s.no_hit_question, s.general_question
    trap = s.text_of(s.trap)
    assert s.trap_kind == "missing_detail"
    assert outcome(s, "memory", "Butter chicken is usually cooked with garlic and onion, her worst "
                   "triggers, so ask for a plain grilled dish instead.", [relevant], q, "advice")[0] == "used"
    assert outcome(s, "memory", "I don't know what Noor can eat.", [relevant], q, "advice")[0] == "admits"
    assert outcome(s, "no_hit", "I don't know, you haven't told me your dietitian's name.",
                   [], nq, "fact")[0] == "admits"
    assert outcome(s, "no_hit", "Your dietitian is called Priya Patel.", [], nq, "fact")[0] == "invented"
    assert outcome(s, "no_hit", "Your dietitian is at the Hillcrest clinic.", [trap], nq,
                   "fact")[0] == "misused"
    assert outcome(s, "empty", "I don't know.", [], q, "advice")[0] == "refuses"
    helps = ("Indian takeout is often rich in cream, butter and spice; if anyone has a sensitive "
             "stomach, ask for milder dishes, plain rice and grilled tandoori options.")
    assert outcome(s, "empty", helps, [], q, "advice")[0] == "helps"
    general = ("Mostly not: weight gain depends on the total calories eaten across the day, not "
               "the clock, though late snacking often adds extra calories.")
    assert outcome(s, "empty_general", general, [], gq, "general")[0] == "helps"
    assert outcome(s, "general", general, [], gq, "general")[0] == "helps"


def test_a_common_word_is_not_a_mention_of_a_memory(by_id) -> None:
    s = by_id["zh-a-01"]
    answer = "一般48到72小时以后，肿胀消退再开始热敷，之前先冰敷。"
    assert outcome(s, "general", answer, [], s.general_question, "general")[0] == "helps"


def test_a_missing_scenarios_file_is_refused_before_any_model_loads(tmp_path, capsys) -> None:
    from gya_memory.lab.acceptance import main

    with pytest.raises(SystemExit) as stopped:
        main(["--scenarios", str(tmp_path / "nope.json")])
    assert stopped.value.code == 2 and "no such file" in capsys.readouterr().err
