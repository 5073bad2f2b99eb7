"""The Hermes case study (Hermes 案例): how a real agent keeps memory, rebuilt small.

- ``curated``       bounded MEMORY.md / USER.md with frozen snapshots (:class:`CuratedMemory`)
- ``bounded_file``  one bounded file: its cap, its lock, its checks, its entries
- ``sessions``      session search: raw messages in SQLite FTS5 (:class:`SessionStore`)
- ``fts``           its values, the FTS5 check, query terms, snippets
- ``injection``     prompt-injection scanning before a store writes and before a prompt
- ``reading``       how a text is read before the rules see it (look-alikes, leetspeak, base64)
- ``phrases``       what a rule is, and the words the rules are built from
- ``rules``         the rules: families of paraphrases, in English and Chinese
"""

from __future__ import annotations

from gya_memory.base.lazy import lazy_names

# public name -> the module that defines it (imported on first use)
_EXPORTS: dict[str, str] = {
    "CuratedMemory": "gya_memory.hermes.curated",
    "GUIDANCE": "gya_memory.hermes.curated",
    "ENTRY_DELIMITER": "gya_memory.hermes.bounded_file",
    "MemoryFile": "gya_memory.hermes.bounded_file",
    "MemoryFull": "gya_memory.hermes.bounded_file",
    "InjectionRefused": "gya_memory.hermes.bounded_file",
    "SessionStore": "gya_memory.hermes.sessions",
    "query_terms": "gya_memory.hermes.fts",
    "FTS5Unavailable": "gya_memory.hermes.fts",
    "scan": "gya_memory.hermes.injection",
    "Finding": "gya_memory.hermes.injection",
    "InstructionRefused": "gya_memory.hermes.injection",
    "prompt_findings": "gya_memory.hermes.injection",
    "screen_for_prompt": "gya_memory.hermes.injection",
    "normalise": "gya_memory.hermes.reading",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
