"""The model as a relevance judge (相关性判断): one prefill, the first token's probabilities.

The gate (:mod:`gya_memory.answer.gate`) asks the chat model about one candidate at a time, by
the question's kind:

- the **judge** (advice and general questions): "does the answer need this fact?", read as
  ``P(yes) / (P(yes) + P(no))`` (:func:`judge_relevance`);
- the **reader** (fact questions): "answer from this one fact, or reply unknown", read as
  ``1 - P(unknown)`` (:func:`reader_relevance`; SQuAD 2.0's abstention).

A graded 0-3 judge ("Beyond Yes and No", arXiv 2310.14122) was measured and not kept: it lives
with the other gate experiments, :mod:`gya_memory.lab.gate_features`.

Each prompt is written in the question's language, with examples written for it (none comes
from the evaluation or calibration sets); the question comes before the fact, so the
judgements of one question share their prefix in the model's prompt cache. No text is
generated: one prefill per candidate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class ProbabilityModel(Protocol):
    """What the judge needs of a chat model: the first token's probabilities."""

    def next_token_probs(self, messages: Sequence[Mapping[str, Any]], *,
                         top: int = 10) -> dict[str, float]: ...


JUDGE_SYSTEM = (
    "A user asks a question. You see one fact remembered about the user. Does the answer need "
    "this fact?\n"
    "yes: the fact states exactly what is asked, or it is a fact about the user (health, diet, "
    "schedule, plans, equipment) that changes what the right advice is.\n"
    "no: the fact is about someone or something else than what is asked (another person, "
    "another pet, another item), or it only mentions the topic without the detail that is "
    "asked for.\n"
    "Question: 周五部门聚会吃火锅，我点锅底该注意什么？ Fact: 这阵子口腔溃疡，吃不了辣 -> yes\n"
    "Question: What does my wife do for a living? Fact: Works as a dentist in Leeds -> no\n"
    "Question: 我儿子的同桌叫什么？ Fact: 儿子在读初二，成绩中等 -> no\n"
    "Question: Any tips for my run tomorrow? Fact: Sprained left ankle last week -> yes\n"
    "Question: 我妈的降压药一天吃几片？ Fact: 母亲有高血压，一直在吃药 -> no\n"
    "Question: Can I have the cheesecake? Fact: Lactose intolerant -> yes\n"
    "Question: 我下周去哪出差？ Fact: 下周三要去深圳见客户 -> yes\n"
    "Question: What brand is my son's bike? Fact: Son rides his bike to school -> no\n"
    "Reply with one word: yes or no."
)
"""The judge's instructions. Its examples are written for it: none comes from the evaluation
set, the calibration set or the article's example (聚餐 / 戒咖啡, which notebooks 05 and 06 ask),
so the judge's score there is a fair test."""

JUDGE_SYSTEM_ZH = (
    "用户问了一个问题。你看到一条记住的、关于用户的事实。回答这个问题需要这条事实吗？\n"
    "yes：事实正好说出了问题问的东西；或者它是用户本人的情况（健康、饮食、作息、计划、装备），"
    "会改变正确的建议。\n"
    "no：事实说的是别人或别的东西（另一个人、另一只宠物、另一件物品），或者只是同一个话题，"
    "却没有问题问的那个细节；或者它是打算、计划，而问题问的是已经发生的事。\n"
    "问题：周五部门聚会吃火锅，我点锅底该注意什么？ 事实：这阵子口腔溃疡，吃不了辣 -> yes\n"
    "问题：我老婆是做什么工作的？ 事实：在牙科诊所当医生 -> no\n"
    "问题：我儿子的同桌叫什么？ 事实：儿子在读初二，成绩中等 -> no\n"
    "问题：明天跑步有什么要注意的？ 事实：上周左脚踝扭伤了 -> yes\n"
    "问题：我妈的降压药一天吃几片？ 事实：母亲有高血压，一直在吃药 -> no\n"
    "问题：芝士蛋糕我能吃吗？ 事实：乳糖不耐受 -> yes\n"
    "问题：我下周去哪出差？ 事实：下周三要去深圳见客户 -> yes\n"
    "问题：我去年在日本玩了几天？ 事实：打算明年春天去日本 -> no\n"
    "只回答一个词：yes 或 no。"
)
"""The judge's instructions for a Chinese question, in Chinese (the verdict words stay
``yes``/``no``, so one probability rule reads both)."""


