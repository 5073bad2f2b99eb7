"""From memory to answer (从记忆到回答), and from conversation back to memory.

- ``retriever``   :class:`Retriever`: what an agent needs from a memory
- ``questions``   the kind of a question: a personal fact, advice, or general
- ``about``       whom a memory or a question is about (the user, a relation, a pet)
- ``slots``       what a fact question asks for (a number, a time); plans asked as done
- ``gate``        which candidates may reach the prompt: the free checks, then the model
- ``context``     context assembly: filter, budget, order, placement, fenced memories
- ``agent``       the closed loop: :class:`MemoryAgent`, traces, the recall_memory tool
- ``grounding``   is the answer supported by what was sent? Two rules, one :class:`Grounding`
- ``llm/``        the chat model: local Qwen2.5-Coder-1.5B, or an OpenAI-compatible server
- the write path: ``dates`` (relative dates resolved by rule), ``extraction`` (the model
  proposes facts), ``writing`` (add, update or skip each one), ``changes`` (signs of change)

Besides its own names this package offers two of the base that a prompt is built with:
:func:`fence` and :func:`language_of`.
"""

from __future__ import annotations

from gya_memory.base.lazy import lazy_names

# public name -> the module that defines it (imported on first use)
_EXPORTS: dict[str, str] = {
    "Policy": "gya_memory.answer.context",
    "assemble": "gya_memory.answer.context",
    "render_block": "gya_memory.answer.context",
    "reorder": "gya_memory.answer.context",
    "select": "gya_memory.answer.context",
    "Gate": "gya_memory.answer.gate",
    "recall_floor": "gya_memory.answer.gate",
    "RECALL_FLOOR_BY_LANGUAGE": "gya_memory.answer.gate",
    "JUDGE_SYSTEM": "gya_memory.answer.judge",
    "JUDGE_SYSTEM_ZH": "gya_memory.answer.judge",
    "READER_SYSTEM": "gya_memory.answer.judge",
    "READER_SYSTEM_ZH": "gya_memory.answer.judge",
    "judge_relevance": "gya_memory.answer.judge",
    "reader_relevance": "gya_memory.answer.judge",
    "question_kind": "gya_memory.answer.questions",
    "about_of": "gya_memory.answer.about",
    "fits": "gya_memory.answer.about",
    "MemoryAgent": "gya_memory.answer.agent",
    "RECALL_TOOL": "gya_memory.answer.agent",
    "admits_only": "gya_memory.answer.agent",
    "honest_reply": "gya_memory.answer.agent",
    "Grounding": "gya_memory.answer.grounding",
    "check_grounding": "gya_memory.answer.grounding",
    "ground": "gya_memory.answer.grounding",
    "Retriever": "gya_memory.answer.retriever",
    "get_llm": "gya_memory.answer.llm",
    "ChatLLM": "gya_memory.answer.llm.interface",
    "Reply": "gya_memory.answer.llm.interface",
    "LLMError": "gya_memory.answer.llm.interface",
    "LLMUnavailable": "gya_memory.answer.llm.interface",
    "LocalLLM": "gya_memory.answer.llm.local",
    "OpenAIChat": "gya_memory.answer.llm.openai",
    "extraction_messages": "gya_memory.answer.extraction",
    "parse_proposals": "gya_memory.answer.extraction",
    "remember": "gya_memory.answer.writing",
    "history_of": "gya_memory.answer.writing",
    "change_marker": "gya_memory.answer.changes",
    "fence": "gya_memory.base.fence",
    "language_of": "gya_memory.base.text",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
