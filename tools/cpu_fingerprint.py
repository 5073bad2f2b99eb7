"""Print a fingerprint of this CPU: what decides whether llama.cpp's greedy output is
byte-identical to the stored notebook outputs (the machine kind and its SIMD features)."""

from __future__ import annotations

import platform
from pathlib import Path

FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
         "avx512_vnni", "avx_vnni", "amx_tile")


def fingerprint() -> str:
    parts = [platform.system(), platform.machine()]
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith(("flags", "Features")):
                have = set(line.split(":", 1)[1].split())
                parts += [f for f in FLAGS if f in have]
                break
    return " ".join(parts)


if __name__ == "__main__":
    print(fingerprint())
