"""The chat interface: :class:`ChatLLM`, what it returns (:class:`Reply`), its errors,
and the OpenAI message format that both back ends speak.
"""

from __future__ import annotations

import json
import math
from abc import ABC
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gya_memory.base.checks import is_int, redact_url
from gya_memory.base.errors import GyaMemoryError
from gya_memory.base.text import ROLES
from gya_memory.answer.llm.tools import ToolCall, parse_tool_calls

DEFAULT_MAX_TOKENS = 256
DEFAULT_TIMEOUT_S = 120.0


# -- errors ------------------------------------------------------------------------------
class LLMError(RuntimeError, GyaMemoryError):
    """A chat request failed: the server answered with an error, too late, or nonsense."""

    def __init__(self, *args: object) -> None:  # never a user:password@ in a message
        super().__init__(*(redact_url(a) if isinstance(a, str) else a for a in args))

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"{type(self).__name__}: {self}"]


class LLMUnavailable(LLMError):
    """No chat model can be had; the message says what to install or set."""


# -- what a chat returns -------------------------------------------------------------------

@dataclass(frozen=True)
class Reply:
    """One answer from the model.

    ``latency_s`` (wall-clock seconds for the request) is left out of the ``repr`` and of
    ``==``, so printing or comparing replies gives the same result on every run.
    """

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    latency_s: float = field(default=0.0, repr=False, compare=False)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_message(self) -> dict[str, Any]:
        """This reply as the assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [call.as_dict() for call in self.tool_calls]
        return message


# -- messages and tools ----------------------------------------------------------------------
def check_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validate OpenAI-style messages; return plain dicts (``ToolCall`` objects turned to dicts)."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ValueError(
            "messages must be a list of {'role': ..., 'content': ...} dicts, "
            f"got {type(messages).__name__}"
        )
    if not messages:
        raise ValueError("messages is empty; give at least one user message")
    checked = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"message {i} must be a dict, got {type(message).__name__}")
        role = message.get("role")
        if role not in ROLES:
            raise ValueError(f"message {i} has role {role!r}; use one of {', '.join(ROLES)}")
        out = dict(message)
        content = out.get("content")
        calls = out.get("tool_calls")
        if calls:
            if role != "assistant":
                raise ValueError(f"message {i}: only an assistant message can have tool_calls")
            out["tool_calls"] = [c.as_dict() if isinstance(c, ToolCall) else c for c in calls]
            if content is None:
                out["content"] = ""
        elif not isinstance(content, str):
            raise ValueError(
                f"message {i} ({role}) needs 'content' as a string, got {content!r}"
            )
        if role == "tool" and not out.get("tool_call_id"):
            raise ValueError(f"message {i} (tool) needs the 'tool_call_id' it answers")
        checked.append(out)
    return checked


def tool_names_of(tools: Sequence[Mapping[str, Any]] | None) -> list[str]:
    names = []
    for i, tool in enumerate(tools or ()):
        kind = tool.get("type", "function") if isinstance(tool, Mapping) else None
        function = tool.get("function") if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if kind != "function" or not isinstance(name, str) or not name:
            raise ValueError(
                f"tool {i} must be an OpenAI function schema "
                "{'type': 'function', 'function': {'name': ..., 'parameters': {...}}}"
            )
        names.append(name)
    return names


# -- the interface -----------------------------------------------------------------------
class ChatLLM(ABC):
    """What every back end offers: ``chat`` and ``close``."""

    #: a short name for the model, as it appears in ``Reply.model``
    name: str
    #: whether :meth:`next_token_probs` works (the relevance judge needs it)
    gives_probabilities: bool = False

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
    ) -> Reply:
        """Send ``messages``; return the model's :class:`Reply`. The request is checked here
        (bad messages, tools or options raise ``ValueError`` before anything is sent)."""
        body = _request_body(
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            stop=stop,
            tools=tools,
            tool_choice=tool_choice,
        )
        return self._complete(body, tool_names_of(tools))

    def _complete(self, body: dict[str, Any], tool_names: Collection[str]) -> Reply:
        """Send one checked OpenAI-style request body; return the reply. Back ends implement
        this (a test double may override :meth:`chat` itself instead)."""
        raise NotImplementedError

    def next_token_probs(self, messages: Sequence[Mapping[str, Any]], *,
                         top: int = 10) -> dict[str, float]:
        """The probabilities of the first token the model would write, for its ``top`` most
        likely tokens: a prefill with one token out, cheap next to an answer. Tokens are
        stripped and lowercased (``" Yes"`` and ``"yes"`` add up). Used by the relevance judge
        (``gya_memory.answer.gate``)."""
        if not is_int(top, low=1, high=20):
            raise ValueError(f"top must be a whole number from 1 to 20, got {top!r}")
        body = _request_body(messages, max_tokens=1, temperature=0.0, seed=0, stop=None,
                             tools=None, tool_choice=None)
        body.update(logprobs=True, top_logprobs=top)
        return _first_token_probs(self._logprobs(body), where=self.name)

    def _logprobs(self, body: dict[str, Any]) -> Any:
        """Send ``body`` (which asks for logprobs); return the raw OpenAI-style response."""
        raise LLMError(f"{type(self).__name__} cannot report token probabilities")

    def close(self) -> None:
        """Free what the back end holds (a no-op unless it holds something)."""

    def __enter__(self) -> ChatLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _request_body(
    messages: Sequence[Mapping[str, Any]],
    *,
    max_tokens: int,
    temperature: float,
    seed: int,
    stop: Sequence[str] | None,
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: str | Mapping[str, Any] | None,
) -> dict[str, Any]:
    if not is_int(max_tokens, low=1):
        raise ValueError(f"max_tokens must be a whole number of at least 1, got {max_tokens!r}")
    if not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
        raise ValueError(f"temperature must be between 0 and 2, got {temperature!r}")
    body: dict[str, Any] = {
        "messages": check_messages(messages),
        "max_tokens": max_tokens,
        "temperature": float(temperature),
        "seed": int(seed),
        "stream": False,
    }
    if stop:
        body["stop"] = [stop] if isinstance(stop, str) else list(stop)
    if tools:
        tool_names_of(tools)
        body["tools"] = [dict(t) for t in tools]
    if tool_choice is not None:
        if not tools:
            raise ValueError("tool_choice given without tools")
        body["tool_choice"] = tool_choice
    return body


def _first_token_probs(data: Any, *, where: str) -> dict[str, float]:
    try:
        top = data["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        probs: dict[str, float] = {}
        for entry in top:
            token = str(entry["token"]).strip().lower()
            probs[token] = probs.get(token, 0.0) + math.exp(float(entry["logprob"]))
    except (KeyError, IndexError, TypeError, ValueError):
        raise LLMError(f"{where} answered without token probabilities (logprobs): "
                       f"{str(data)[:300]}") from None
    return probs


def reply_from_response(
    data: Any,
    *,
    model: str,
    tool_names: Collection[str],
    latency_s: float,
    where: str,
    renumber_calls: bool,
) -> Reply:
    """Turn an OpenAI-style chat completion into a :class:`Reply`."""
    try:
        choice = data["choices"][0]
        message = choice["message"]
        if not isinstance(message, Mapping):
            raise TypeError
    except (KeyError, IndexError, TypeError):
        raise LLMError(f"{where} answered without choices[0].message: {str(data)[:300]}") from None
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise LLMError(f"{where} answered with non-text content: {str(text)[:300]}")
    calls: list[ToolCall] = []
    for i, raw in enumerate(message.get("tool_calls") or []):
        try:
            function = raw["function"]
            name = function["name"]
            arguments = function.get("arguments") or {}
            if isinstance(arguments, str):
                arguments = json.loads(arguments) if arguments.strip() else {}
        except (KeyError, TypeError, ValueError):
            raise LLMError(f"{where} sent a tool call that cannot be read: {raw!r}") from None
        if not isinstance(arguments, dict):
            raise LLMError(f"{where}: the arguments of tool call {name!r} are not an object")
        call_id = f"call_{i}" if renumber_calls or not raw.get("id") else str(raw["id"])
        calls.append(ToolCall(id=call_id, name=name, arguments=arguments))
    if not calls and tool_names:
        text, calls = parse_tool_calls(text, tool_names)
    finish_reason = str(choice.get("finish_reason") or "stop")
    if calls:
        finish_reason = "tool_calls"
    usage = data.get("usage") or {}
    return Reply(
        text=text,
        model=model,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        tool_calls=calls,
        finish_reason=finish_reason,
        latency_s=latency_s,
    )
