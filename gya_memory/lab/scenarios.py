"""The evaluation set (评测集): hand-written scenarios the calibration never saw, with a fixed
tuning/test split, and the background memories used to normalise scores per query.

The scenarios live in ``data/eval_scenarios.json`` (see :mod:`gya_memory.lab.evaluation` for what
is measured on them). Loading is checked: a scenario's relevant ids must name its memories.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
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
    about: str = ""  # whom it is about, as a careful reader labels it ("user", "user's sister")


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
    # the acceptance set (data/acceptance/) adds these; the older set leaves them empty
    question_kind: str = ""  # "fact" or "advice"
    no_hit_kind: str = ""
    trap_kind: str = ""  # other_person, missing_detail, outdated, other_item, plan_vs_done
    general_question: str = ""

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
        return all(any(_says(answer, form) for form in fact) for fact in self.must_state)


def _says(answer: str, form: str) -> bool:
    """``form`` in ``answer``, case-insensitive; a Latin form must start a word ("Eli" is
    not in "reliable"; "expir" is in "expired")."""
    if form[:1].isascii() and form[:1].isalnum():
        return re.search(r"(?<![A-Za-z0-9])" + re.escape(form), answer, re.I) is not None
    return form.lower() in answer.lower()


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
    out = [_scenario(s) for s in json.loads(raw)["scenarios"]]
    return [s for s in out if split is None or s.split == split]


ACCEPTANCE_PARTS = ("zh_a", "zh_b", "en_a", "en_b")


def load_acceptance(split: str | None = None, lang: str | None = None) -> list[Scenario]:
    """The acceptance set (``data/acceptance/*.json``): 120 hand-written scenarios, 60 per
    language, 10-30 memories per user, a no-hit question of each of five trap kinds and a
    general question each; 01-12 of each part tune, 13-30 test.

    >>> s = load_acceptance()
    >>> len(s), len(load_acceptance("tune")), len(load_acceptance("test"))
    (120, 48, 72)
    >>> sorted({x.trap_kind for x in s})
    ['missing_detail', 'other_item', 'other_person', 'outdated', 'plan_vs_done']
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or None, got {split!r}")
    folder = resources.files("gya_memory.data").joinpath("acceptance")
    out = []
    for part in ACCEPTANCE_PARTS:
        raw = json.loads(folder.joinpath(f"{part}.json").read_text("utf-8"))
        out += [_scenario(s) for s in raw["scenarios"]]
    return [s for s in out if (split is None or s.split == split)
            and (lang is None or s.lang == lang)]


def _scenario(s: dict[str, Any]) -> Scenario:
    memories = tuple(ScenarioMemory(m["id"], m["text"], m["subject"], m["session"],
                                    m["created_at"], m.get("about", "")) for m in s["memories"])
    ids = {m.id for m in memories}
    wrong = [i for i in (*s["relevant"], s["trap"]) if i not in ids]
    if wrong:
        raise ValueError(f"scenario {s['id']}: ids {wrong} name no memory of it")
    return Scenario(
        id=s["id"], lang=s["lang"], topic=s["topic"], user=s["user"], split=s["split"],
        memories=memories, relevant=tuple(s["relevant"]), question=s["question"],
        must_state=tuple(tuple(f) for f in s["must_state"]),
        no_hit_question=s["no_hit_question"], trap=s["trap"],
        question_kind=s.get("question_kind", ""), no_hit_kind=s.get("no_hit_kind", ""),
        trap_kind=s.get("trap_kind", ""), general_question=s.get("general_question", ""),
    )


def _aware(when: str) -> datetime:
    t = datetime.fromisoformat(when)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def store_scenarios(scenarios: Sequence[Scenario], embedder: Any,
                    path: str = ":memory:") -> dict[str, Any]:
    """One ``SemanticMemory`` per scenario user, holding that scenario's memories (and an
    empty one per user, ``"<user>-new"``, for the no-memory condition)."""
    from gya_memory.base.clock import system_clock
    from gya_memory.semantic.memory import SemanticMemory

    stores: dict[str, Any] = {}
    for s in scenarios:
        memory = SemanticMemory(path, user_id=s.user, embedder=embedder)
        # each memory written at its own time (an update must be newer than what it
        # replaces): the store reads its clock once per memory, in order
        times = iter([_aware(m.created_at) for m in s.memories])
        memory.clock = lambda: next(times)
        memory.store_many([(m.text, {"subject": m.subject, "session_id": m.session,
                                     "memory_id": m.id}) for m in s.memories])
        memory.clock = system_clock
        stores[s.user] = memory
        stores[s.user + "-new"] = SemanticMemory(path, user_id=s.user + "-new",
                                                 embedder=embedder)
    return stores
