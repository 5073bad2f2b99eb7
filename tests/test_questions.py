"""The question-kind rule (questions.question_kind): a personal fact, advice that depends on
the person, or a general question, on clear examples in both languages written for these
tests (none from the evaluation sets)."""

from __future__ import annotations

import pytest

from gya_memory.answer.questions import KINDS, question_kind

FACT = [
    "我儿子的班主任姓什么来着？", "我的车牌号是多少？", "我老家在哪个省？", "我上周去医院看的是哪个科？",
    "我是不是对青霉素过敏？", "你还记得我喜欢什么颜色吗？",
    "What's my sister's name?", "Where do I work?", "When is my passport due to expire?",
    "Which gym did I sign up for?", "Did I ever tell you my blood type?", "Remind me, what car do I drive?",
]
ADVICE = [
    "我今晚能吃火锅吗？", "周末带我爸去爬山，该注意什么？", "我该怎么安排下周的复习？",
    "我最近总失眠，有什么好办法？", "给我推荐一本适合睡前看的书。", "我适合练瑜伽吗？",
    "Should I rent a car for the trip?", "Any tips for my first half marathon?",
    "Is it safe for me to have shrimp tonight?", "Can I take ibuprofen with my coffee?",
    "What should I pack for my trip to Iceland?", "How can I sleep better after night shifts?",
]
GENERAL = [
    "感冒一般几天能好？", "红烧肉怎么做才不腻？", "北京到上海的高铁要坐多久？", "猫为什么喜欢晒太阳？",
    "How long should you boil an egg for a runny yolk?", "What is the capital of Australia?",
    "How do vaccines work?", "Why is the sky blue?",
]


@pytest.mark.parametrize("question", FACT)
def test_fact_questions(question: str) -> None:
    assert question_kind(question) == "fact"


@pytest.mark.parametrize("question", ADVICE)
def test_advice_questions(question: str) -> None:
    assert question_kind(question) == "advice"


@pytest.mark.parametrize("question", GENERAL)
def test_general_questions(question: str) -> None:
    assert question_kind(question) == "general"


def test_the_examples_cover_both_languages() -> None:
    from gya_memory.base.text import language_of

    for examples in (FACT, ADVICE, GENERAL):
        assert {language_of(q) for q in examples} == {"zh", "en"}


def test_a_judgement_wins_over_a_wh_word() -> None:
    # "what should I …" asks what, but for a judgement: advice
    assert question_kind("What should I eat before my exam?") == "advice"
    assert question_kind("我明天面试该穿什么？") == "advice"


def test_a_personal_statement_reads_as_asking_for_help() -> None:
    assert question_kind("我下周出差。") == "advice"
    assert question_kind("I have a cold.") == "advice"


def test_whitespace_and_line_breaks_do_not_change_the_kind() -> None:
    assert question_kind("  What's my\nsister's   name?  ") == question_kind("What's my sister's name?")


def test_the_kinds() -> None:
    assert KINDS == ("fact", "advice", "general")
    for q in FACT + ADVICE + GENERAL:
        assert question_kind(q) in KINDS


@pytest.mark.parametrize("question", ["", "   ", "\n\t", None, 42])
def test_an_empty_question_is_refused(question: object) -> None:
    with pytest.raises(ValueError, match="question is empty"):
        question_kind(question)  # type: ignore[arg-type]


@pytest.mark.parametrize("question", [
    "体检中心问我血型是什么，我该怎么填？", "医生问我平时吃几种药，我该怎么回答？",
    "The receptionist is asking which insurer I'm with. What do I tell him?",
    "My landlord wants to know when my lease ends. What should I say?",
])
def test_a_fact_asked_as_what_to_reply_is_a_fact(question: str) -> None:
    # someone asks the user for their own fact: the answer is the fact, not advice
    assert question_kind(question) == "fact"


def test_lai_zhe_and_an_implied_me_are_personal() -> None:
    assert question_kind("家里的路由器密码是多少来着？") == "fact"
    assert question_kind("想周末去爬黄山，你看行吗？") == "advice"


def test_a_how_much_question_with_a_generic_i_is_general() -> None:
    assert question_kind("How much should I tip a taxi driver in the US?") == "general"
    assert question_kind("How often should I water a cactus?") == "general"
    # my / me make it personal again
    assert question_kind("How much should I budget for my wedding?") == "advice"


@pytest.mark.parametrize(("question", "kind"), [
    # a how-to with a generic I asks for general knowledge (written for this test)
    ("How can I get candle wax out of a tablecloth?", "general"),
    ("How should I store fresh basil so it lasts?", "general"),
    ("Why do onions make you cry, and how can I stop it?", "general"),
    ("How many weeks ahead should I book a campsite in summer?", "general"),
    # my / me / a statement about myself, or asking permission: the person matters
    ("How can I fit running into my week?", "advice"),
    ("How should I dress for a job interview? I'm in a wheelchair.", "advice"),
    ("Can I eat sushi while pregnant?", "advice"),
])
def test_a_how_to_with_a_generic_i_is_general(question: str, kind: str) -> None:
    assert question_kind(question) == kind


# -- names the user's memories share (written for these tests) ------------------------------
NAMED = [
    # (question, a memory of the user's that names the same one, the kind with it)
    ("What school does Milo go to now?", "Son Milo started year 3 in September", "fact"),
    ("Which vet does Pepper see?", "Adopted a beagle called Pepper in 2024", "fact"),
    ("Is it fine if Pepper comes along to the picnic?", "Adopted a beagle called Pepper", "advice"),
    ("球球平时吃什么牌子的猫粮？", "家里有只三岁的英短，叫球球", "fact"),
    ("老周的女儿在哪上大学？", "老周是我大学室友，现在在杭州", "fact"),
]


@pytest.mark.parametrize("question,memory,kind", NAMED)
def test_a_name_from_the_users_memories_makes_a_question_the_users_own(
        question: str, memory: str, kind: str) -> None:
    assert question_kind(question) == "general"  # read alone
    assert question_kind(question, known=[memory]) == kind
    assert question_kind(question, known=["Works as a nurse", "在银行上班"]) == "general"


def test_places_and_common_words_are_not_names() -> None:
    from gya_memory.answer.questions import names_in

    assert names_in("What's the best month to visit Bali for dry weather?") == []
    assert names_in("Why is Wi-Fi slower upstairs?") == []
    assert names_in("What should I do on Monday in May?") == []
    assert names_in("孩子天天看手机怎么办？") == [] and names_in("老师布置的作业太多怎么办？") == []
    # a general question stays general when its place is in a memory
    assert question_kind("When is the dry season in Bali?", known=["Honeymoon in Bali"]) == "general"


def test_when_as_a_conjunction_does_not_ask_for_a_fact() -> None:
    # "when I squat" is not "when did I …": a question about the body, not a stored fact
    assert question_kind("Is it normal for my back to ache when I sit all day?") != "fact"
    assert question_kind("When is my passport due to expire?") == "fact"
    assert question_kind("So, when did I last see the dentist?") == "fact"
