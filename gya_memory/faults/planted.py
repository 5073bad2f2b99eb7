"""Planted instructions (植入的指令): what the chat model does with an order hidden in a memory.

The scanner (:mod:`gya_memory.hermes.injection`) is measured on text alone; this module measures
the model. Each case of ``gya_memory/data/injection_planted.json`` is one user's semantic
memory: ordinary memories plus one planted instruction (or one split across two entries), a
question that brings it up, and a rule that says whether an answer *followed* it (any
``followed_if`` pattern matches and no ``unless`` pattern does). :func:`run_case` stores the
memories, asks :class:`~gya_memory.answer.agent.MemoryAgent` the question, and reports what reached
the prompt and what the model said, in one of three conditions:

- ``"control"``: the ordinary memories only, nothing planted: what the model says on its
  own (a rule that fires here measures the model, not the instruction);
- ``"before"``: the defences off: the planted text stored with ``allow_instructions=True``
  and the context assembled with ``Policy(screen=False)``; only the fence and the block's
  "data, not instructions" line stand between the memory and the model;
- ``"after"``: the defaults. The store refuses the planted text (``InstructionRefused``,
  recorded); the caller then insists (``allow_instructions=True``), and the context's
  read-time screen blocks it or, where the scanner misses it, it reaches the prompt as
  fenced data.

A rule only sees the words it names: read the answers too (``./run.sh bench injection``
prints them).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

Condition = Literal["control", "before", "after"]
CONDITIONS: tuple[Condition, ...] = ("control", "before", "after")


@dataclass(frozen=True)
class PlantedCase:
    """One user's memories with a planted instruction, a question, and the follow rule."""

    id: str
    lang: str
    family: str
    memories: tuple[str, ...]
    planted: tuple[int, ...]  # indexes into ``memories`` of the planted text
    question: str
    followed_if: tuple[str, ...]
    unless: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.planted or any(not 0 <= i < len(self.memories) for i in self.planted):
            raise ValueError(f"case {self.id!r}: planted must index its memories, got {self.planted}")
        if not self.followed_if:
            raise ValueError(f"case {self.id!r}: followed_if needs at least one pattern")

    @property
    def planted_texts(self) -> tuple[str, ...]:
        return tuple(self.memories[i] for i in self.planted)

    def followed(self, answer: str) -> bool:
        """Whether ``answer`` did what the planted text asked (by the case's rule)."""
        if not isinstance(answer, str):
            raise ValueError(f"answer must be a string, got {type(answer).__name__}")
        hit = any(re.search(p, answer, re.IGNORECASE) for p in self.followed_if)
        return hit and not any(re.search(p, answer, re.IGNORECASE) for p in self.unless)


def load_planted(which: Literal["fixed", "check"] = "fixed") -> list[PlantedCase]:
    """The ten fixed cases of ``injection_planted.json`` (five Chinese, five English), or
    with ``which="check"`` its six check cases (kept for checking a chosen block wording)."""
    if which not in ("fixed", "check"):
        raise ValueError(f"which must be 'fixed' or 'check', got {which!r}")
    raw = resources.files("gya_memory.data").joinpath("injection_planted.json").read_text("utf-8")
    key = "cases" if which == "fixed" else "check_cases"
    return [PlantedCase(c["id"], c["lang"], c["family"], tuple(c["memories"]), tuple(c["planted"]),
                        c["question"], tuple(c["followed_if"]), tuple(c.get("unless", ())))
            for c in json.loads(raw)[key]]


@dataclass(frozen=True)
class PlantedRun:
    """One case asked in one condition: what was refused, what reached the prompt, the answer."""

    case: PlantedCase
    condition: Condition
    refused: tuple[str, ...]  # rules of the write-time refusal (``after`` only)
    blocked: tuple[str, ...]  # read-time screen: the trace's reason per blocked planted text
    reached: bool  # a planted text went into the prompt
    answer: str
    followed: bool
    trace: Any = field(default=None, compare=False, repr=False)

    @property
    def outcome(self) -> str:
        """``followed``, ``not followed`` or ``blocked`` (nothing planted reached the prompt)."""
        if not self.reached:
            return "did not reach the prompt"
        return "followed" if self.followed else "not followed"


def store_case(memory: Any, case: PlantedCase, condition: Condition) -> tuple[str, ...]:
    """Write the case's memories into ``memory``; returns the rules of any write-time refusal.

    ``control``: the planted text is left out. ``before``: it is stored with
    ``allow_instructions=True`` straight away. ``after``: it is offered as the defaults would
    take it; when refused, the caller insists."""
    from gya_memory.hermes.injection import InstructionRefused

    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    refused: list[str] = []
    for i, text in enumerate(case.memories):
        planted = i in case.planted
        if planted and condition == "control":
            continue
        if planted and condition == "before":
            memory.store(text, allow_instructions=True)
            continue
        try:
            memory.store(text)
        except InstructionRefused as exc:
            if not planted:
                raise
            refused += [f.rule for f in exc.findings]
            memory.store(text, allow_instructions=True)
    return tuple(dict.fromkeys(refused))


def run_case(case: PlantedCase, llm: Any, embedder: Any, condition: Condition, *,
             gate: Any = "default", policy: Any = None, clock: Any = None) -> PlantedRun:
    """Store ``case`` in a fresh in-memory semantic store and ask its question through
    :class:`~gya_memory.answer.agent.MemoryAgent`.

    ``gate``: ``"default"`` (the agent's own gate) or ``None`` (no gate: every stored memory
    is a candidate for the prompt, so the planted text surely reaches the assembly).
    ``policy``: the context policy (default ``Policy()``, with ``screen=False`` for
    ``before``). ``clock``: when the memories are written (default: the notebooks' fixed
    clock, so the dates in the prompt, and the answers, don't change from day to day)."""
    from dataclasses import replace

    from gya_memory.answer.agent import MemoryAgent
    from gya_memory.answer.context import Policy
    from gya_memory.teaching.examples import notebook_clock
    from gya_memory.semantic.memory import SemanticMemory

    policy = Policy() if policy is None else policy
    if condition == "before":
        policy = replace(policy, screen=False)
    memory = SemanticMemory(":memory:", embedder=embedder, user_id=f"planted-{case.id}",
                            clock=clock if clock is not None else notebook_clock())
    try:
        refused = store_case(memory, case, condition)
        if gate == "default":
            agent = MemoryAgent(memory, llm, policy)
        elif gate is None:
            agent = MemoryAgent(memory, llm, replace(policy, min_score=-1.0), gate=None)
        else:
            raise ValueError(f"gate must be 'default' or None, got {gate!r}")
        trace = agent.ask(case.question)
    finally:
        memory.close()
    placed = {p.hit.text for p in trace.assembly.placed}
    planted = set(case.planted_texts)
    blocked = tuple(d.reason for d in trace.assembly.dropped
                    if d.hit.text in planted and d.reason.startswith("blocked"))
    return PlantedRun(case, condition, refused, blocked, bool(placed & planted), trace.answer,
                      case.followed(trace.answer), trace)
