"""Notebook 03's kit for the episodic store: its facts as a table, and the restart check (读回：
换一个进程再读一遍) that proves they were on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gya_memory.base.checks import DEFAULT_USER
from gya_memory.episodic.memory import Fact

if TYPE_CHECKING:  # pandas is imported only when a table is asked for
    import pandas as pd


def as_dataframe(facts: Iterable[Fact]) -> pd.DataFrame:
    """The facts as a pandas table, one row each, for display in a notebook."""
    import pandas as pd

    columns = list(Fact.__dataclass_fields__)
    return pd.DataFrame([f.as_dict() for f in facts], columns=columns).set_index("id")


def read_in_fresh_process(path: str | os.PathLike[str], user_id: str = DEFAULT_USER) -> list[Fact]:
    """Read every fact of ``user_id`` from ``path`` in a brand-new Python process.

    This is the restart test in one call: nothing of this process's memory can reach the
    child, so whatever comes back was on disk.
    """
    out = subprocess.run(
        [sys.executable, "-m", "gya_memory.episodic.memory", str(path), "--user", user_id],
        check=True, capture_output=True, text=True, encoding="utf-8",
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    ).stdout
    return [Fact(**json.loads(line)) for line in out.splitlines() if line.strip()]
