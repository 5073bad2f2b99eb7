"""Shared fixtures: every test gets its own data folder, never the user's ~/.gya_memory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "gya_data"
    monkeypatch.setenv("GYA_DATA_DIR", str(data))
    monkeypatch.delenv("MEMORY_SQLITE_UNSAFE_NO_JOURNAL", raising=False)
    return data


def child_env(**extra: str) -> dict[str, str]:
    """Environment for a child Python process that imports the working tree's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONIOENCODING"] = "utf-8"
    env.update(extra)
    return env


PYTHON = sys.executable
