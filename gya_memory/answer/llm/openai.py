"""The OpenAI-compatible back end: any server speaking ``POST {base}/chat/completions``
(Ollama, vLLM, a llama.cpp server, OpenAI itself).
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from gya_memory.base.checks import is_loopback as _is_loopback
from gya_memory.base.checks import is_number, redact_url
from gya_memory.answer.llm.interface import DEFAULT_TIMEOUT_S, ChatLLM, LLMError, LLMUnavailable, Reply
from gya_memory.answer.llm.interface import reply_from_response


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
        if not isinstance(base_url, str):
            raise ValueError(f"base_url must be a URL string such as http://127.0.0.1:11434/v1, "
                             f"got {type(base_url).__name__}")
        base = base_url.strip().rstrip("/")
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url={redact_url(base_url)!r} must look like http://host:port/v1")
        if parts.path in ("", "/"):
            base += "/v1"
        if not is_number(timeout) or not math.isfinite(timeout) or timeout <= 0:
            raise ValueError(f"timeout must be a number of seconds above 0, got {timeout!r:.80}")
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
        except requests.exceptions.RequestException as exc:
            # e.g. InvalidURL, whose text quotes the netloc, password and all: not shown
            raise LLMError(
                f"the chat server URL {url} could not be used ({type(exc).__name__}); fix "
                "GYA_LLM_BASE_URL (percent-encode a '/', '@' or ':' in the password)"
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
        return reply_from_response(
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
