"""One family of errors: everything the package raises on purpose is a :class:`GyaMemoryError`.

Each error also keeps the built-in base it always had, so ``except ValueError`` still works
where it did, and ``except GyaMemoryError`` catches any of them:

============================  ======================  ==========================================
class (importable from)      built-in base           raised when
============================  ======================  ==========================================
``working.BudgetError``       ``ValueError``          the messages that must stay are over budget
``semantic.EmbedderMismatch``  ``ValueError``          a collection was built by another embedder
``curated.MemoryFull``        ``ValueError``          a write would take a file over its cap
``curated.InjectionRefused``  ``ValueError``          the text looks like a prompt injection
``injection.InstructionRefused``  ``ValueError``      a memory to store reads like an instruction
``curated.MemoryLocked``      ``TimeoutError``        another process held the file's lock
``procedural.ProceduresDamaged``  ``ValueError``      a procedures file is damaged (named)
``stores.StoreLocked``        ``RuntimeError``        the memory folder is open in another process
``sessions.FTS5Unavailable``  ``RuntimeError``        this SQLite has no FTS5 / trigram tokenizer
``embeddings.EmbeddingUnavailable``  ``RuntimeError``  the embedding service gave no answer
``llm.LLMError``              ``RuntimeError``        a chat request failed
``llm.LLMUnavailable``        ``LLMError``            no chat model can be had
``semantic.DegradedWarning``  ``RuntimeWarning``      the memory runs on the TF-IDF fallback
``erasure.ErasureIncomplete``  ``RuntimeError``        a reader kept a WAL from being emptied
``storage.UnsafeJournalWarning``  ``RuntimeWarning``  SQLite's journal is off
``storage.StoreFileError``    ``ValueError``          a SQLite path cannot be opened (named)
============================  ======================  ==========================================

The classes live next to the code that raises them (their messages need its types); this
module is only their common root, and imports nothing.

>>> from gya_memory.working import BudgetError
>>> issubclass(BudgetError, GyaMemoryError) and issubclass(BudgetError, ValueError)
True
"""

from __future__ import annotations

__all__ = ["GyaMemoryError", "FAMILY"]


class GyaMemoryError(Exception):
    """The root of every error and warning this package raises on purpose."""


FAMILY: tuple[str, ...] = (
    "working.BudgetError",
    "semantic_values.EmbedderMismatch",
    "curated_file.MemoryFull",
    "curated_file.InjectionRefused",
    "injection.InstructionRefused",
    "files.MemoryLocked",
    "stores.common.StoreLocked",
    "session_search.FTS5Unavailable",
    "embeddings.base.EmbeddingUnavailable",
    "llm.interface.LLMError",
    "llm.interface.LLMUnavailable",
    "semantic_values.DegradedWarning",
    "storage.UnsafeJournalWarning",
    "storage.StoreFileError",
    "procedural_file.ProceduresDamaged",
    "erasure.ErasureIncomplete",
)
"""Where each member of the family is defined, as ``module.Class`` under ``gya_memory``."""
