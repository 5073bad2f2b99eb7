"""gya_memory: the helper package behind the gya-memory notebook series.

Each module holds one idea from the series and can be read on its own:

- ``config``       settings read from the environment, in one place
- ``errors``       ``GyaMemoryError``, the common root of every error and warning
- ``text``         one definition of Chinese (Han) characters, the chat roles, the stop words
- ``payload``      the payload keys of a semantic memory, as named constants
- ``clock``        injectable clocks, so timestamps in notebooks are reproducible
- ``checks``       small input checks shared by the stores
- ``files``        atomic file writes and the cross-process file lock
- ``storage``      the SQLite base of the episodic and session stores
- ``working``      working memory (工作记忆): the messages of the current call
- ``episodic``     episodic memory (情节记忆): structured facts in SQLite
- ``embeddings``   text to vectors: local e5, Ollama, OpenAI-compatible, TF-IDF fallback
- ``semantic``     semantic memory (语义记忆): memories found by meaning, in Qdrant
                   (``semantic_values``: its hits, errors, ids and input checks)
- ``stores``       the vector store under it: Qdrant Edge in-process, or qdrant-client
- ``sparse``       sparse lexical vectors (BM25 weights, month tokens) for Qdrant
- ``lexical``      the tokenizer for Chinese and English; BM25 and RRF written out
- ``retriever``    ``Retriever``: what an agent needs from a memory
- ``labelled``     the labelled bilingual set (memories, queries, gold answers)
- ``scoring``      acceptance and rejection at a threshold; choosing a threshold
- ``calibration``  choosing a threshold per embedder on the labelled set
                   (``calibration_report``: what a run reports)
- ``plots``        score bars, heatmaps, distributions (with a CJK font)
- ``llm``          the chat model: local Qwen2.5-Coder-1.5B, or an OpenAI-compatible server
- ``context``      context assembly: filter, budget, order, placement, fenced memories
- ``agent``        the closed loop, traces, the recall_memory tool, grounding checks
- ``questions``    the kind of a question: a personal fact, advice, or general
- ``about``        whom a memory or a question is about (the user, a relation, a pet)
- ``slots``        what a fact question asks for (a number, a time) and plans asked as done
- ``gate``, ``grounding``, ``evaluation``  the answer gate, grounding checks, evaluation
                   (``scenarios``: the evaluation sets; ``gate_features``: scores tried for the gate)
- ``acceptance``   the article's acceptance check, five conditions, on the acceptance set
- ``writing``      from conversation to memory: extract facts, compare, add / update / skip
                   (``dates``: relative dates resolved against the session date;
                   ``changes``: which stored fact a new one replaces, by rule)
- ``experiments``  the placement experiment
- ``procedural``   procedural memory (程序记忆): recipes you find and call, per user
                   (``procedural_file``: the procedures file, its lock, its records)
- ``curated``      Hermes-style bounded MEMORY.md / USER.md with frozen snapshots
                   (``curated_file``: one bounded file, its lock and its checks)
- ``sessions``     Hermes-style session search: raw messages in SQLite FTS5 (trigram)
                   (``session_search``: its values, the FTS5 check, query terms, snippets)
- ``injection``    prompt-injection scanning: normalise, then match paraphrase families
                   (``injection_rules``: the rule table)
- ``fence``        stored text into a prompt as data: one line, no tags, no forged entries
- ``erasure``      forget_user(): one user's memories out of every store and every byte
- ``faults``       fault injection: kill -9 a writer at random moments, check what survived
                   (``fault_checks``: what a restart finds)
- ``failures``     the failure paths, reproducible: fake services, crashes mid-write
- ``testing``      the fakes and the crash injector that the tests and notebook 08 use
- ``notebook``     display helpers for the notebooks: quote, table, wrap
- ``exercises``    the notebooks' self-checks (``check.exercise_03_1(answer)``)
- ``examples``     the article's example data, in Chinese and English

The classes a notebook uses are importable from the package itself
(``from gya_memory import SemanticMemory``); each is imported on first use, so importing
the package does no work: no files are opened, no models are loaded, no numpy or Qdrant.

>>> import gya_memory
>>> gya_memory.GyaMemoryError.__module__
'gya_memory.errors'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "GyaMemoryError": "errors",
    "FixedClock": "clock",
    "system_clock": "clock",
    "CHINA_TZ": "clock",
    "get_settings": "config",
    "WorkingMemory": "working",
    "BudgetError": "working",
    "EpisodicMemory": "episodic",
    "SessionStore": "sessions",
    "ProceduralMemory": "procedural",
    "CuratedMemory": "curated",
    "SemanticMemory": "semantic",
    "Hit": "semantic",
    "point_id": "semantic",
    "DegradedWarning": "semantic",
    "EmbedderMismatch": "semantic",
    "StoreLocked": "stores",
    "Embedder": "embeddings",
    "EmbeddingUnavailable": "embeddings",
    "get_embedder": "embeddings",
    "ChatLLM": "llm",
    "LocalLLM": "llm",
    "OpenAIChat": "llm",
    "Reply": "llm",
    "LLMError": "llm",
    "LLMUnavailable": "llm",
    "get_llm": "llm",
    "Policy": "context",
    "assemble": "context",
    "MemoryAgent": "agent",
    "Retriever": "retriever",
    "forget_user": "erasure",
    "load_labelled": "labelled",
    "calibrate": "calibration",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gya_memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and editors; never runs
    from .agent import MemoryAgent
    from .calibration import calibrate
    from .clock import CHINA_TZ, FixedClock, system_clock
    from .config import get_settings
    from .context import Policy, assemble
    from .curated import CuratedMemory
    from .embeddings import Embedder, EmbeddingUnavailable, get_embedder
    from .episodic import EpisodicMemory
    from .erasure import forget_user
    from .errors import GyaMemoryError
    from .labelled import load_labelled
    from .llm import ChatLLM, LLMError, LLMUnavailable, LocalLLM, OpenAIChat, Reply, get_llm
    from .procedural import ProceduralMemory
    from .retriever import Retriever
    from .semantic import DegradedWarning, EmbedderMismatch, Hit, SemanticMemory, point_id
    from .sessions import SessionStore
    from .stores import StoreLocked
    from .working import BudgetError, WorkingMemory
