"""Make JupyterLab open cleanly for a class (run by `./run.sh setup` and `./run.sh lab`).

1. Settings overrides for this environment's Lab (``<venv>/share/jupyter/lab/settings/
   overrides.d/gya-memory.json``; your own ``overrides.json`` beside it is left alone):
   no news pop-up and no update check, and a file browser without the "Last Modified"
   column, so notebook names are not cut off.
2. A starting layout (the ``default`` workspace in ``<venv>/share/jupyter/lab/gya-workspaces``):
   the first notebook open, the file browser shown and wide enough for the names. It is
   written only when missing, so Lab restores each learner's own layout after that; delete
   the folder (or open ``/lab?reset``) to start over.
3. Every notebook in ``notebooks/`` trusted (``jupyter trust``), so Lab shows their stored
   outputs (HTML tables, plots) without the "not trusted" shield.

    python tools/lab_setup.py            # all three; prints one line
    python tools/lab_setup.py --check    # exit 1 and say what is missing, change nothing
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
FIRST_NOTEBOOK = "01_stateless_model.ipynb"
LEFT_WIDTH = 0.24  # share of the window for the file browser (Lab's own default is ~0.17)

OVERRIDES: dict[str, dict[str, Any]] = {
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/filebrowser-extension:browser": {
        "showLastModifiedColumn": False,
        "sortNotebooksFirst": True,
    },
}


def lab_dir(prefix: str | Path | None = None) -> Path:
    """This environment's Lab application folder (``<prefix>/share/jupyter/lab``)."""
    return Path(prefix or sys.prefix) / "share" / "jupyter" / "lab"


def overrides_path(prefix: str | Path | None = None) -> Path:
    return lab_dir(prefix) / "settings" / "overrides.d" / "gya-memory.json"


def workspaces_dir(prefix: str | Path | None = None) -> Path:
    return lab_dir(prefix) / "gya-workspaces"


def default_workspace(first: str = FIRST_NOTEBOOK) -> dict[str, Any]:
    """Lab's saved layout: ``first`` open, the file browser shown at :data:`LEFT_WIDTH`."""
    widget = f"notebook:{first}"
    return {
        "data": {
            "layout-restorer:data": {
                "main": {
                    "dock": {"type": "tab-area", "currentIndex": 0, "widgets": [widget]},
                    "current": widget,
                },
                "down": {"size": 0, "widgets": []},
                "left": {
                    "collapsed": False,
                    "visible": True,
                    "current": "filebrowser",
                    "widgets": ["filebrowser", "running-sessions", "table-of-contents",
                                "extensionmanager.main-view"],
                },
                "right": {"collapsed": True, "visible": True, "widgets": []},
                "relativeSizes": [LEFT_WIDTH, 1 - LEFT_WIDTH, 0],
                "top": {"simpleVisibility": True},
            },
            widget: {"data": {"path": first, "factory": "Notebook"}},
            "file-browser-filebrowser:cwd": {"path": ""},
        },
        "metadata": {"id": "default"},
    }


def write_overrides(prefix: str | Path | None = None) -> bool:
    """Write the overrides file; True if it changed."""
    path = overrides_path(prefix)
    text = json.dumps(OVERRIDES, indent=2) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def seed_workspace(prefix: str | Path | None = None, first: str = FIRST_NOTEBOOK) -> bool:
    """Write the default workspace unless one exists; True if written."""
    from jupyterlab_server.workspaces_handler import WorkspacesManager

    manager = WorkspacesManager(str(workspaces_dir(prefix)))
    if manager.load("default").get("data"):
        return False
    manager.save("default", json.dumps(default_workspace(first), indent=2))
    return True


def _notary(data_dir: str | Path | None) -> Any:
    from jupyter_core.paths import jupyter_data_dir
    from nbformat.sign import NotebookNotary

    folder = Path(data_dir) if data_dir is not None else Path(jupyter_data_dir())
    folder.mkdir(parents=True, exist_ok=True)  # a fresh account has no Jupyter folder yet
    return NotebookNotary(data_dir=str(folder))


def untrusted(notebooks: Path = NOTEBOOKS, data_dir: str | Path | None = None) -> list[Path]:
    """The notebooks whose signature this user's Jupyter does not know (``data_dir``: where
    the signatures database lives; default Jupyter's data folder, as ``jupyter trust``)."""
    import nbformat

    notary = _notary(data_dir)
    out = []
    for path in sorted(notebooks.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if not notary.check_signature(nb):
            out.append(path)
    return out


def trust(notebooks: Path = NOTEBOOKS, data_dir: str | Path | None = None) -> int:
    """Sign (trust) every untrusted notebook, as ``jupyter trust`` does; how many."""
    import nbformat

    notary = _notary(data_dir)
    paths = untrusted(notebooks, data_dir)
    for path in paths:
        notary.sign(nbformat.read(path, as_version=4))
    return len(paths)


def problems(prefix: str | Path | None = None, notebooks: Path = NOTEBOOKS) -> list[str]:
    """What is not set up yet (empty when all is in place)."""
    out = []
    path = overrides_path(prefix)
    try:
        if json.loads(path.read_text(encoding="utf-8")) != OVERRIDES:
            out.append("the Lab settings overrides differ")
    except (OSError, ValueError):
        out.append("the Lab settings overrides (news pop-up off) are missing")
    n = len(untrusted(notebooks))
    if n:
        out.append(f"{n} notebook(s) are not trusted")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only report; change nothing")
    parser.add_argument("--prefix", help="the environment (default: this Python's)")
    args = parser.parse_args(argv)
    if args.check:
        found = problems(args.prefix)
        for p in found:
            print(f"lab_setup: {p}")
        return 1 if found else 0
    write_overrides(args.prefix)
    seeded = seed_workspace(args.prefix)
    signed = trust()
    print(f"lab_setup: news pop-up off, notebooks trusted ({signed} newly)"
          + (", opening on " + FIRST_NOTEBOOK if seeded else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