def pair_messages(question: str, fact: str, language: str | None,
                  systems: tuple[str, str], forms: tuple[str, str]) -> list[dict[str, str]]:
    """One (question, fact) prompt in the question's language (``language`` overrides it):
    ``systems`` and ``forms`` are the English and Chinese instructions and user lines, the
    user line with ``{q}`` and ``{f}`` for the question and the fact, each made one line."""
    from gya_memory.base.text import language_of

    zh = (language or language_of(question)) == "zh"
    form = forms[1] if zh else forms[0]
    values = {"q": " ".join(question.split()), "f": " ".join(fact.split())}
    return [{"role": "system", "content": systems[1] if zh else systems[0]},
            {"role": "user", "content": re.sub(r"\{([qf])\}", lambda m: values[m.group(1)], form)}]


def judge_messages(question: str, fact: str, *, language: str | None = None) -> list[dict[str, str]]:
    """The judge's prompt, in the question's language (``language`` overrides it). The
    question comes before the fact, so the judgements of one question share their prefix
    (a server with a prompt cache reads it once; the local model keeps the judge in a
    llama.cpp slot of its own, so answers don't evict it)."""
    return pair_messages(question, fact, language, (JUDGE_SYSTEM, JUDGE_SYSTEM_ZH),
                         ("Question: {q} Fact: {f} ->", "问题：{q} 事实：{f} ->"))


READER_SYSTEM = (
    "Answer the user's question from the one fact given, in a few words. The fact is about "
    "the user unless it names someone else. If the fact does not state the answer (it is "
    "about another person or thing, lacks the asked detail, is only a plan, or was replaced "
    "by a newer fact), reply exactly: unknown"
)
READER_SYSTEM_ZH = (
    "只根据给出的这一条事实，用几个字回答用户的问题。事实说的是用户本人，除非它点名了别人。"
    "如果这条事实没有说出答案（说的是别人或别的东西、缺少问的那个细节、只是打算、或者已被新情况取代），"
    "只回复：unknown"
)


def reader_messages(question: str, fact: str, *, language: str | None = None) -> list[dict[str, str]]:
    """The reader's prompt: answer the question from the fact, or say ``unknown``."""
    return pair_messages(question, fact, language, (READER_SYSTEM, READER_SYSTEM_ZH),
                         ("Fact: {f}\nQuestion: {q}", "事实：{f}\n问题：{q}"))


def reader_relevance(model: ProbabilityModel, question: str, fact: str, *,
                     language: str | None = None) -> float:
    """1 - P(the reader's first token is "unknown"): can the question be answered from
    this fact alone? (SQuAD 2.0's abstention, as one prefill.)"""
    probs = model.next_token_probs(reader_messages(question, fact, language=language), top=20)
    unknown = sum(p for t, p in probs.items() if is_unknown_token(t))
    return 1.0 - min(1.0, unknown)


def is_unknown_token(token: str) -> bool:
    """Is this first token the reader's "unknown" (or the start of it, or 未知 / 不知道)?"""
    t = token.strip("_ ").lower()
    return (len(t) >= 2 and "unknown".startswith(t)) or t in ("未知", "不知道")


def judge_relevance(model: ProbabilityModel, question: str, fact: str, *,
                    language: str | None = None) -> float:
    """``P(yes)`` that ``fact`` is needed to answer ``question``, from the first token:
    ``p(yes) / (p(yes) + p(no))`` over the model's top tokens (0.5 if it offers neither)."""
    probs = model.next_token_probs(judge_messages(question, fact, language=language))
    yes, no = probs.get("yes", 0.0), probs.get("no", 0.0)
    return yes / (yes + no) if yes + no > 0 else 0.5
