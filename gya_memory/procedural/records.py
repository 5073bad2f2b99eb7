"""The procedures file: where it may be, its lock and temp files, and its JSON records
read with a clear error (:class:`ProceduresDamaged`, naming the file) for anything
:meth:`gya_memory.procedural.memory.ProceduralMemory.save` does not write.
:mod:`gya_memory.procedural.memory` turns the records into procedures.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from gya_memory.base.errors import GyaMemoryError
from gya_memory.base.files import atomic_write_text, temp_files_of


class ProceduresDamaged(ValueError, GyaMemoryError):
    """A procedures file is not what :meth:`ProceduralMemory.save` writes; the message names it."""


def check_procedures_path(path: object) -> Path:
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise ValueError(f"path must name a file (a str or Path), got {type(path).__name__}: "
                         f"{path!r:.80}")
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"{target} is a folder; give the procedures file's path, e.g. "
                         f"{target / 'procedures.json'}")
    return target


def lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


def remove_temps(path: Path) -> None:
    for temp in temp_files_of(path):
        try:
            temp.unlink()
        except FileNotFoundError:
            pass


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def write_records(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace ``path`` by ``records`` atomically (the caller holds the file's lock)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps({"procedures": records}, ensure_ascii=False, indent=1))


def read_records(path: Path) -> list[Any]:
    """The records in ``path`` ([] if it does not exist), or :class:`ProceduresDamaged`."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ProceduresDamaged(f"cannot read the procedures file {path}: {exc.strerror}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProceduresDamaged(f"{path} is not a procedures file (not UTF-8 JSON: {exc}); "
                                "restore it from a backup or remove it") from None
    records = data.get("procedures") if isinstance(data, dict) else None
    if not isinstance(records, list):
        raise ProceduresDamaged(f"{path} has no 'procedures' list; restore it from a backup "
                                "or remove it")
    return records
