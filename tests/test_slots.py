"""What a fact question asks for (slots.missing_slot) and a plan asked as done
(slots.plan_asked_as_done), in both languages."""

from __future__ import annotations

import pytest

from gya_memory.answer.slots import missing_slot, plan_asked_as_done


@pytest.mark.parametrize(("question", "memory"), [
    ("我上次体检的总胆固醇具体是多少？", "体检查出总胆固醇偏高"),
    ("我女儿几岁了？", "女儿在读小学"),
    ("我每天吃几片降压药？", "在吃降压药"),
    ("How many cats do I have?", "Loves cats"),
    ("How old is my son?", "Son is in primary school"),
    ("What dose of vitamin D do I take?", "Takes vitamin D in winter"),
])
def test_a_number_asked_and_none_in_the_memory(question: str, memory: str) -> None:
    assert missing_slot(question, memory) == "a number"


@pytest.mark.parametrize(("question", "memory"), [
    ("我每个月房贷还多少？", "每个月房贷还6800元"),
    ("我女儿几岁了？", "女儿今年七岁"),
    ("How many cats do I have?", "Has two cats"),
    ("How many cats do I have?", "Has 2 cats"),
    ("How old is my son?", "Son turned twelve in March"),
])
def test_a_number_asked_and_given(question: str, memory: str) -> None:
    assert missing_slot(question, memory) is None


@pytest.mark.parametrize(("question", "memory"), [
    ("我的航班是什么时候？", "订了国航的航班"),
    ("我哪天去复查？", "要去医院复查"),
    ("When is my flight?", "Flight booked with KLM"),
    ("What day is my piano lesson?", "Takes piano lessons"),
])
def test_a_time_asked_and_none_in_the_memory(question: str, memory: str) -> None:
    assert missing_slot(question, memory) == "a time"


@pytest.mark.parametrize(("question", "memory"), [
    ("我的航班是什么时候？", "周一早上七点的航班飞成都"),
    ("我哪天去复查？", "3月12号去医院复查"),
    ("When is my flight?", "Flight to Rome on Monday"),
    ("What day is my piano lesson?", "Piano lesson every Thursday"),
])
def test_a_time_asked_and_given(question: str, memory: str) -> None:
    assert missing_slot(question, memory) is None


@pytest.mark.parametrize("question", ["我在哪上班？", "我妹妹叫什么？", "Where do I work?",
                                      "What's my dog called?"])
def test_a_question_that_asks_for_no_number_or_time(question: str) -> None:
    assert missing_slot(question, "在银行上班") is None
    assert missing_slot(question, "Works at a bank") is None


@pytest.mark.parametrize(("question", "memory"), [
    ("What time is my dentist appointment?", "Has a dentist appointment next month"),
    ("我的牙医预约是几点？", "下个月要去看牙医"),
])
def test_a_clock_time_asked_needs_a_clock_time(question: str, memory: str) -> None:
    assert missing_slot(question, memory) == "a time"


@pytest.mark.parametrize(("question", "memory"), [
    ("我去年在日本待了几天？", "打算明年春天去日本看樱花"),
    ("我报了哪个瑜伽班？", "想报个瑜伽班"),
    ("我上次买的是什么牌子的跑鞋？", "准备买一双新跑鞋"),
    ("Which sailing club did I join?", "Wants to learn to sail"),
    ("Which hotel did I stay at in Rome?", "Plans to visit Rome next spring"),
    ("What car did I buy last year?", "Thinking about buying an electric car"),
])
def test_a_plan_does_not_answer_what_was_done(question: str, memory: str) -> None:
    assert plan_asked_as_done(question, memory)


@pytest.mark.parametrize(("question", "memory"), [
    ("我去年在日本待了几天？", "去年在日本待了十天"),  # done, not a plan
    ("我报了哪个瑜伽班？", "想了很久，终于报了名瑜伽班"),  # the plan carried out
    ("我打算去哪旅游？", "打算明年去日本"),  # a plan asked as a plan
    ("Which sailing club did I join?", "Joined the Bayside sailing club in May"),
    ("Which hotel will I stay at in Rome?", "Plans to visit Rome next spring"),
    ("Where do I want to travel next?", "Wants to visit Japan"),
    ("Which course did I take?", "Wanted a change, so finally enrolled in a pottery course"),
])
def test_not_a_plan_asked_as_done(question: str, memory: str) -> None:
    assert not plan_asked_as_done(question, memory)


@pytest.mark.parametrize(("question", "memory"), [
    ("我女儿明年上几年级了？", "女儿明年上三年级"),
    ("我下周的航班改到几点了？", "下周一的航班改到了早上八点"),
])
def test_a_future_fact_asked_about_the_future_is_not_a_plan_asked_as_done(question: str,
                                                                         memory: str) -> None:
    assert not plan_asked_as_done(question, memory)


def test_when_as_a_conjunction_does_not_ask_for_a_time() -> None:
    from gya_memory.answer.slots import missing_slot

    q = "The Red Cross asked which blood group I am so they can call me when supplies run low."
    assert missing_slot(q, "Blood type is O negative") is None
    assert missing_slot("When is my dentist appointment?", "Sees Dr. Lee for check-ups") == "a time"
    assert missing_slot("So when did I last see the dentist?", "Sees Dr. Lee") == "a time"
