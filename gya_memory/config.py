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
=================================== ==========================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def _flag(env: Mapping[str, str], name: str) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ValueError(f"{name}={env[name]!r} is not a yes/no value; use 1 or 0")


@dataclass(frozen=True)
class Settings:
    """What the environment asks of the package."""

    data_dir: Path
    unsafe_no_journal: bool = False


def get_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read the settings from ``environ`` (default: ``os.environ``)."""
    env = os.environ if environ is None else environ
    raw_dir = env.get("GYA_DATA_DIR", "").strip()
    data_dir = Path(raw_dir).expanduser() if raw_dir else Path.home() / ".gya_memory"
    return Settings(
        data_dir=data_dir,
        unsafe_no_journal=_flag(env, "MEMORY_SQLITE_UNSAFE_NO_JOURNAL"),
    )
