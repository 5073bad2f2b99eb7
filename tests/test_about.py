"""Whom a memory or a question is about (about.about_of, asks_about, fits): the rule the
gate uses to drop a memory about someone else before the judge sees it."""

from __future__ import annotations

import pytest

from gya_memory.answer.about import USER, about_of, asks_about, fits, mentions, names_in, written_about


@pytest.mark.parametrize(("text", "who"), [
    ("妹妹在成都当护士", "妹妹"), ("用户的母亲有糖尿病", "妈妈"), ("我妈每天早上散步", "妈妈"),
    ("老公在银行上班", "老公"), ("女儿今年上小学二年级", "女儿"), ("猫咪叫小白", "猫"),
    ("同事小王下个月结婚", "同事"),
    ("对花生过敏", USER), ("用户叫张三", USER), ("最近在戒咖啡，想少喝一点", USER),
    # a relation word that starts something else is not a relation
    ("哥伦比亚咖啡是最爱", USER), ("妈妈的味道是红烧肉", USER),
    ("User's sister Chloe teaches piano", "sister"), ("Husband rides his bike to work", "husband"),
    ("The user's dog is called Rex", "dog"), ("Mom has type 2 diabetes", "mother"),
    ("Kids go to Oak Park school", "kid"), ("Allergic to peanuts", USER),
    ("The user's name is Alice", USER), ("Works as a data analyst", USER),
])
def test_about_of(text: str, who: str) -> None:
    assert about_of(text) == who


@pytest.mark.parametrize(("question", "who"), [
    ("我妹妹在哪上班？", "妹妹"), ("我家猫几岁了？", "猫"), ("我儿子的班主任叫什么？", "儿子"),
    ("我妈和我姐谁大？", "妈妈"),  # the first relation named counts
    ("我自己是做什么工作的？", USER), ("我的血型是什么？", USER), ("我今晚能吃火锅吗？", USER),
    ("What does my wife do?", "wife"), ("Where does my older brother live?", "brother"),
    ("What's my son's teacher called?", "son"), ("What do I do for a living?", USER),
    ("What about me personally, what's my job?", USER),
])
def test_asks_about(question: str, who: str) -> None:
    assert asks_about(question) == who


def test_a_fact_question_about_a_relation_takes_only_memories_about_it() -> None:
    assert fits("妹妹", "我妹妹在哪上班？")
    assert not fits(USER, "我妹妹在哪上班？")
    assert not fits("姐姐", "我妹妹在哪上班？")  # two sisters are two people
    assert fits("wife", "What does my wife do?") and not fits("husband", "What does my wife do?")
    assert not fits(USER, "What does my wife do?")


def test_a_fact_question_about_the_user_takes_no_memory_about_another() -> None:
    assert fits(USER, "我自己是做什么工作的？")
    assert not fits("妹妹", "我自己是做什么工作的？")
    assert not fits("sister", "What is my blood type?") and fits(USER, "What is my blood type?")


def test_a_group_fits_its_members() -> None:
    # a memory about "the kids" may answer a question about a son, and the other way round
    assert fits("孩子", "我儿子在哪上学？") and fits("儿子", "我孩子在哪上学？")
    assert not fits("女儿", "我儿子在哪上学？")
    assert fits("kid", "Where does my son go to school?")
    # "sister" (either) fits a question about 姐姐 or 妹妹
    assert fits("sister", "我姐姐在哪上班？") and fits("sister", "我妹妹在哪上班？")


def test_the_advice_exception_takes_a_relation_the_question_names() -> None:
    question = "My sister visits on Friday, where should we eat?"
    # asked as a fact, a question naming the sister would take only memories about her;
    # advice for her visit may need the user's own facts too, and hers
    assert asks_about(question) == "sister"
    assert fits(USER, question, kind="advice") and fits("sister", question, kind="advice")
    assert not fits(USER, question, kind="fact")
    assert not fits("wife", question, kind="advice")  # not named: not sent
    assert fits("妈妈", "母亲节给妈妈送什么好？", kind="advice")
    assert not fits("妈妈", "我今晚能吃火锅吗？", kind="advice")
    assert fits(USER, "我今晚能吃火锅吗？", kind="advice")


