"""The evaluation set (评测集): hand-written scenarios the calibration never saw, with a fixed
tuning/test split, and the background memories used to normalise scores per query.

The scenarios live in ``data/eval_scenarios.json`` (see :mod:`gya_memory.evaluation` for what
is measured on them). Loading is checked: a scenario's relevant ids must name its memories.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

SPLITS = ("tune", "test")
CONDITIONS = ("memory", "no_memory", "no_hit")
OUTCOMES = ("used", "ignored", "misused", "invented", "admits", "no facts")


# -- the data -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScenarioMemory:
    id: str
    text: str
    subject: str
    session: str
    created_at: str


@dataclass(frozen=True)
class Scenario:
    """One user, their memories, a question that needs one of them and one that needs none."""

    id: str
    lang: str
    topic: str
    user: str
    split: str
    memories: tuple[ScenarioMemory, ...]
    relevant: tuple[str, ...]
    question: str
    must_state: tuple[tuple[str, ...], ...]  # facts; each a tuple of accepted forms
    no_hit_question: str
    trap: str

    def text_of(self, memory_id: str) -> str:
        return next(m.text for m in self.memories if m.id == memory_id)

    @property
    def relevant_texts(self) -> list[str]:
        return [m.text for m in self.memories if m.id in self.relevant]

    @property
    def distractor_texts(self) -> list[str]:
        return [m.text for m in self.memories if m.id not in self.relevant]

    def states_facts(self, answer: str) -> bool:
        """Does ``answer`` state every fact a good answer needs (any accepted form)?"""
        low = answer.lower()
        return all(any(form.lower() in low for form in fact) for fact in self.must_state)


def load_scenarios(split: str | None = None, path: str | Path | None = None) -> list[Scenario]:
    """The evaluation scenarios, all or one ``split`` (``"tune"`` or ``"test"``).

    >>> len(load_scenarios()), len(load_scenarios("tune")), len(load_scenarios("test"))
    (48, 20, 28)
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or None, got {split!r}")
    if path is None:
        raw = resources.files("gya_memory.data").joinpath("eval_scenarios.json").read_text("utf-8")
    else:
        raw = Path(path).read_text("utf-8")
    out = []
    for s in json.loads(raw)["scenarios"]:
        out.append(Scenario(
            id=s["id"], lang=s["lang"], topic=s["topic"], user=s["user"], split=s["split"],
            memories=tuple(ScenarioMemory(**m) for m in s["memories"]),
            relevant=tuple(s["relevant"]), question=s["question"],
            must_state=tuple(tuple(f) for f in s["must_state"]),
            no_hit_question=s["no_hit_question"], trap=s["trap"],
        ))
    return [s for s in out if split is None or s.split == split]


def store_scenarios(scenarios: Sequence[Scenario], embedder: Any,
                    path: str = ":memory:") -> dict[str, Any]:
    """One ``SemanticMemory`` per scenario user, holding that scenario's memories (and an
    empty one per user, ``"<user>-new"``, for the no-memory condition)."""
    from .semantic import SemanticMemory

    stores: dict[str, Any] = {}
    for s in scenarios:
        memory = SemanticMemory(path, user_id=s.user, embedder=embedder)
        memory.store_many([(m.text, {"subject": m.subject, "session_id": m.session,
                                     "memory_id": m.id}) for m in s.memories])
        stores[s.user] = memory
        stores[s.user + "-new"] = SemanticMemory(path, user_id=s.user + "-new",
                                                 embedder=embedder)
    return stores
