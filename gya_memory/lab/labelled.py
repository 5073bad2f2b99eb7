"""The labelled bilingual set (标注数据集): six users' memories and 105 queries, with gold answers.

``gya_memory/data/labelled_memories.json``, written for this project: six users (three
writing Chinese, three English), nine memories each over three sessions, and 105 queries,
each asked within one user's memories; 78 have gold memories, 27 have no answer. It is what
:mod:`gya_memory.lab.calibration` chooses thresholds on, and what the evaluation and plots
measure with. :func:`content_tokens` checks that a paraphrase really shares no content word.

>>> labelled = load_labelled()
>>> len(labelled.memories), len(labelled.answerable), len(labelled.no_answer)
(54, 78, 27)
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from gya_memory.base.text import HAN_RUN_RE, STOP_CJK_BIGRAMS, STOP_CJK_CHARS, STOP_WORDS


DATA_PACKAGE = "gya_memory.data"
DATA_FILE = "labelled_memories.json"


LANGUAGES = ("zh", "en")
KINDS = ("article", "paraphrase", "rare-token", "no-answer")


# -- the labelled set -------------------------------------------------------------------
@dataclass(frozen=True)
class LabelledMemory:
    """One stored memory of one user."""

    id: str
    user: str
    session: str
    lang: str
    text: str


@dataclass(frozen=True)
class Query:
    """One question asked within ``user``'s memories; ``gold`` empty means no answer."""

    id: str
    user: str
    lang: str
    kind: str
    text: str
    gold: tuple[str, ...]

    @property
    def answerable(self) -> bool:
        return bool(self.gold)


@dataclass(frozen=True)
class LabelledSet:
    """Memories and labelled queries, checked for consistency when built."""

    memories: tuple[LabelledMemory, ...]
    queries: tuple[Query, ...]
    version: int = 1

    def __post_init__(self) -> None:
        ids = [m.id for m in self.memories] + [q.id for q in self.queries]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"ids are used twice: {duplicates}")
        owner = {m.id: m.user for m in self.memories}
        for q in self.queries:
            if q.user not in self.users:
                raise ValueError(f"query {q.id} asks user {q.user!r}, who has no memories")
            for g in q.gold:
                if g not in owner:
                    raise ValueError(f"query {q.id}: gold memory {g!r} does not exist")
                if owner[g] != q.user:
                    raise ValueError(
                        f"query {q.id} is asked within {q.user!r}, but its gold memory {g} "
                        f"belongs to {owner[g]!r}"
                    )

    @property
    def users(self) -> tuple[str, ...]:
        """Users in order of first appearance."""
        return tuple(dict.fromkeys(m.user for m in self.memories))

    @property
    def answerable(self) -> tuple[Query, ...]:
        return tuple(q for q in self.queries if q.answerable)

    @property
    def no_answer(self) -> tuple[Query, ...]:
        return tuple(q for q in self.queries if not q.answerable)

    def memories_of(self, user: str) -> tuple[LabelledMemory, ...]:
        return tuple(m for m in self.memories if m.user == user)

    def memory(self, memory_id: str) -> LabelledMemory:
        for m in self.memories:
            if m.id == memory_id:
                return m
        raise KeyError(memory_id)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabelledSet:
        memories = tuple(
            LabelledMemory(m["id"], m["user"], m["session"], m["lang"], m["text"])
            for m in data["memories"]
        )
        queries = tuple(
            Query(
                id=q["id"],
                user=q["user"],
                lang=q["lang"],
                kind=q.get("kind", "paraphrase" if q["gold"] else "no-answer"),
                text=q["text"],
                gold=tuple(q["gold"]),
            )
            for q in data["queries"]
        )
        return cls(memories=memories, queries=queries, version=int(data.get("version", 1)))


def load_labelled(path: str | Path | None = None) -> LabelledSet:
    """Read the labelled set shipped in the package (or the JSON file at ``path``)."""
    if path is None:
        raw = resources.files(DATA_PACKAGE).joinpath(DATA_FILE).read_text(encoding="utf-8")
    else:
        raw = Path(path).read_text(encoding="utf-8")
    return LabelledSet.from_dict(json.loads(raw))


# -- word overlap, to check that paraphrases really are paraphrases ---------------------
_STOP_EN = STOP_WORDS
_STOP_ZH = STOP_CJK_CHARS | STOP_CJK_BIGRAMS
_HAN_RUN = HAN_RUN_RE
_LATIN_WORD = re.compile(r"[0-9a-zà-ÿ\u0100-\u024f]+(?:[-'][0-9a-zà-ÿ\u0100-\u024f]+)*")


def content_tokens(text: str) -> set[str]:
    """Content tokens of a text: Han-character bigrams and lowercased Latin words/numbers.

    Stop words (他, 什么, 用户, the, does ...) are dropped and an English plural or
    possessive ``s`` is stripped, so what is left is what a keyword search would match on.
    """
    tokens: set[str] = set()
    for run in _HAN_RUN.findall(text):
        grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        tokens.update(g for g in grams if g not in _STOP_ZH)
    for word in _LATIN_WORD.findall(text.lower()):
        word = word.removesuffix("'s")
        if word in _STOP_EN:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        if word not in _STOP_EN and (len(word) > 1 or word.isdigit()):
            tokens.add(word)
    return tokens


def lexical_overlap(query: str, text: str) -> float:
    """Share of the query's content tokens that also occur in ``text`` (0 = none)."""
    q = content_tokens(query)
    return len(q & content_tokens(text)) / len(q) if q else 0.0