def test_a_general_question_takes_the_users_memories_and_named_relations() -> None:
    assert fits(USER, "感冒一般几天能好？", kind="general")
    assert not fits("妹妹", "感冒一般几天能好？", kind="general")
    assert fits("妈妈", "母亲节给妈妈送什么好？", kind="general")


def test_mentions() -> None:
    assert mentions("母亲节给妈妈送什么好？", "妈妈")
    assert mentions("周末和老妈去哪吃饭？", "妈妈")
    assert not mentions("周末去哪吃饭？", "妈妈")
    assert mentions("What should my kids eat?", "son")  # the group
    assert mentions("anything", USER)


def test_an_in_law_is_not_the_relation_itself() -> None:
    assert about_of("Sister-in-law Mia works at Tesco") != "sister"
    assert not fits(about_of("Brother-in-law lives in Leeds"), "Where does my brother live?")


def test_a_relation_after_a_preposition_is_the_object_of_the_users_act() -> None:
    # "How much do I wire to my mom?" asks about what the user does
    assert asks_about("Roughly how much do I wire to my mom and dad each month?") == USER
    assert asks_about("What did I buy for my sister last Christmas?") == USER
    assert asks_about("我每个月给我妈打多少钱？") == USER
    assert asks_about("What does my mom do for a living?") == "mother"
    assert fits(USER, "Roughly how much do I wire to my mom and dad each month?")


def test_a_question_about_the_whole_household_takes_its_members() -> None:
    q = "2026年五一想带全家去欧洲玩十天，你觉得合适吗？"
    assert fits("儿子", q, "advice")
    assert fits("son", "The neighbors invited all of us to the fireworks. Anything to think about?",
                "advice")
    assert not fits("同事", q, "advice")  # not a household member
    assert not fits("儿子", "我今晚能吃火锅吗？", "advice")
    assert not fits("儿子", "我们家的房子是哪年买的？", "fact")  # a fact question: whose fact counts


# -- whom a written memory is about (the write path) ---------------------------------------
def test_names_the_user_gave_stand_for_their_relation_or_the_user() -> None:
    said = ["我叫张三，我老公阿伟在天府软件园上班", "My partner Jonas runs marathons",
            "我们养了一只柯基叫旺财", "My son Kai just passed his driving test"]
    assert names_in(said + ["user's dog Biscuit", "我家猫年糕"]) == {
        "阿伟": "老公", "张三": USER, "旺财": "旺财", "Jonas": "partner", "Kai": "son",
        "Biscuit": "dog", "年糕": "猫"}
    assert names_in(["妈妈"]) == {}  # a relation alone names no one


@pytest.mark.parametrize(("said", "fact", "who"), [
    ("妹妹小雨", "小雨在杭州读研", "妹妹"), ("user's daughter Mia", "Mia is five", "daughter"),
    ("我家猫年糕", "年糕吐毛球", "猫"), ("user's cats", "Salt steals the renal diet", "cat"),
    # the user's own name, the user in other words, or a thing: the fact is the user's
    ("张三", "张三是做后端开发的", USER), ("自己", "每天加班到九点", USER), ("user", "Allergic to penicillin", USER),
    ("", "Allergic to penicillin", USER), ("  ", "对花生过敏", USER),
    # said to be the user's, but it opens with a relation or a known name
    ("user", "Jonas has done six marathons", "partner"), ("用户", "女儿朵朵六岁", "女儿"),
    ("user", "阿伟在天府软件园上班", "老公"),
    # someone the rule can't place keeps the model's words
    ("user's nurse", "No grapefruit with warfarin", "user's nurse"), ("小林", "小林是遛狗师", "小林"),
])
def test_written_about_gives_a_key_the_gate_reads(said: str, fact: str, who: str) -> None:
    names = {"张三": USER, "Jonas": "partner", "阿伟": "老公"}
    assert written_about(said, fact, names) == who


def test_a_written_memory_about_a_relation_fits_the_question_about_that_relation() -> None:
    """The model's own words ("妹妹小雨", "张三") never fit; the key does."""
    assert not fits("妹妹小雨", "我妹妹在哪读书？") and fits(written_about("妹妹小雨", "小雨在杭州读研", {}), "我妹妹在哪读书？")
    names = names_in(["你好，我叫张三，是做后端开发的。"])
    assert not fits("张三", "我是做什么工作的？") and fits(written_about("张三", "张三是做后端开发的", names), "我是做什么工作的？")

