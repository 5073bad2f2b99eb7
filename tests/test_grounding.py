"""The grounding check: content units, use of a memory, claims about the user, admitting, and
the one result both rules return (the key-term rule on traces: test_agent.py)."""

from __future__ import annotations

import pytest

from gya_memory.answer.grounding import (
    VERDICTS, Grounding, clauses, content_units, ground, is_claim,
)


def test_content_units_drop_stop_words_and_keep_facts() -> None:
    assert content_units("我对花生过敏") == {"花生", "生过", "过敏"}
    assert content_units("Allergic to shellfish since 2019, Dr. Okafor's patient") >= {
        "allergic", "shellfish", "2019", "okafor", "patient"}
    assert "the" not in content_units("the user is what") and not content_units("what is it")


@pytest.mark.parametrize("answer", [
    "我不知道，你还没告诉过我。", "记忆库里没有这方面的资料。", "你没跟我说过你丈夫的工作。",
    "I don't know, you haven't told me.", "The memory store has nothing about your airline.",
    "I do not have any information about that.", "That isn't mentioned in my notes.",
])
def test_admitting_is_recognised(answer: str) -> None:
    assert ground(answer, [], "问题").admits_unknown


def test_a_paraphrased_use_counts_as_used() -> None:
    g = ground("Skip the shrimp: your shellfish allergy makes it risky.",
               ["Allergic to shellfish since childhood", "Loves hiking in Utah"],
               "Can I try the paella?")
    assert g.used == [0] and g.invented == [] and g.verdict == "used"


def test_words_from_the_question_are_not_use_of_a_memory() -> None:
    g = ground("宫保鸡丁很好吃。", ["喜欢宫保鸡丁"], "我能吃宫保鸡丁吗？")
    assert g.used == []


def test_an_invented_fact_about_the_user_is_caught() -> None:
    g = ground("You usually fly with American Airlines.", ["Trip to Tokyo in May"],
               "Which airline do I usually fly?")
    assert g.invented == ["You usually fly with American Airlines."]
    assert {"american", "airline"} & set(g.unsupported_units)
    assert g.verdict == "invented"
    g = ground("你丈夫是一名律师。", ["用户在银行做客户经理"], "我丈夫是做什么的？")
    assert g.invented and g.verdict == "invented"


def test_advice_and_admitted_gaps_are_not_claims() -> None:
    assert not is_claim("你可以多喝水。")
    assert not is_claim("You should check with your doctor.")
    assert not is_claim("I don't know your wife's job.")
    assert is_claim("Your wife is a nurse")
    g = ground("你对花生过敏，最好别点宫保鸡丁 [1]。", ["对花生过敏"], "我能吃宫保鸡丁吗？")
    assert g.invented == [] and g.cites == [1]


def test_clauses_split_sentences_in_both_languages() -> None:
    assert clauses("你对花生过敏。最好别吃！Skip it. Really?") == [
        "你对花生过敏", "最好别吃", "Skip it.", "Really"]


def test_an_answer_built_only_on_memories_that_do_not_answer_is_off_topic() -> None:
    memories = ["用户的博客主要写 AI Agent", "用户是一名后端工程师"]
    g = ground("你的博客主要写 AI Agent。", memories, "我去过哪些城市？", relevant=[])
    assert g.used == g.off_topic == [0] and g.verdict == "off topic"
    assert ground("你的博客主要写 AI Agent。", memories, "我去过哪些城市？").verdict == "used"
    g = ground("你是后端工程师，博客写 AI Agent。", memories, "我做什么工作？",
               relevant=[memories[1]])
    assert g.used == [0, 1] and g.off_topic == [0] and g.verdict == "used"


def test_one_result_and_one_order_of_verdicts_for_both_rules() -> None:
    def verdict(**fields: object) -> str:
        return Grounding(**{"used": [], "invented": [], "admits_unknown": False, **fields}).verdict

    assert verdict(invented=["x"], used=[0], off_topic=[0], admits_unknown=True) == "invented"
    assert verdict(used=[0], off_topic=[0], admits_unknown=True) == "off topic"
    assert verdict(used=[0, 1], off_topic=[1], admits_unknown=True) == "used"
    assert verdict(admits_unknown=True) == "admits"
    assert verdict() == "no user facts"
    assert VERDICTS == ("invented", "off topic", "used", "admits", "no user facts")
