"""Guards that keep the stored notebooks clean; nbval then re-executes and compares them.

nbval silently skips a code cell with no execution_count, compares stderr, and would
happily compare a stored absolute path against a fresh one: these tests catch all that
before a learner or CI does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ABSOLUTE_PATH = re.compile(r"(?<![\w.])(/(root|home|tmp|work|Users|var/folders|private)/|[A-Za-z]:\\\\Users)")
SECRET = re.compile(
    r"(sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|"
    r"(api[_-]?key|token|password)\s*[=:]\s*['\"][^'\"\s]{8,})",
    re.IGNORECASE,
)


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def text_of(output: dict) -> str:
    parts = [output.get("text", "")]
    for value in output.get("data", {}).values():
        parts.append(value if isinstance(value, (str, list)) else json.dumps(value))
    parts += output.get("traceback", [])
    return "".join("".join(p) if isinstance(p, list) else str(p) for p in parts)


def test_notebooks_are_numbered_in_reading_order() -> None:
    assert NOTEBOOKS, "no notebooks found"
    for path in NOTEBOOKS:
        assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", path.name), path.name
    numbers = [int(p.name[:2]) for p in NOTEBOOKS]
    assert numbers == sorted(set(numbers))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_code_cell_was_executed_in_order(path: Path) -> None:
    counts = [c.get("execution_count") for c in code_cells(load(path))]
    assert counts == list(range(1, len(counts) + 1)), "re-run with ./run.sh refresh"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_kernelspec_is_python3(path: Path) -> None:
    assert load(path)["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_stderr_unless_tagged_as_intended_error(path: Path) -> None:
    for i, cell in enumerate(code_cells(load(path))):
        if "raises-exception" in cell.get("metadata", {}).get("tags", []):
            continue
        kinds = [o.get("name") or o["output_type"] for o in cell.get("outputs", [])]
        assert "stderr" not in kinds and "error" not in kinds, f"code cell {i + 1}: {kinds}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_absolute_paths_or_secrets(path: Path) -> None:
    for i, cell in enumerate(load(path)["cells"]):
        texts = ["".join(cell["source"])] + [text_of(o) for o in cell.get("outputs", [])]
        for text in texts:
            assert not ABSOLUTE_PATH.search(text), f"cell {i}: {ABSOLUTE_PATH.search(text)}"
            assert not SECRET.search(text), f"cell {i}: looks like a secret"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_timing_metadata(path: Path) -> None:
    for cell in code_cells(load(path)):
        assert "execution" not in cell.get("metadata", {}), "refresh with ./run.sh refresh"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_opens_with_goals_and_ends_with_exercises(path: Path) -> None:
    markdown = ["".join(c["source"]) for c in load(path)["cells"] if c["cell_type"] == "markdown"]
    assert "What you'll learn" in markdown[0] and "What you need" in markdown[0]
    headings = re.findall(r"^## (.*)$", "\n".join(markdown), re.M)
    summary = next((i for i, m in enumerate(markdown) if "\n## Summary" in "\n" + m), None)
    assert summary is not None, "the notebook needs a '## Summary' section"
    assert "要点" in "\n".join(markdown[summary:summary + 3]), "a 要点 box follows the summary"
    assert headings[-1].startswith("Exercises"), "the last section is '## Exercises'"
    assert "### Exercise" in "\n".join(markdown[summary:])


@pytest.mark.parametrize("name", ["nbval_sanitize.cfg", "nbval_sanitize_model.cfg"])
def test_every_sanitizer_rule_is_explained(name: str) -> None:
    lines = (ROOT / "tests" / name).read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("["):
            following = lines[i + 1] if i + 1 < len(lines) else ""
            assert following.startswith("#"), f"rule {line} needs a comment saying why it varies"


def test_model_text_sanitizer_masks_only_quoted_model_words() -> None:
    from nbval.plugin import get_sanitize_patterns

    from gya_memory.base.text import quote

    text = (ROOT / "tests" / "nbval_sanitize_model.cfg").read_text(encoding="utf-8")
    rules = get_sanitize_patterns(text)

    def sanitize(shown: str) -> str:
        for regex, replace in rules:
            shown = re.sub(regex, replace, shown)
        return shown

    answer = quote("你最近在戒咖啡，\n少喝点。")
    shown = f"0.892 最近在戒咖啡 -> [1]\nanswer: {answer} done"
    assert sanitize(shown) == "0.892 最近在戒咖啡 -> [1]\nanswer: «MODEL TEXT» done"
    # a table padded to the widest answer compares equal whatever the answer's length
    short = f"  a    {quote('好')}\n  b    {quote('可以')}"
    wide = f"  a           {quote('好的，没问题，完全可以')}\n  b           {quote('可以')}"
    assert sanitize(short) == sanitize(wide)


def test_reference_cpu_is_recorded() -> None:
    import subprocess
    import sys

    recorded = (ROOT / "tests" / "reference_cpu.txt").read_text(encoding="utf-8").strip()
    here = subprocess.run([sys.executable, str(ROOT / "tools" / "cpu_fingerprint.py")],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert recorded and here  # run.sh compares the two to choose the sanitizer


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_output_lines_fit_without_wrapping(path: Path) -> None:
    """What Lab shows as text (streams, and plain reprs with no HTML beside them) stays within
    100 columns (a Chinese character takes two), so no word is broken across lines.
    Model answers («...») are exempt: their length is the model's."""
    from gya_memory.teaching.display import width

    too_wide = []
    for i, cell in enumerate(load(path)["cells"]):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if out.get("output_type") == "stream":
                text = "".join(out.get("text", ""))
            elif "text/html" in data or "image/png" in data:
                continue
            else:
                text = "".join(data.get("text/plain", ""))
            too_wide += [(i, width(line)) for line in text.splitlines()
                         if width(line) > 100 and "«" not in line]
    assert not too_wide, f"{path.name}: (cell, columns) of lines over 100 columns: {too_wide}"


