"""gya_memory: the helper package behind the gya-memory notebook series.

The tree follows the article (ARCHITECTURE.md walks one memory through it):

- ``base/``        shared facts: errors (one family), text, checks, clock, files, config,
                   payload keys, the fence; imports nothing else of the package
- ``working``      working memory (工作记忆, layer 1): the messages of the current call
- ``episodic/``    episodic memory (情节记忆, layer 2): structured facts in SQLite
- ``semantic/``    semantic memory (语义记忆, layer 3): memories found by meaning, in Qdrant,
                   with its ``embeddings/`` and ``stores/``
- ``procedural/``  procedural memory (程序记忆, layer 4): recipes you find and call, per user
- ``hermes/``      the Hermes case study: curated MEMORY.md / USER.md, session search,
                   prompt-injection scanning
- ``answer/``      from memory to answer (retriever, gate, context, agent, grounding, llm/)
                   and from conversation to memory (dates, extraction, writing, changes)
- ``erasure``      forget_user(): one user's memories out of every store and every byte

Apart from the library (nothing in it imports these; tests/test_layers.py checks):

- ``lab/``         measuring: labelled set, calibration, scenarios, evaluation, plots
- ``faults/``      breaking things on purpose: fakes, kill -9 trials, planted injections
- ``teaching/``    the notebooks' kits: display helpers, examples, exercises

The names a notebook starts with are importable from the package itself
(``from gya_memory import SemanticMemory``); each sub-package offers its own public names
the same way (``from gya_memory.answer import assemble``). Each is imported on first use,
so importing the package does no work: no files are opened, no models are loaded, no numpy
or Qdrant.

>>> import gya_memory
>>> gya_memory.GyaMemoryError.__module__
'gya_memory.base.errors'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gya_memory.base.lazy import lazy_names

__version__ = "0.1.0"

# public name -> the module that defines it (imported on first use)
_EXPORTS: dict[str, str] = {
    "GyaMemoryError": "gya_memory.base.errors",
    "FixedClock": "gya_memory.base.clock",
    "CHINA_TZ": "gya_memory.base.clock",
    "WorkingMemory": "gya_memory.working",
    "BudgetError": "gya_memory.working",
    "approx_tokens": "gya_memory.working",
    "EpisodicMemory": "gya_memory.episodic.memory",
    "SemanticMemory": "gya_memory.semantic.memory",
    "ProceduralMemory": "gya_memory.procedural.memory",
    "Procedure": "gya_memory.procedural.memory",
    "CuratedMemory": "gya_memory.hermes.curated",
    "SessionStore": "gya_memory.hermes.sessions",
    "get_embedder": "gya_memory.semantic.embeddings",
    "get_llm": "gya_memory.answer.llm",
    "Policy": "gya_memory.answer.context",
    "MemoryAgent": "gya_memory.answer.agent",
    "forget_user": "gya_memory.erasure",
}

__all__ = ["__version__", *sorted(_EXPORTS)]
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)

if TYPE_CHECKING:  # for type checkers and editors; never runs
    from gya_memory.answer.agent import MemoryAgent
    from gya_memory.answer.context import Policy
    from gya_memory.answer.llm import get_llm
    from gya_memory.base.clock import CHINA_TZ, FixedClock
    from gya_memory.base.errors import GyaMemoryError
    from gya_memory.episodic.memory import EpisodicMemory
    from gya_memory.erasure import forget_user
    from gya_memory.hermes.curated import CuratedMemory
    from gya_memory.hermes.sessions import SessionStore
    from gya_memory.procedural.memory import ProceduralMemory, Procedure
    from gya_memory.semantic.embeddings import get_embedder
    from gya_memory.semantic.memory import SemanticMemory
    from gya_memory.working import BudgetError, WorkingMemory, approx_tokens
