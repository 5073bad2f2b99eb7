"""One family of errors: everything the package raises on purpose is a :class:`GyaMemoryError`.

Each error also keeps the built-in base it always had, so ``except ValueError`` still works
where it did, and ``except GyaMemoryError`` catches any of them:

==================================================  ======================  ==========================================
class (importable from gya_memory.)                 built-in base           raised when
==================================================  ======================  ==========================================
``working.BudgetError``                             ``ValueError``          the messages that must stay are over budget
``semantic.values.EmbedderMismatch``                ``ValueError``          a collection was built by another embedder
``hermes.bounded_file.MemoryFull``                  ``ValueError``          a write would take a file over its cap
``hermes.bounded_file.InjectionRefused``            ``ValueError``          the text looks like a prompt injection
``hermes.injection.InstructionRefused``             ``ValueError``          a memory to store reads like an instruction
``base.files.MemoryLocked``                         ``TimeoutError``        another process held the file's lock
``procedural.records.ProceduresDamaged``            ``ValueError``          a procedures file is damaged (named)
``semantic.stores.common.StoreLocked``              ``RuntimeError``        the memory folder is open in another process
``hermes.fts.FTS5Unavailable``                      ``RuntimeError``        this SQLite has no FTS5 / trigram tokenizer
``semantic.embeddings.base.EmbeddingUnavailable``   ``RuntimeError``        the embedding service gave no answer
``answer.llm.interface.LLMError``                   ``RuntimeError``        a chat request failed
``answer.llm.interface.LLMUnavailable``             ``LLMError``            no chat model can be had
``semantic.values.DegradedWarning``                 ``RuntimeWarning``      the memory runs on the TF-IDF fallback
``erasure.ErasureIncomplete``                       ``RuntimeError``        a reader kept a WAL from being emptied
``episodic.sqlite.UnsafeJournalWarning``            ``RuntimeWarning``      SQLite's journal is off
``episodic.sqlite.StoreFileError``                  ``ValueError``          a SQLite path cannot be opened (named)
==================================================  ======================  ==========================================

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
    "semantic.values.EmbedderMismatch",
    "hermes.bounded_file.MemoryFull",
    "hermes.bounded_file.InjectionRefused",
    "hermes.injection.InstructionRefused",
    "base.files.MemoryLocked",
    "semantic.stores.common.StoreLocked",
    "hermes.fts.FTS5Unavailable",
    "semantic.embeddings.base.EmbeddingUnavailable",
    "answer.llm.interface.LLMError",
    "answer.llm.interface.LLMUnavailable",
    "semantic.values.DegradedWarning",
    "episodic.sqlite.UnsafeJournalWarning",
    "episodic.sqlite.StoreFileError",
    "procedural.records.ProceduresDamaged",
    "erasure.ErasureIncomplete",
)
"""Where each member of the family is defined, as ``module.Class`` under ``gya_memory``."""