def test_refresh_off_the_reference_cpu_keeps_the_stored_words() -> None:
    """tools/refresh_notebooks.py on another CPU: a cell whose outputs differ only in masked
    model text keeps its stored outputs; a changed cell without model text takes the fresh
    ones; a changed cell that shows model text is named (its words need the reference CPU)."""
    import sys

    import nbformat

    from gya_memory.base.text import quote

    sys.path.insert(0, str(ROOT / "tools"))
    from refresh_notebooks import keep_reference_words

    def book(*texts: str) -> nbformat.NotebookNode:
        nb = nbformat.v4.new_notebook()
        for i, text in enumerate(texts):
            cell = nbformat.v4.new_code_cell("x", execution_count=i + 1)
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
            nb.cells.append(cell)
        return nb

    stored = book(f"answer: {quote('好的')}\n", "kind: advice\n", f"kind: advice {quote('a')}\n")
    fresh = book(f"answer: {quote('可以')}\n", "kind: fact\n", f"kind: fact {quote('b')}\n")
    assert keep_reference_words(stored, fresh) == [2]
    assert fresh.cells[0].outputs[0].text == f"answer: {quote('好的')}\n"  # the stored words stay
    assert fresh.cells[1].outputs[0].text == "kind: fact\n"  # a real change is taken
    # a cell added above shifts the counts: a kept cell takes this run's count
    stored = book("a\n")
    stored.cells[0].outputs.append(nbformat.v4.new_output("execute_result", {"text/plain": "1"},
                                                         execution_count=1))
    fresh = book("new cell\n", "a\n")
    fresh.cells[1].outputs.append(nbformat.v4.new_output("execute_result", {"text/plain": "1"},
                                                        execution_count=2))
    stored.cells.insert(0, nbformat.v4.new_code_cell("y"))
    assert keep_reference_words(stored, fresh) == []
    assert fresh.cells[1].execution_count == 2 and fresh.cells[1].outputs[1].execution_count == 2
