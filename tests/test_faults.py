"""Fault injection: a writer child is killed with SIGKILL at a random moment in every write
path; a restart must find every reported write, an intact store and no half-written batch.

A few trials per path here (the whole file stays well under two minutes);
``benchmarks/bench_faults.py`` runs many.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gya_memory.faults.trials import PATHS, run_trials, summary

SEMANTIC = {"semantic_store_many", "reembed", "fallback_switch"}
TRIALS = {path: (2 if path in SEMANTIC else 3) for path in PATHS}


@pytest.mark.parametrize("path", PATHS)
def test_a_killed_writer_loses_nothing_and_corrupts_nothing(tmp_path: Path, path: str) -> None:
    results = run_trials(path, TRIALS[path], tmp_path, seed=10)
    s = summary(path, results)
    assert s["trials"] == TRIALS[path]
    assert s["lost"] == 0 and s["corrupt"] == 0, s


def test_the_kill_lands_in_the_middle_of_the_writes(tmp_path: Path) -> None:
    results = run_trials("episodic_add_many", 3, tmp_path, seed=11)
    assert sum(t.committed for t in results) > 0  # the child wrote, and was cut off
    assert all(t.lost == 0 and t.corrupt == 0 for t in results)


def test_unknown_path_is_refused(tmp_path: Path) -> None:
    from gya_memory.faults.trials import run_trial

    with pytest.raises(ValueError, match="path must be one of"):
        run_trial("nope", tmp_path / "x", 0)
