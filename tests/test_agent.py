"""The closed loop: retrieval triggers, the recall_memory tool loop, traces and grounding.

No real model here: :class:`ScriptedLLM` returns queued replies and records every request,
so the tests check the mechanism (what went into which message, what the trace says, the
tool loop) and never depend on a model's wording. Retrieval is real: a
``SemanticMemory(":memory:")`` with the fast, deterministic TF-IDF embedder.

The agent's retrieval gate is on by default. ScriptedLLM gives no token probabilities, so
there the gate's cosine floor (for TF-IDF: the embedder's threshold) and its pool decide;
:class:`JudgingLLM` adds a scripted relevance judge. ``gate=None`` is the agent without a
gate (the policy's ``min_score`` is the only filter).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from gya_memory.answer.agent import RECALL_TOOL, MemoryAgent, Trace
from gya_memory.lab.agent_levers import LabAgent
from gya_memory.answer.grounding import Grounding, check_grounding, ground
from gya_memory.base.text import quote
from gya_memory.answer.context import _TEXT, CLOSE, OPEN, Policy, assemble, no_hit_block, no_hit_note
from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
from gya_memory.teaching.examples import FACTS_EN, FACTS_ZH, USER_ZH, notebook_clock
from gya_memory.answer.gate import FACT_MIN, GENERAL_MIN, JUDGE_MIN, Gate, GateDecision
from gya_memory.answer.judge import READER_SYSTEM, READER_SYSTEM_ZH, judge_messages, reader_messages
from gya_memory.answer.questions import question_kind
from gya_memory.answer.llm.interface import ChatLLM, LLMError, Reply, check_messages
from gya_memory.answer.llm.tools import ToolCall
from gya_memory.semantic.values import Hit
from gya_memory.semantic.memory import SemanticMemory

COFFEE = "最近在戒咖啡，想少喝一点"
NAME = "用户叫张三"
JOB = "用户是一名后端工程师"
ALICE = "The user's name is Alice"
ALL_TEXTS = [f for _, f, _ in FACTS_ZH + FACTS_EN]
COFFEE_Q = "我想喝咖啡，有什么建议？"  # TF-IDF: only the coffee memory passes the threshold
WEATHER_Q = "今天天气怎么样？"  # TF-IDF: nothing passes
NO_HIT_ZH = _TEXT["zh"]["no_hit"]  # from the module: rewording it does not break the tests
NO_HIT_EN = _TEXT["en"]["no_hit"]
ADVICE_ZH = _TEXT["zh"]["no_hit_advice"]
ADVICE_EN = _TEXT["en"]["no_hit_advice"]
FACT_Q_ZH = "我女儿在哪个学校上学来着？"  # a fact question none of the memories answers
# The scripted model's probabilities, on either side of every threshold (the thresholds may
# be tuned again: the tests follow the constants, not numbers).
PASS = (1 + max(FACT_MIN, JUDGE_MIN, GENERAL_MIN)) / 2
FAIL = min(FACT_MIN, JUDGE_MIN, GENERAL_MIN) / 2
BELOW_FLOOR = "dropped: gate: below floor"
OVER_POOL = "dropped: gate: over pool"
FACTS = {COFFEE: ["咖啡"], NAME: ["张三"], JOB: ["后端", "工程师"], ALICE: ["Alice"]}


# -- the test doubles -------------------------------------------------------------------------
def say(text: str = "", *calls: ToolCall) -> Reply:
    return Reply(text, "scripted", 12, 3, list(calls), "tool_calls" if calls else "stop")


def recall(query: Any = None, call_id: str = "call_0") -> ToolCall:
    return ToolCall(call_id, "recall_memory", {} if query is None else {"query": query})


class ScriptedLLM(ChatLLM):
    """Returns queued replies in order; records a snapshot of every request it gets."""

    name = "scripted"

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def chat(self, messages: Sequence[Mapping[str, Any]], *, max_tokens: int = 256,
             temperature: float = 0.0, seed: int = 0, stop: Sequence[str] | None = None,
             tools: Sequence[Mapping[str, Any]] | None = None,
             tool_choice: str | Mapping[str, Any] | None = None) -> Reply:
        check_messages(messages)  # what a real back end would refuse, this refuses too
        # a deep copy: the caller may append to its list after the call
        self.calls.append({"messages": copy.deepcopy(list(messages)),
                           "tools": copy.deepcopy(tools), "max_tokens": max_tokens})
        if not self.replies:
            raise AssertionError(f"unscripted call #{len(self.calls)}")
        return self.replies.pop(0)


_FACT_IN_PROMPT = re.compile(r"(?:Fact: |事实：)(.*?)(?: ->\Z|\n)")


class JudgingLLM(ScriptedLLM):
    """A ScriptedLLM that also gives first-token probabilities, so the gate's model step
    runs: per fact text (``default`` for the others) the probability that the fact is
    relevant, read as ``P(yes)`` by the judge (advice and general questions) and as
    ``1 - P(unknown)`` by the reader (fact questions); records every prompt."""

    gives_probabilities = True

    def __init__(self, *replies: Reply, p_yes: Mapping[str, float] | None = None,
                 default: float = PASS) -> None:
        super().__init__(*replies)
        self.p_yes = dict(p_yes or {})
        self.default = default
        self.judged: list[list[dict[str, Any]]] = []

    @staticmethod
    def is_reader(messages: Sequence[Mapping[str, Any]]) -> bool:
        return messages[0]["content"] in (READER_SYSTEM, READER_SYSTEM_ZH)

    def fact(self, messages: Sequence[Mapping[str, Any]]) -> str:
        return _FACT_IN_PROMPT.search(str(messages[-1]["content"])).group(1)

    def next_token_probs(self, messages: Sequence[Mapping[str, Any]], *,
                         top: int = 10) -> dict[str, float]:
        self.judged.append(copy.deepcopy(list(messages)))
        p = self.p_yes.get(self.fact(messages), self.default)
        if self.is_reader(messages):
            return {"unknown": 1 - p, "The": p}
        return {"yes": p, "no": 1 - p}

    @property
    def judged_facts(self) -> list[str]:
        return [self.fact(m) for m in self.judged]


class FakeMemory:
    """The two things MemoryAgent needs of a memory, with fixed hits; records the calls."""

    def __init__(self, hits: list[Hit], threshold: float = 0.5) -> None:
        self.hits = hits
        self.searches: list[tuple[str, int]] = []
        self.thresholds: list[str] = []
        outer = self

        class _Embedder:
            def threshold(self, query: str) -> float:
                outer.thresholds.append(query)
                return threshold

        self.embedder = _Embedder()

    def candidates(self, query: str, top_k: int = 10) -> list[Hit]:
        self.searches.append((query, top_k))
        return [Hit(h.id, h.score, h.text, dict(h.payload)) for h in self.hits[:top_k]]


@pytest.fixture(scope="module")
def memory() -> Iterator[SemanticMemory]:
    mem = SemanticMemory(":memory:", embedder=TFIDFEmbedder(), user_id=USER_ZH,
                         clock=notebook_clock())
    mem.store_many([(fact, {"subject": subject, "session_id": session})
                    for subject, fact, session in FACTS_ZH + FACTS_EN])
    yield mem
    mem.close()


def tool_messages(messages: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, m) for i, m in enumerate(messages) if m["role"] == "tool"]


# -- trigger "program" ---------------------------------------------------------------------------
def test_program_trigger_sends_exactly_the_trace_messages(memory: SemanticMemory) -> None:
    llm = ScriptedLLM(say("那就少喝点吧。"))
    trace = MemoryAgent(memory, llm).ask(COFFEE_Q)
    assert len(llm.calls) == 1
    assert llm.calls[0]["messages"] == trace.messages
    assert llm.calls[0]["tools"] is None
    assert trace.trigger == "program" and trace.question == COFFEE_Q
    assert trace.answer == "那就少喝点吧。" and trace.reply.model == "scripted"
    # retrieval asks for more than top_k, so the trace shows what was cut
    assert len(trace.candidates) == 6
    assert sorted(h.text for h in trace.candidates) == sorted(ALL_TEXTS)
    # only the coffee memory passes; it is in the user message, fenced
    assert [(p.ref, p.hit.text, p.message_index) for p in trace.assembly.placed] == [
        (1, COFFEE, 1)]
    user = trace.messages[1]
    assert user["role"] == "user"
    assert user["content"].endswith(f"{_TEXT['zh']['question']}{COFFEE_Q}")
    # the plain form: the fact and its day, no score, subject or session
    assert f"{OPEN}\n- {COFFEE} (2026-09-01)\n{CLOSE}\n{_TEXT['zh']['after']}" in user["content"]
    assert "score" not in user["content"] and "session-A" not in user["content"]
    for text in ALL_TEXTS:
        if text != COFFEE:
            assert text not in str(trace.messages)


def test_cite_style_numbers_the_memories_with_their_metadata(memory: SemanticMemory) -> None:
    trace = MemoryAgent(memory, ScriptedLLM(say("ok")), Policy(style="cite")).ask(COFFEE_Q)
    user = trace.messages[1]["content"]
    assert f"[1] {COFFEE} (score " in user
    assert "偏好 · session-A · 2026-09-01T09:01:00+08:00)" in user
    assert f"{CLOSE}\n{_TEXT['zh']['cite']}\n\n" in user and _TEXT["zh"]["after"] not in user


def test_fates_say_where_each_hit_went_or_why_not(memory: SemanticMemory) -> None:
    trace = MemoryAgent(memory, ScriptedLLM(say("ok")), Policy(placement="block")).ask(COFFEE_Q)
    fates = {hit.text: fate for hit, fate in trace.fates()}
    assert [hit for hit, _ in trace.fates()] == trace.candidates  # in retrieval order
    assert fates[COFFEE] == "[1] -> message 1 (system)"
    assert trace.messages[1]["role"] == "system" and COFFEE in trace.messages[1]["content"]
    assert trace.messages[2] == {"role": "user", "content": COFFEE_Q}
    # the gate: every candidate is weighed against the floor (a free check) before the pool
    assert [fate for _, fate in trace.fates()] == ["[1] -> message 1 (system)"] + [BELOW_FLOOR] * 5
    assert all(isinstance(d, GateDecision) for d in trace.gate)
    assert [d.hit for d in trace.gate] == trace.candidates
    assert [(d.passed, d.reason) for d in trace.gate] == [(True, "passed")] + [
        (False, "below floor")] * 5
    assert [d.p_yes for d in trace.gate] == [None] * 6  # no judge: no probabilities

    # without a gate, the embedder's threshold (as min_score) drops them all alike
    trace = MemoryAgent(memory, ScriptedLLM(say("ok")), Policy(placement="block"),
                        gate=None).ask(COFFEE_Q)
    fates = {hit.text: fate for hit, fate in trace.fates()}
    assert fates[COFFEE] == "[1] -> message 1 (system)" and trace.gate == []
    assert {fates[t] for t in ALL_TEXTS if t != COFFEE} == {"dropped: below min_score"}


def test_gate_drops_come_before_the_policys(memory: SemanticMemory) -> None:
    fake = FakeMemory([Hit("a", 0.9, "甲", {}), Hit("b", 0.8, "乙", {}), Hit("c", 0.7, "丙", {}),
                       Hit("d", 0.2, "丁", {})], threshold=0.5)
    trace = MemoryAgent(fake, ScriptedLLM(say("ok")), Policy(top_k=1), gate=Gate(pool=2)).ask("问题")
    assert fake.searches == [("问题", 5)] and fake.thresholds == ["问题"]
    assert [(d.hit.text, d.reason) for d in trace.assembly.dropped] == [
        ("丙", "gate: over pool"), ("丁", "gate: below floor"), ("乙", "over top_k")]
    assert [p.hit.text for p in trace.assembly.placed] == ["甲"]
    assert [f for _, f in trace.fates()] == [
        "[1] -> message 1 (user)", "dropped: over top_k", OVER_POOL, BELOW_FLOOR]
    assert [(d.hit.text, d.passed) for d in trace.gate] == [
        ("甲", True), ("乙", True), ("丙", False), ("丁", False)]


def test_the_agents_gate_settings_are_used() -> None:
    hits = [Hit("a", 0.9, "甲", {}), Hit("b", 0.8, "乙", {}), Hit("c", 0.7, "丙", {})]
    trace = MemoryAgent(FakeMemory(hits), ScriptedLLM(say("ok")), gate=Gate(pool=1)).ask("问")
    assert [p.hit.text for p in trace.assembly.placed] == ["甲"]
    assert [f for _, f in trace.fates()][1:] == [OVER_POOL, OVER_POOL]
    # a floor of the gate's own wins over the embedder's
    trace = MemoryAgent(FakeMemory(hits), ScriptedLLM(say("ok")), gate=Gate(floor=0.85)).ask("问")
    assert [p.hit.text for p in trace.assembly.placed] == ["甲"]
    assert [f for _, f in trace.fates()][1:] == [BELOW_FLOOR, BELOW_FLOOR]


def test_screen() -> None:
    hits = [Hit("a", 0.9, "甲", {}), Hit("b", 0.3, "乙", {})]
    fake = FakeMemory(hits, threshold=0.5)
    kept, decisions = MemoryAgent(fake, ScriptedLLM()).screen("问题", hits, "查询")
    assert kept == hits[:1] and fake.thresholds == ["查询"]  # the floor is the query's
    assert [(d.hit, d.passed, d.reason) for d in decisions] == [
        (hits[0], True, "passed"), (hits[1], False, "below floor")]
    kept, decisions = MemoryAgent(fake, ScriptedLLM(), gate=None).screen("问题", hits)
    assert kept == hits and decisions == []


def test_threshold_defaults_to_the_embedders(memory: SemanticMemory) -> None:
    """Without a gate, the policy's min_score defaults to the embedder's threshold."""
    trace = MemoryAgent(memory, ScriptedLLM(say("ok")), gate=None).ask(COFFEE_Q)
    assert trace.assembly.policy.min_score == memory.embedder.threshold(COFFEE_Q)
    for d in trace.assembly.dropped:
        assert d.hit.score < trace.assembly.policy.min_score

    fake = FakeMemory([Hit("a", 0.7, "甲", {}), Hit("b", 0.3, "乙", {})], threshold=0.5)
    trace = MemoryAgent(fake, ScriptedLLM(say("ok")), gate=None).ask("问题")
    assert fake.thresholds == ["问题"] and fake.searches == [("问题", 6)]
    assert [p.hit.text for p in trace.assembly.placed] == ["甲"]
    assert dict((h.text, f) for h, f in trace.fates())["乙"] == "dropped: below min_score"


def test_the_gate_floor_defaults_to_the_embedders_threshold(memory: SemanticMemory) -> None:
    """With the gate (the default) the embedder's threshold is the gate's floor, and the
    policy keeps no min_score of its own."""
    trace = MemoryAgent(memory, ScriptedLLM(say("ok"))).ask(COFFEE_Q)
    assert trace.assembly.policy.min_score is None
    floor = memory.embedder.threshold(COFFEE_Q)
    for d in trace.gate:
        assert d.reason != "below floor" or d.hit.score < floor
        assert d.reason != "passed" or d.hit.score >= floor

    fake = FakeMemory([Hit("a", 0.7, "甲", {}), Hit("b", 0.3, "乙", {})], threshold=0.5)
    trace = MemoryAgent(fake, ScriptedLLM(say("ok"))).ask("问题")
    assert fake.thresholds == ["问题"] and fake.searches == [("问题", 6)]
    assert [p.hit.text for p in trace.assembly.placed] == ["甲"]
    assert dict((h.text, f) for h, f in trace.fates())["乙"] == BELOW_FLOOR


def test_an_explicit_min_score_wins(memory: SemanticMemory) -> None:
    fake = FakeMemory([Hit("a", 0.7, "甲", {}), Hit("b", 0.3, "乙", {})], threshold=0.5)
    trace = MemoryAgent(fake, ScriptedLLM(say("ok")), Policy(min_score=0.2, top_k=4),
                        gate=None).ask("问")
    assert fake.thresholds == [] and fake.searches == [("问", 8)]
    assert [p.hit.text for p in trace.assembly.placed] == ["甲", "乙"]

    # with the gate, its floor applies too: a min_score below it lets nothing more through
    fake = FakeMemory([Hit("a", 0.7, "甲", {}), Hit("b", 0.3, "乙", {})], threshold=0.5)
    trace = MemoryAgent(fake, ScriptedLLM(say("ok")), Policy(min_score=0.2, top_k=4)).ask("问")
    assert fake.thresholds == ["问"] and fake.searches == [("问", 8)]
    assert trace.assembly.policy.min_score == 0.2
    assert [p.hit.text for p in trace.assembly.placed] == ["甲"]
    assert [f for _, f in trace.fates()] == ["[1] -> message 1 (user)", BELOW_FLOOR]

    # and a min_score above the floor still drops what the gate let through
    for gate in (Gate(), None):
        llm = ScriptedLLM(say("不知道"))
        trace = MemoryAgent(memory, llm, Policy(min_score=0.99), gate=gate).ask(COFFEE_Q)
        assert trace.assembly.no_hit  # an advice question: the advice note follows it
        assert llm.calls[0]["messages"][-1]["content"] == f"{COFFEE_Q}\n\n{ADVICE_ZH}"
        assert COFFEE not in str(llm.calls[0]["messages"])
        assert dict((h.text, f) for h, f in trace.fates())[COFFEE] == "dropped: below min_score"


def test_no_relevant_memory_on_a_general_question_sends_the_bare_question(
        memory: SemanticMemory) -> None:
    assert question_kind(WEATHER_Q) == "general"
    llm = ScriptedLLM(say("晴。"))
    trace = MemoryAgent(memory, llm).ask(WEATHER_Q)
    assert trace.candidates and trace.assembly.no_hit and trace.kind == "general"
    assert trace.messages[-1] == {"role": "user", "content": WEATHER_Q}
    assert [f for _, f in trace.fates()] == [BELOW_FLOOR] * 6
    for text in ALL_TEXTS:
        assert text not in str(llm.calls[0]["messages"])
    for key in ("no_hit", "no_hit_advice", "tool_no_hit", "intro"):
        assert _TEXT["zh"][key] not in str(llm.calls[0]["messages"])

    llm = ScriptedLLM(say("晴。"))
    trace = MemoryAgent(memory, llm, gate=None).ask(WEATHER_Q)
    assert trace.assembly.no_hit and trace.messages[-1] == {"role": "user", "content": WEATHER_Q}
    assert {f for _, f in trace.fates()} == {"dropped: below min_score"}


@pytest.mark.parametrize("gate", [Gate(), None])
def test_no_relevant_memory_on_a_fact_question_sends_the_fact_note(
        memory: SemanticMemory, gate: Gate | None) -> None:
    assert question_kind(FACT_Q_ZH) == "fact"
    llm = ScriptedLLM(say("我不知道，你还没告诉过我。"))
    trace = MemoryAgent(memory, llm, gate=gate).ask(FACT_Q_ZH)
    assert trace.candidates and trace.assembly.no_hit and trace.kind == "fact"
    assert llm.calls[0]["messages"][-1] == {"role": "user",
                                            "content": f"{FACT_Q_ZH}\n\n{NO_HIT_ZH}"}
    assert OPEN not in str(llm.calls[0]["messages"])
    for text in ALL_TEXTS:
        assert text not in str(llm.calls[0]["messages"])


def test_an_english_question_gets_english_instructions(memory: SemanticMemory) -> None:
    llm = ScriptedLLM(say("Alice."))
    trace = MemoryAgent(memory, llm).ask("What is my name?")
    assert [p.hit.text for p in trace.assembly.placed] == [ALICE]
    assert trace.messages[0] == {"role": "system", "content": _TEXT["en"]["system"]}
    assert trace.messages[1]["content"].startswith(_TEXT["en"]["intro"] + "\n" + OPEN)
    assert trace.messages[1]["content"].endswith(
        f"{CLOSE}\n{_TEXT['en']['after']}\n\n{_TEXT['en']['question']}What is my name?")
    assert _TEXT["zh"]["intro"] not in str(llm.calls[0]["messages"])

    llm = ScriptedLLM(say("I don't know."))
    trace = MemoryAgent(memory, llm).ask("What is my blood type?")
    assert trace.assembly.no_hit
    assert trace.messages[-1]["content"] == f"What is my blood type?\n\n{NO_HIT_EN}"
    # an explicit language wins over the question's
    llm = ScriptedLLM(say("不知道。"))
    trace = MemoryAgent(memory, llm, Policy(language="zh")).ask("What is my blood type?")
    assert trace.messages[-1]["content"] == f"What is my blood type?\n\n{NO_HIT_ZH}"
    assert trace.messages[0] == {"role": "system", "content": _TEXT["zh"]["system"]}


def test_trigger_none_sends_no_memory_at_all(memory: SemanticMemory) -> None:
    llm = ScriptedLLM(say("多喝水。"))
    trace = MemoryAgent(memory, llm, Policy(placement="system")).ask(COFFEE_Q, trigger="none")
    assert trace.trigger == "none" and trace.candidates == []
    assert llm.calls[0]["messages"] == trace.messages == [
        {"role": "system", "content": trace.messages[0]["content"]},
        {"role": "user", "content": COFFEE_Q},
    ]
    assert "<memories>" not in str(trace.messages) and NO_HIT_ZH not in str(trace.messages)
    assert trace.fates() == [] and trace.assembly.placed == [] and trace.gate == []

    fake = FakeMemory([Hit("a", 0.9, "甲", {})])
    MemoryAgent(fake, ScriptedLLM(say("ok"))).ask("问", trigger="none")
    assert fake.searches == [] and fake.thresholds == []  # not even searched


def test_history_system_and_max_tokens_pass_through(memory: SemanticMemory) -> None:
    history = [{"role": "user", "content": "我叫张三"}, {"role": "assistant", "content": "好的"}]
    llm = ScriptedLLM(say("ok"))
    agent = MemoryAgent(memory, llm, system="只用中文回答。", max_tokens=77)
    trace = agent.ask(COFFEE_Q, history=history)
    sent = llm.calls[0]
    assert sent["max_tokens"] == 77
    assert sent["messages"][0] == {"role": "system", "content": "只用中文回答。"}
    assert sent["messages"][1:3] == history
    assert sent["messages"][-1]["role"] == "user"
    assert sent["messages"][-1]["content"].endswith(COFFEE_Q)
    assert trace.assembly.placed[0].message_index == 3


def test_a_policy_per_call_overrides_the_agents(memory: SemanticMemory) -> None:
    agent = MemoryAgent(memory, ScriptedLLM(say("a"), say("b")), Policy(placement="user"))
    assert agent.ask(COFFEE_Q).assembly.placed[0].message_index == 1
    trace = agent.ask(COFFEE_Q, policy=Policy(placement="system"))
    assert trace.assembly.placed[0].message_index == 0
    assert trace.messages[-1] == {"role": "user", "content": COFFEE_Q}


def test_unknown_trigger_is_refused(memory: SemanticMemory) -> None:
    llm = ScriptedLLM(say("never"))
    with pytest.raises(ValueError, match="trigger"):
        MemoryAgent(memory, llm).ask(COFFEE_Q, trigger="always")  # type: ignore[arg-type]
    assert llm.calls == []


# -- trigger "model": the recall_memory tool loop -------------------------------------------------
def test_tool_loop(memory: SemanticMemory) -> None:
    first = say("", recall("咖啡"))
    llm = ScriptedLLM(first, say("你在戒咖啡 [1]，少喝点。"))
    trace = MemoryAgent(memory, llm).ask(COFFEE_Q, trigger="model")
    assert len(llm.calls) == 2
    one, two = llm.calls
    # round 1: the tool is offered; no memory is sent by the program
    assert one["tools"] == [RECALL_TOOL]
    assert [m["role"] for m in one["messages"]] == ["system", "user"]
    assert one["messages"][1] == {"role": "user", "content": COFFEE_Q}
    assert "<memories>" not in str(one["messages"])
    # round 2: the call, its result, and no tools: the model has to answer now
    assert two["tools"] is None
    assert two["messages"][:2] == one["messages"]
    assistant, result = two["messages"][2], two["messages"][3]
    assert assistant == first.as_message()
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["id"] == "call_0"
    assert assistant["tool_calls"][0]["function"]["name"] == "recall_memory"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"query": "咖啡"}
    assert result["role"] == "tool" and result["tool_call_id"] == "call_0"
    assert result["content"].startswith(OPEN) and result["content"].endswith(CLOSE)
    assert result["content"].split("\n")[1].startswith(f"[1] {COFFEE} (score ")
    assert len(result["content"].split("\n")) == 3
    for text in ALL_TEXTS:
        if text != COFFEE:
            assert text not in result["content"]
    # the trace
    assert trace.trigger == "model" and trace.tool_queries == ["咖啡"]
    assert trace.messages == two["messages"]
    assert trace.answer == "你在戒咖啡 [1]，少喝点。"
    assert [(p.ref, p.hit.text, p.message_index) for p in trace.assembly.placed] == [
        (1, COFFEE, 3)]
    assert [fate for _, fate in trace.fates()] == ["[1] -> message 3 (tool)"] + [BELOW_FLOOR] * 5
    assert trace.candidates[0].text == COFFEE
    assert [d.hit for d in trace.gate] == trace.candidates

    # without a gate, the threshold for the query is the min_score
    llm = ScriptedLLM(say("", recall("咖啡")), say("ok"))
    trace = MemoryAgent(memory, llm, gate=None).ask(COFFEE_Q, trigger="model")
    fates = {hit.text: fate for hit, fate in trace.fates()}
    assert fates[COFFEE] == "[1] -> message 3 (tool)" and trace.gate == []
    assert {fates[t] for t in ALL_TEXTS if t != COFFEE} == {"dropped: below min_score"}


def test_tool_loop_no_hit(memory: SemanticMemory) -> None:
    llm = ScriptedLLM(say("", recall("天气")), say("我不知道。"))
    trace = MemoryAgent(memory, llm).ask(WEATHER_Q, trigger="model")
    (i, result), = tool_messages(llm.calls[1]["messages"])
    assert i == 3 and result["content"] == no_hit_block("zh")
    assert trace.assembly.placed == [] and trace.assembly.no_hit
    assert trace.candidates and {f for _, f in trace.fates()} == {BELOW_FLOOR}
    for text in ALL_TEXTS:
        assert text not in str(trace.messages)

    llm = ScriptedLLM(say("", recall("天气")), say("我不知道。"))
    trace = MemoryAgent(memory, llm, gate=None).ask(WEATHER_Q, trigger="model")
    assert tool_messages(llm.calls[1]["messages"])[0][1]["content"] == no_hit_block("zh")
    assert {f for _, f in trace.fates()} == {"dropped: below min_score"}

    # the note is in the question's language (the tool's query does not decide it) ...
    llm = ScriptedLLM(say("", recall("天气")), say("I don't know."))
    MemoryAgent(memory, llm).ask("How is the weather?", trigger="model")
    assert tool_messages(llm.calls[1]["messages"])[0][1]["content"] == no_hit_block("en")
    # ... unless the policy names one
    llm = ScriptedLLM(say("", recall("weather")), say("不知道。"))
    MemoryAgent(memory, llm, Policy(language="zh")).ask("How is the weather?", trigger="model")
    assert tool_messages(llm.calls[1]["messages"])[0][1]["content"] == no_hit_block("zh")


@pytest.mark.parametrize("gate", [Gate(), None])
def test_tool_threshold_is_the_one_for_the_tools_query(gate: Gate | None) -> None:
    fake = FakeMemory([Hit("a", 0.7, "甲", {}), Hit("b", 0.3, "乙", {})], threshold=0.5)
    llm = ScriptedLLM(say("", recall("饮料")), say("ok"))
    trace = MemoryAgent(fake, llm, gate=gate).ask("问题", trigger="model")
    assert fake.thresholds == ["饮料"] and fake.searches == [("饮料", 6)]
    assert [p.hit.text for p in trace.assembly.placed] == ["甲"]
    assert dict((h.text, f) for h, f in trace.fates())["乙"] == (
        BELOW_FLOOR if gate else "dropped: below min_score")


def test_a_model_that_does_not_call_the_tool(memory: SemanticMemory) -> None:
    llm = ScriptedLLM(say("喝杯茶吧。"))
    trace = MemoryAgent(memory, llm).ask(COFFEE_Q, trigger="model")
    assert len(llm.calls) == 1 and llm.calls[0]["tools"] == [RECALL_TOOL]
    assert trace.candidates == [] and trace.tool_queries == [] and trace.fates() == []
    assert trace.gate == []
    assert trace.messages == llm.calls[0]["messages"]
    assert [m["role"] for m in trace.messages] == ["system", "user"]
    assert "candidates: none" in trace.to_text()
    assert trace.answer == "喝杯茶吧。"


def test_calls_to_other_tools_are_not_run(memory: SemanticMemory) -> None:
    llm = ScriptedLLM(say("", ToolCall("call_0", "get_weather", {"city": "上海"})))
    trace = MemoryAgent(memory, llm).ask(COFFEE_Q, trigger="model")
    assert len(llm.calls) == 1 and trace.tool_queries == [] and trace.candidates == []


@pytest.mark.parametrize("arguments", [{}, {"query": ""}, {"query": "   "}, {"query": None}])
def test_a_call_without_a_query_searches_for_the_question(memory: SemanticMemory,
                                                          arguments: dict) -> None:
    call = ToolCall("call_0", "recall_memory", arguments)
    llm = ScriptedLLM(say("", call), say("ok"))
    trace = MemoryAgent(memory, llm).ask(COFFEE_Q, trigger="model")
    assert trace.tool_queries == [COFFEE_Q]
    assert [p.hit.text for p in trace.assembly.placed] == [COFFEE]


def test_two_calls_in_one_reply_get_one_result_each(memory: SemanticMemory) -> None:
    llm = ScriptedLLM(say("", recall("咖啡", "call_0"), recall("张三", "call_1")), say("ok"))
    trace = MemoryAgent(memory, llm).ask("我是谁，我在戒什么？", trigger="model")
    assert len(llm.calls) == 2 and trace.tool_queries == ["咖啡", "张三"]
    msgs = llm.calls[1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool"]
    assert len(msgs[2]["tool_calls"]) == 2
    assert [m["tool_call_id"] for m in msgs[3:]] == ["call_0", "call_1"]
    assert f"[1] {COFFEE} (" in msgs[3]["content"] and NAME not in msgs[3]["content"]
    # numbering continues, so each [n] names one memory in the whole conversation
    assert f"[2] {NAME} (" in msgs[4]["content"] and COFFEE not in msgs[4]["content"]
    assert [(p.ref, p.hit.text, p.message_index) for p in trace.assembly.placed] == [
        (1, COFFEE, 3), (2, NAME, 4)]
    assert len(trace.candidates) == 12  # both searches' candidates, in order
    assert [d.hit for d in trace.gate] == trace.candidates  # and the gate's word on each


def test_at_most_two_rounds(memory: SemanticMemory) -> None:
    """A model that keeps asking gets two rounds of results, then the loop stops."""
    llm = ScriptedLLM(say("", recall("咖啡", "call_0")), say("", recall("张三", "call_1")),
                      say("", recall("工程师", "call_2")), say("never sent"))
    trace = MemoryAgent(memory, llm).ask(COFFEE_Q, trigger="model")
    assert len(llm.calls) == 3 and len(llm.replies) == 1
    assert [c["tools"] for c in llm.calls] == [[RECALL_TOOL], None, None]
    assert trace.tool_queries == ["咖啡", "张三"]
    assert [m["role"] for m in trace.messages] == [
        "system", "user", "assistant", "tool", "assistant", "tool"]
    assert trace.messages == llm.calls[2]["messages"]
    assert [(p.ref, p.hit.text, p.message_index) for p in trace.assembly.placed] == [
        (1, COFFEE, 3), (2, NAME, 5)]
    assert trace.reply.tool_calls[0].arguments == {"query": "工程师"}  # the last reply, unrun


# -- the gate's judge: a chat model that gives token probabilities --------------------------------
FOUR = [Hit("a", 0.9, "甲", {}), Hit("b", 0.8, "乙", {}), Hit("c", 0.4, "丙", {}),
        Hit("d", 0.3, "丁", {})]  # with threshold 0.5: two above the floor
JUDGED_NO = f"dropped: gate: judge: no (P(yes) {FAIL:.3f})"
READ_NO = f"dropped: gate: reader: unknown (P(answerable) {FAIL:.3f})"


def test_the_judge_drops_what_it_says_no_to() -> None:
    llm = JudgingLLM(say("ok"), p_yes={"乙": FAIL})
    trace = MemoryAgent(FakeMemory(FOUR, threshold=0.5), llm).ask("问题")
    assert trace.kind == "general"
    # only the candidates above the floor are judged, about the question
    assert llm.judged_facts == ["甲", "乙"]
    assert llm.judged == [judge_messages("问题", "甲"), judge_messages("问题", "乙")]
    assert len(llm.calls) == 1  # judging is not a chat call
    assert [p.hit.text for p in trace.assembly.placed] == ["甲"]
    assert [f for _, f in trace.fates()] == [
        "[1] -> message 1 (user)", JUDGED_NO, BELOW_FLOOR, BELOW_FLOOR]
    assert [(d.hit.text, d.passed, d.reason) for d in trace.gate] == [
        ("甲", True, "passed"), ("乙", False, "judge: no"), ("丙", False, "below floor"),
        ("丁", False, "below floor")]
    assert [d.p_yes for d in trace.gate] == [pytest.approx(PASS), pytest.approx(FAIL), None, None]
    assert [d.judge for d in trace.gate] == ["judge", "judge", None, None]
    assert [(d.hit.text, d.reason) for d in trace.assembly.dropped] == [
        ("乙", f"gate: judge: no (P(yes) {FAIL:.3f})"), ("丙", "gate: below floor"),
        ("丁", "gate: below floor")]
    sent = str(llm.calls[0]["messages"])
    assert "- 甲" in sent and all(t not in sent for t in ("乙", "丙", "丁"))
    assert f"  0.800  乙  ->  {JUDGED_NO}" in trace.to_text()
    assert f"<b>{JUDGED_NO}</b>" in trace._repr_html_()


def test_the_judge_rejecting_everything_sends_the_no_hit_note(memory: SemanticMemory) -> None:
    # an advice question: the judge says no, the advice note follows the question
    llm = JudgingLLM(say("少喝点。"), default=FAIL)
    trace = MemoryAgent(memory, llm).ask(COFFEE_Q)
    assert llm.judged_facts == [COFFEE]  # the only candidate above the floor
    assert trace.assembly.no_hit and trace.assembly.placed == [] and trace.kind == "advice"
    assert llm.calls[0]["messages"][-1] == {"role": "user", "content": f"{COFFEE_Q}\n\n{ADVICE_ZH}"}
    fates = [f for _, f in trace.fates()]
    assert fates == [JUDGED_NO] + [BELOW_FLOOR] * 5
    for text in ALL_TEXTS:
        assert text not in str(llm.calls[0]["messages"])

    # a fact question: the reader says "unknown", the fact note follows the question
    llm = JudgingLLM(say("I don't know."), default=FAIL)
    trace = MemoryAgent(memory, llm).ask("What is my name?")
    assert llm.judged_facts == [ALICE] and llm.judged == [reader_messages("What is my name?", ALICE)]
    assert trace.assembly.no_hit and trace.kind == "fact"
    assert trace.messages[-1] == {"role": "user", "content": f"What is my name?\n\n{NO_HIT_EN}"}
    assert [f for _, f in trace.fates()][0] == READ_NO
    assert trace.gate[0].judge == "reader"
    assert ALICE not in str(llm.calls[0]["messages"])


def test_the_judge_runs_only_for_a_model_that_gives_probabilities(memory: SemanticMemory) -> None:
    with pytest.raises(LLMError, match="probabilities"):  # the base class cannot
        ScriptedLLM().next_token_probs([{"role": "user", "content": "hi"}])

    class Silent(JudgingLLM):
        gives_probabilities = False

    llm = Silent(say("ok"), default=0.0)
    trace = MemoryAgent(FakeMemory(FOUR, threshold=0.5), llm).ask("问题")
    assert llm.judged == [] and [p.hit.text for p in trace.assembly.placed] == ["甲", "乙"]
    assert [d.p_yes for d in trace.gate] == [None] * 4

    # a gate without a judge does not ask, even a model that could answer
    llm = JudgingLLM(say("ok"), default=0.0)
    agent = MemoryAgent(FakeMemory(FOUR, threshold=0.5), llm, gate=Gate(judge_min=None))
    trace = agent.ask("问题")
    assert llm.judged == [] and [p.hit.text for p in trace.assembly.placed] == ["甲", "乙"]
    # and no gate at all: neither floor nor judge, only the policy's min_score
    llm = JudgingLLM(say("ok"), default=0.0)
    trace = MemoryAgent(FakeMemory(FOUR, threshold=0.5), llm, gate=None).ask("问题")
    assert llm.judged == [] and trace.gate == []
    assert [p.hit.text for p in trace.assembly.placed] == ["甲", "乙"]
    assert [f for _, f in trace.fates()][2:] == ["dropped: below min_score"] * 2


def test_the_judge_counts_against_the_pool_whatever_it_says() -> None:
    llm = JudgingLLM(say("ok"), p_yes={"甲": FAIL})
    trace = MemoryAgent(FakeMemory(FOUR, threshold=0.5), llm, gate=Gate(pool=1)).ask("问题")
    assert llm.judged_facts == ["甲"]  # 乙 is over the pool: never judged
    assert [(d.hit.text, d.reason) for d in trace.gate] == [
        ("甲", "judge: no"), ("乙", "over pool"), ("丙", "below floor"), ("丁", "below floor")]
    assert trace.assembly.no_hit and trace.messages[-1] == {"role": "user", "content": "问题"}


def test_the_tool_path_applies_the_gate() -> None:
    fake = FakeMemory(FOUR, threshold=0.5)
    llm = JudgingLLM(say("", recall("饮料")), say("ok"), p_yes={"乙": FAIL})
    trace = MemoryAgent(fake, llm).ask("问题", trigger="model")
    assert fake.thresholds == ["饮料"]  # the floor is the tool query's; the judge weighs the question
    assert llm.judged == [judge_messages("问题", "甲"), judge_messages("问题", "乙")]
    assert len(llm.calls) == 2
    (i, result), = tool_messages(llm.calls[1]["messages"])
    assert i == 3 and result["content"].split("\n")[1].startswith("[1] 甲 (")
    assert len(result["content"].split("\n")) == 3
    assert [f for _, f in trace.fates()] == [
        "[1] -> message 3 (tool)", JUDGED_NO, BELOW_FLOOR, BELOW_FLOOR]
    assert [(d.hit.text, d.reason) for d in trace.gate] == [
        ("甲", "passed"), ("乙", "judge: no"), ("丙", "below floor"), ("丁", "below floor")]
    assert trace.gate[1].p_yes == pytest.approx(FAIL)
    assert [d.reason for d in trace.assembly.dropped] == [
        f"gate: judge: no (P(yes) {FAIL:.3f})", "gate: below floor", "gate: below floor"]

    # the judge says no to everything: the tool result is the fenced no-hit block (not a
    # note by the question's kind)
    llm = JudgingLLM(say("", recall("饮料")), say("我不知道。"), default=FAIL)
    trace = MemoryAgent(FakeMemory(FOUR, threshold=0.5), llm).ask("问题", trigger="model")
    assert tool_messages(llm.calls[1]["messages"])[0][1]["content"] == no_hit_block("zh")
    assert trace.assembly.placed == [] and trace.assembly.no_hit
    assert [f for _, f in trace.fates()][:2] == [JUDGED_NO] * 2
    assert [m["content"] for m in llm.calls[1]["messages"] if m["role"] == "user"] == ["问题"]


def test_the_tool_path_gates_each_search(memory: SemanticMemory) -> None:
    question = "我是谁，我在戒什么？"
    assert question_kind(question) == "fact"  # so the reader weighs each candidate
    llm = JudgingLLM(say("", recall("咖啡", "call_0"), recall("张三", "call_1")), say("ok"),
                     p_yes={NAME: FAIL})
    trace = MemoryAgent(memory, llm).ask(question, trigger="model")
    assert llm.judged_facts == [COFFEE, NAME]
    assert llm.judged == [reader_messages(question, COFFEE), reader_messages(question, NAME)]
    msgs = llm.calls[1]["messages"]
    assert f"[1] {COFFEE} (" in msgs[3]["content"]
    assert msgs[4]["content"] == no_hit_block("zh")
    assert [(p.ref, p.hit.text, p.message_index) for p in trace.assembly.placed] == [
        (1, COFFEE, 3)]
    assert dict((h.text, f) for h, f in trace.fates()[6:])[NAME] == READ_NO
    assert len(trace.gate) == len(trace.candidates) == 12


# -- traces ------------------------------------------------------------------------------------
def test_to_text(memory: SemanticMemory) -> None:
    trace = MemoryAgent(memory, ScriptedLLM(say("少喝«咖啡»。"))).ask(COFFEE_Q)
    text = trace.to_text()
    assert text.startswith(f"question: {COFFEE_Q}\ntrigger:  program\nkind:     advice\ncandidates:\n")
    assert "<th>kind</th><td>advice</td>" in trace._repr_html_().replace(
        " style='text-align:left;vertical-align:top'", "")
    for hit, fate in trace.fates():
        assert f"  {hit.score:.3f}  {hit.text}  ->  {fate}" in text
    assert "messages:\n  0 system: " in text
    assert "  1 user: " in text
    assert text.endswith(f"answer (scripted, 3 tokens): {quote('少喝«咖啡»。')}")
    assert "«少喝‹咖啡›。»" in text
    assert "timings" not in text
    assert str(trace) == text
    assert "messages:" not in trace.to_text(show_messages=False)
    timed = trace.to_text(show_timings=True)
    assert "\ntimings: retrieve " in timed and " s, total " in timed
    assert set(trace.timings) == {"retrieve", "gate", "assemble", "answer", "total"}
    assert all(v >= 0 for v in trace.timings.values())


def test_to_text_of_a_tool_trace(memory: SemanticMemory) -> None:
    llm = ScriptedLLM(say("", recall("咖啡")), say("ok"))
    trace = MemoryAgent(memory, llm).ask(COFFEE_Q, trigger="model")
    text = trace.to_text()
    assert "trigger:  model" in text and "recall_memory called with: ['咖啡']" in text
    assert "  3 tool: <memories>" in text
    assert ">tool calls</th>" in trace._repr_html_()
    assert set(trace.timings) == {"total"}


def _script_trace(answer: str) -> Trace:
    hits = [Hit("x", 0.9, "<script>alert('hi')</script> 用户喜欢茶", {"session_id": "s"}),
            Hit("y", 0.01, "用户 & 朋友", {})]
    fake = FakeMemory(hits, threshold=0.5)
    return MemoryAgent(fake, ScriptedLLM(say(answer))).ask("我<喜欢>什么？")


def test_html_is_escaped() -> None:
    trace = _script_trace("你喜欢茶 <i>[1]</i>")
    page = trace._repr_html_()
    assert "<script>" not in page and "<i>" not in page
    assert "&lt;script&gt;alert(&#x27;hi&#x27;)&lt;/script&gt; 用户喜欢茶" in page
    assert "我&lt;喜欢&gt;什么？" in page
    assert "用户 &amp; 朋友" in page
    assert "«你喜欢茶 &lt;i&gt;[1]&lt;/i&gt;»" in page
    for _, fate in trace.fates():
        assert f"<b>{fate.replace('>', '&gt;')}</b>" in page
    assert "[1] -&gt; message 1 (user)" in page and BELOW_FLOOR in page
    assert "timings" not in page
    # the message sent to the model holds the defanged memory, not a live tag
    assert "(script)" in trace.messages[1]["content"]  # look-alikes of < > too


def test_quote() -> None:
    assert quote("好的") == "«好的»"
    assert quote("a «b» c") == "«a ‹b› c»"
    assert quote("") == "«»"


# -- grounding: the key-term rule on a trace (the content-unit rule: test_grounding.py) ---------
def grounded(answer: str, placed_texts: Sequence[str]) -> Grounding:
    hits = [Hit(t, 0.9, t, {}) for t in placed_texts]
    assembly = assemble("问题", hits, Policy(top_k=5, budget_chars=None))
    return check_grounding(Trace("问题", "program", hits, assembly, say(answer)), FACTS)


def test_grounding_used_the_memory() -> None:
    g = grounded("你在戒咖啡 [1]，晚上别喝了。", [COFFEE])
    assert g == Grounding(used=[0], invented=[], admits_unknown=False, cites=[1])
    assert g.verdict == "used"


def test_grounding_invented_a_fact() -> None:
    g = grounded("张三，你在戒咖啡。", [COFFEE])
    assert g.used == [0] and g.invented == ["张三"] and g.unsupported_units == ["张三"]
    assert g.verdict == "invented"  # even though it used one too
    g = grounded("你是后端工程师吧？", [])
    assert g.invented == ["后端", "工程师"] and g.verdict == "invented"


@pytest.mark.parametrize("answer", [
    "我不知道你的饮食习惯。", "我不清楚。", "记忆里没有相关信息。",
    "I don't know what you like.", "I don’t know.", "Sorry, I do not know.",
    "You haven't told me that.", "You haven’t mentioned it.", "I DON'T KNOW",
])
def test_grounding_admits_unknown(answer: str) -> None:
    g = grounded(answer, [])
    assert g.admits_unknown and g.used == [] and g.invented == []
    assert g.verdict == "admits"


def test_grounding_answered_without_facts() -> None:
    g = grounded("多喝水，少吃油腻。", [COFFEE])
    assert g == Grounding(used=[], invented=[], admits_unknown=False)
    assert g.verdict == "no user facts"


def test_grounding_is_case_insensitive_and_reads_citations() -> None:
    g = grounded("ALICE, see [2] and [1][2]; not [x].", [COFFEE, ALICE])
    assert g.used == [1] and g.cites == [1, 2]  # indexes into the memories given
    assert g.verdict == "used"


def test_grounding_of_real_traces(memory: SemanticMemory) -> None:
    with_memory = MemoryAgent(memory, ScriptedLLM(say("你在戒咖啡 [1]。"))).ask(COFFEE_Q)
    assert check_grounding(with_memory, FACTS).verdict == "used"
    control = MemoryAgent(memory, ScriptedLLM(say("你在戒咖啡。"))).ask(COFFEE_Q, trigger="none")
    assert check_grounding(control, FACTS).invented == ["咖啡"]
    no_hit = MemoryAgent(memory, ScriptedLLM(say("我不知道。"))).ask(WEATHER_Q)
    assert check_grounding(no_hit, FACTS).verdict == "admits"
    tool = MemoryAgent(memory, ScriptedLLM(say("", recall("咖啡")), say("别喝咖啡 [1]"))).ask(
        COFFEE_Q, trigger="model")
    assert check_grounding(tool, FACTS) == Grounding(used=[0], invented=[], admits_unknown=False,
                                                     cites=[1])


def test_grounding_flags_an_answer_built_on_memories_that_do_not_answer() -> None:
    hits = [Hit("a", 0.89, "用户是一名后端工程师", {}), Hit("b", 0.88, "用户的博客主要写 AI Agent", {})]
    assembly = assemble("用户去过哪里？", hits, Policy())
    trace = Trace("用户去过哪里？", "program", hits, assembly, Reply("用户去过博客。", "m", 1, 1))
    facts = {"用户是一名后端工程师": ["后端"], "用户的博客主要写 AI Agent": ["博客"]}
    g = check_grounding(trace, facts, relevant=[])
    blog = [p.hit.text for p in assembly.placed].index("用户的博客主要写 AI Agent")
    assert g.used == g.off_topic == [blog] and g.verdict == "off topic"
    assert check_grounding(trace, facts).verdict == "used"
    job = "用户是一名后端工程师"  # once a used memory answers, the answer is not off topic
    assert check_grounding(trace, facts, relevant=[job]).verdict == "off topic"
    both = Trace("用户去过哪里？", "program", hits, assembly, Reply("后端，博客。", "m", 1, 1))
    assert check_grounding(both, facts, relevant=[job]).verdict == "used"
    assert "«用户去过博客。»" in repr(trace) and "messages:" not in repr(trace)


def test_the_pool_follows_top_k_when_the_gate_has_none() -> None:
    hits = [Hit(str(i), 0.9 - i / 100, t, {}) for i, t in enumerate("甲乙丙丁戊")]
    trace = MemoryAgent(FakeMemory(hits), ScriptedLLM(say("ok")), Policy(top_k=4),
                        gate=Gate(pool=None)).ask("问")
    assert [p.hit.text for p in trace.assembly.placed] == ["甲", "乙", "丙", "丁"]
    trace = MemoryAgent(FakeMemory(hits), ScriptedLLM(say("ok")), Policy(top_k=4)).ask("问")
    assert [p.hit.text for p in trace.assembly.placed] == ["甲", "乙", "丙", "丁"]  # the default too


COFFEE_OLD = Hit("old", 0.80, "用户每天喝三杯咖啡", {"subject": "咖啡", "created_at": "2026-01-01T00:00:00"})
COFFEE_NEW = Hit("new", 0.70, "用户在戒咖啡", {"subject": "咖啡", "created_at": "2026-06-01T00:00:00"})
CONFLICT = [Hit("n", 0.95, "用户叫张三", {}), Hit("j", 0.90, "用户是后端工程师", {}), COFFEE_OLD,
            COFFEE_NEW]


def test_newest_wins_keeps_the_newer_of_the_memories_that_passed() -> None:
    trace = MemoryAgent(FakeMemory(CONFLICT), ScriptedLLM(say("ok")),
                        Policy(conflicts="newest_wins", top_k=4), gate=Gate(pool=None)).ask("问")
    assert [p.hit.text for p in trace.assembly.placed] == ["用户叫张三", "用户是后端工程师", "用户在戒咖啡"]
    assert dict((h.text, f) for h, f in trace.fates())["用户每天喝三杯咖啡"] == "dropped: superseded by newer"
    assert [(d.hit.text, d.passed, d.reason) for d in trace.gate][2] == (
        "用户每天喝三杯咖啡", False, "superseded by newer")
    # with show_both (the default) both stay
    trace = MemoryAgent(FakeMemory(CONFLICT), ScriptedLLM(say("ok")), Policy(top_k=4),
                        gate=Gate(pool=None)).ask("问")
    assert len(trace.assembly.placed) == 4


def test_newest_wins_runs_after_the_gate() -> None:
    """A newer memory the gate rejects does not take the older one that passed with it."""
    question = "我今天能喝咖啡吗？"
    assert question_kind(question) == "advice"
    llm = JudgingLLM(say("ok"), p_yes={COFFEE_NEW.text: FAIL})
    trace = MemoryAgent(FakeMemory(CONFLICT), llm, Policy(conflicts="newest_wins", top_k=4),
                        gate=Gate(pool=None)).ask(question)
    assert COFFEE_NEW.text in llm.judged_facts  # the newer one was judged, and said no to
    assert [p.hit.text for p in trace.assembly.placed] == ["用户叫张三", "用户是后端工程师", COFFEE_OLD.text]
    fates = dict((h.text, f) for h, f in trace.fates())
    assert fates[COFFEE_NEW.text] == JUDGED_NO
    assert fates[COFFEE_OLD.text].startswith("[3] -> message 1")
    assert [d.reason for d in trace.gate].count("superseded by newer") == 0


def test_a_newer_memory_left_over_the_pool_does_not_let_the_older_one_in() -> None:
    # pool 2: the newest coffee memory is over the pool, not rejected; its older one must not
    # be judged in its place
    trace = MemoryAgent(FakeMemory(CONFLICT), ScriptedLLM(say("ok")), Policy(conflicts="newest_wins"),
                        gate=Gate(pool=2)).ask("问")
    assert [p.hit.text for p in trace.assembly.placed] == ["用户叫张三", "用户是后端工程师"]
    assert dict((h.text, f) for h, f in trace.fates())[COFFEE_OLD.text] == "dropped: superseded by newer"


def test_a_stale_memory_never_takes_the_place_of_the_newer_one() -> None:
    trace = MemoryAgent(FakeMemory(CONFLICT), ScriptedLLM(say("ok")),
                        Policy(conflicts="newest_wins")).ask("问")
    assert COFFEE_OLD.text not in [p.hit.text for p in trace.assembly.placed]


# -- the two branches: something passed, or a note by the question's kind ----------------------
BRANCH_QUESTIONS = [("我的血型是什么？", "zh", "fact"), ("What's my dentist's name?", "en", "fact"),
                    ("我今天能喝咖啡吗？", "zh", "advice"), ("Can I have a latte tonight?", "en", "advice"),
                    ("感冒一般几天能好？", "zh", "general"),
                    ("How long should you boil an egg for a runny yolk?", "en", "general")]
REFUSALS = ("no_hit", "no_hit_advice", "tool_no_hit", "cite")


@pytest.mark.parametrize(("question", "language", "kind"), BRANCH_QUESTIONS)
def test_something_passed_sends_plain_facts_and_no_refusal(question: str, language: str,
                                                            kind: str) -> None:
    assert question_kind(question) == kind
    fact = Hit("a", 0.9, "最近在戒咖啡，想少喝一点", {"created_at": "2026-09-01T09:01:00+08:00"})
    llm = ScriptedLLM(say("ok"))
    trace = MemoryAgent(FakeMemory([fact], threshold=0.5), llm).ask(question)
    assert trace.kind == kind and [p.hit.text for p in trace.assembly.placed] == [fact.text]
    text = _TEXT[language]
    assert llm.calls[0]["messages"][-1]["content"] == (
        f"{text['intro']}\n{OPEN}\n- {fact.text} (2026-09-01)\n{CLOSE}\n{text['after']}\n\n"
        f"{text['question']}{question}")
    sent = str(llm.calls[0]["messages"])
    for lang in ("zh", "en"):
        for key in REFUSALS:
            assert _TEXT[lang][key] not in sent


@pytest.mark.parametrize(("question", "language", "kind"), BRANCH_QUESTIONS)
def test_nothing_passed_sends_the_note_of_the_questions_kind(question: str, language: str,
                                                              kind: str) -> None:
    fact = Hit("a", 0.9, "最近在戒咖啡，想少喝一点", {})
    llm = ScriptedLLM(say("ok"))
    trace = MemoryAgent(FakeMemory([fact], threshold=0.95), llm).ask(question)
    assert trace.kind == kind and trace.assembly.no_hit
    note = {"fact": _TEXT[language]["no_hit"], "advice": _TEXT[language]["no_hit_advice"],
            "general": ""}[kind]
    assert no_hit_note(language, kind) == note
    expected = f"{question}\n\n{note}" if note else question  # general: the bare question
    assert llm.calls[0]["messages"] == [{"role": "system", "content": _TEXT[language]["system"]},
                                        {"role": "user", "content": expected}]
    assert fact.text not in str(llm.calls[0]["messages"])


def test_a_name_the_candidates_share_makes_a_question_the_users_own() -> None:
    # "What brand is Farah's lunchbox?" alone reads as general; Farah is in a memory, so it is
    # a fact question: the reader weighs the look-alike, and with nothing passed the fact note
    # follows the question (and the guard replaces a guess)
    question = "What brand is Farah's lunchbox?"
    look_alike = "Bought Farah a purple JanSport backpack for school"
    fake = FakeMemory([Hit("a", 0.9, look_alike, {})], threshold=0.5)
    llm = JudgingLLM(say("It is a Bentgo."), p_yes={look_alike: FAIL})
    trace = MemoryAgent(fake, llm).ask(question)
    assert question_kind(question) == "general" and trace.kind == "fact"
    assert llm.is_reader(llm.judged[0]) and trace.assembly.no_hit
    assert llm.calls[0]["messages"][-1]["content"] == f"{question}\n\n{NO_HIT_EN}"
    assert trace.replaced == "It is a Bentgo." and trace.answer != trace.replaced
    # no such name among the candidates: still a general question, no note
    fake = FakeMemory([Hit("a", 0.9, "Works as a veterinary technician", {})], threshold=0.5)
    llm = JudgingLLM(say("Bentgo is a popular brand."), default=FAIL)
    trace = MemoryAgent(fake, llm).ask(question)
    assert trace.kind == "general" and llm.calls[-1]["messages"][-1]["content"] == question


@pytest.mark.parametrize(("question", "language", "kind"), BRANCH_QUESTIONS)
def test_advice_with_nothing_passed_says_first_that_nothing_is_known(question: str, language: str,
                                                                     kind: str) -> None:
    """Advice that depends on the person, and nothing about them passed: the model's help
    stays, after one sentence that says nothing about the user is on record (the trace keeps
    the model's own words). An answer that says so itself is left alone; fact questions get
    the honest reply instead, general questions nothing."""
    from gya_memory.answer.agent import HONEST, NO_RECORD

    fact = Hit("a", 0.9, "最近在戒咖啡，想少喝一点", {})
    help_ = {"zh": "可以，但晚上少喝一点。", "en": "Sure, but keep it small this late."}[language]
    trace = MemoryAgent(FakeMemory([fact], threshold=0.95), ScriptedLLM(say(help_))).ask(question)
    assert trace.kind == kind and trace.assembly.no_hit
    expected = {"advice": NO_RECORD[language] + help_, "fact": HONEST[language], "general": help_}
    assert trace.answer == expected[kind]
    assert trace.replaced == (None if kind == "general" else help_)
    if kind == "advice":
        assert ground(trace.answer, [], question).admits_unknown
        assert trace.prefaced and "(prefaced:" in trace.to_text() and "(replaced:" not in trace.to_text()
        # the model already said it doesn't know: nothing added
        says = {"zh": "我不知道你的情况，一般来说可以。", "en": "I don't know your situation; usually yes."}
        llm = ScriptedLLM(say(says[language]))
        trace = MemoryAgent(FakeMemory([fact], threshold=0.95), llm).ask(question)
        assert trace.answer == says[language] and trace.replaced is None
        # something passed: the plain branch, nothing added
        trace = MemoryAgent(FakeMemory([fact], threshold=0.5), ScriptedLLM(say(help_))).ask(question)
        assert trace.answer == help_ and trace.replaced is None


# -- advice ranked with a draft answer (gya_memory.lab's LabAgent, DRAFT_LANGUAGES) ------------
class DraftMemory(FakeMemory):
    """A FakeMemory that can also search by passage (``similar``), with fixed cosines."""

    def __init__(self, hits: list[Hit], near: Mapping[str, float], threshold: float = 0.5) -> None:
        super().__init__(hits, threshold)
        self.near = dict(near)
        self.passages: list[str] = []

    def similar(self, text: str, top_k: int = 10) -> list[Hit]:
        self.passages.append(text)
        found = sorted(self.hits, key=lambda h: -self.near.get(h.id, 0.0))[:top_k]
        return [Hit(h.id, self.near.get(h.id, 0.0), h.text, dict(h.payload)) for h in found]


LATTE = "Can I have a latte tonight?"  # English advice (BRANCH_QUESTIONS)
DRAFT_HITS = [Hit("a", 0.90, "Books most flights with Delta", {}),
              Hit("b", 0.85, "Collects a fridge magnet from every city", {}),
              Hit("c", 0.80, "Doctor said no caffeine after 2 pm because of insomnia", {})]


def test_an_english_advice_question_is_ranked_with_a_draft_answer() -> None:
    draft = "A latte late in the day has caffeine, which can keep you awake."
    fake = DraftMemory(DRAFT_HITS, near={"c": 0.95, "a": 0.5, "b": 0.6})
    llm = JudgingLLM(say(draft), say("Better a decaf tonight."))
    trace = LabAgent(fake, llm, Policy(top_k=1), draft={"en"}).ask(LATTE)
    # first the answer with no memory, exactly what the no-hit branch would send
    assert llm.calls[0]["messages"][-1]["content"] == f"{LATTE}\n\n{ADVICE_EN}"
    assert fake.passages == [draft] and trace.draft == draft
    # mean of the two cosines: c (0.80 + 0.95) > b (0.85 + 0.6) > a (0.90 + 0.5); scores stay
    # the question's cosines, and the pool of one takes c
    assert [h.id for h in trace.candidates] == ["c", "b", "a"]
    assert [h.score for h in trace.candidates] == [0.80, 0.85, 0.90]
    assert [p.hit.id for p in trace.assembly.placed] == ["c"] and len(llm.calls) == 2
    assert DRAFT_HITS[2].text in llm.calls[1]["messages"][-1]["content"]
    assert trace.answer == "Better a decaf tonight."
    assert "draft:" in trace.to_text() and ">draft</th>" in trace._repr_html_()
    assert "draft" in trace.timings


def test_with_nothing_passed_the_draft_is_the_answer() -> None:
    from gya_memory.answer.agent import NO_RECORD

    draft = "Sure, a latte is fine in the evening."
    fake = DraftMemory(DRAFT_HITS, near={"c": 0.95})
    llm = JudgingLLM(say(draft), default=FAIL)  # one reply: a second call would fail
    trace = LabAgent(fake, llm, draft={"en"}).ask(LATTE)
    assert trace.assembly.no_hit and len(llm.calls) == 1 and trace.draft == draft
    assert trace.answer == NO_RECORD["en"] + draft and trace.replaced == draft


@pytest.mark.parametrize("question", ["我今天能喝咖啡吗？", "What's my dentist's name?",
                                      "How long should you boil an egg for a runny yolk?"])
def test_no_draft_for_other_kinds_or_languages(question: str) -> None:
    fake = DraftMemory(DRAFT_HITS, near={"c": 0.95})
    llm = JudgingLLM(say("ok"), default=FAIL)
    trace = LabAgent(fake, llm, draft={"en"}).ask(question)
    assert fake.passages == [] and trace.draft is None and len(llm.calls) == 1


def test_the_draft_is_off_by_default_and_on_per_language() -> None:
    from gya_memory.lab.agent_levers import DRAFT_LANGUAGES

    assert DRAFT_LANGUAGES == frozenset()  # measured and kept off (docs/acceptance.md)
    fake = DraftMemory(DRAFT_HITS, near={"c": 0.95})
    trace = LabAgent(fake, JudgingLLM(say("ok"))).ask(LATTE)
    assert fake.passages == [] and trace.draft is None
    llm = JudgingLLM(say("少喝点。"), say("晚上别喝了。"))
    trace = LabAgent(fake, llm, draft={"zh", "en"}).ask("我今天能喝咖啡吗？")
    assert fake.passages == ["少喝点。"] and len(llm.calls) == 2
    # no gate, or a memory that can't search by passage (FakeMemory): no draft
    trace = LabAgent(fake, ScriptedLLM(say("ok")), gate=None, draft={"en"}).ask(LATTE)
    assert trace.draft is None
    trace = LabAgent(FakeMemory(DRAFT_HITS), JudgingLLM(say("ok")), draft={"en"}).ask(LATTE)
    assert trace.draft is None


@pytest.mark.parametrize("bad", ["en", ["fr"], {"zh", "de"}])
def test_draft_languages_are_checked(bad: Any) -> None:
    with pytest.raises(ValueError, match="draft"):
        LabAgent(FakeMemory([]), ScriptedLLM(), draft=bad)


def test_terms_recall_reranks_the_dense_candidates_and_the_gate_keeps_that_order() -> None:
    from gya_memory.answer.terms import by_terms, overlap
    from gya_memory.semantic.embeddings.local import LocalE5Embedder

    e5 = LocalE5Embedder()
    question = "周末聚餐吃川菜，点菜要注意什么？"
    with SemanticMemory(":memory:", embedder=e5, user_id="u-terms",
                        clock=notebook_clock()) as mem:
        mem.store_many([(t, {}) for t in ("对花生过敏，吃了会起疹子", "周末常去爬山",
                                          "女儿在读小学三年级", "喜欢喝冰美式")])
        dense = list(mem.candidates(question, 4))
        ranked = by_terms(mem, question, 4)
        q, *docs = e5.terms([question, *(h.text for h in dense)])
        by_overlap = sorted(range(4), key=lambda i: -overlap(q, docs[i]))
        assert [h.id for h in ranked] == [dense[i].id for i in by_overlap]
        scores = {h.id: h.score for h in dense}
        assert all(h.score == pytest.approx(scores[h.id], abs=1e-6) for h in ranked)  # cosines
        assert len(by_terms(mem, question, 2)) == 2
        agent = MemoryAgent(mem, ScriptedLLM(say("ok")), gate=Gate(judge_min=None))
        assert [h.id for h in agent.candidates_for(question, Policy())] == [h.id for h in ranked]
        trace = agent.ask(question)
        # the gate took them in the terms' order (no judge: the first 3 above the floor pass)
        order = [d.hit.id for d in trace.gate]
        assert order == [h.id for h in ranked][:len(order)]
    with pytest.raises(ValueError, match="'terms'"):
        LabAgent(FakeMemory([]), ScriptedLLM(), recall="sparse")  # type: ignore[arg-type]
    # an embedder without latent terms leaves the dense order
    with SemanticMemory(":memory:", embedder=TFIDFEmbedder(), user_id="u-terms2",
                        clock=notebook_clock()) as mem:
        mem.store_many([("Drinks a latte every morning", {}), ("Plays tennis", {})])
        assert [h.id for h in by_terms(mem, "latte?", 2)] == \
            [h.id for h in mem.candidates("latte?", 2)]


def test_a_draft_on_a_real_memory_reranks_its_nearest() -> None:
    # SemanticMemory.similar (TF-IDF here) reads the draft as a passage; the ranking is by the
    # sum of the two cosines, and each hit keeps its cosine to the question
    question, draft = "Can I have a latte tonight?", "Caffeine at night: ask the doctor about insomnia."
    with SemanticMemory(":memory:", embedder=TFIDFEmbedder(), user_id="u-draft",
                        clock=notebook_clock()) as mem:
        mem.store_many([("Doctor said no caffeine after 2 pm because of insomnia", {}),
                        ("Drinks a latte every morning before work", {}),
                        ("Collects a fridge magnet from every city", {})])
        near = {h.id: h.score for h in mem.similar(draft, top_k=3)}
        assert mem.similar(draft, top_k=1)[0].text.startswith("Doctor said no caffeine")
        by_question = {h.id: h.score for h in mem.candidates(question, 3)}
        ranked = LabAgent(mem, ScriptedLLM()).ranked_with_draft(question, draft, 3)
        assert [h.id for h in ranked] == sorted(by_question, key=lambda i: -(by_question[i] + near[i]))
        assert {h.id: h.score for h in ranked} == by_question
        with pytest.raises(ValueError):
            mem.similar("", top_k=3)
