"""One bounded file of curated memory (MEMORY.md or USER.md): entries split by ``§``, a
character cap, a cross-process lock, atomic saves, and every write scanned for injections.

:mod:`gya_memory.hermes.curated` puts two of them together with the session snapshot.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gya_memory.base.checks import is_int
from gya_memory.base.checks import check_finite, check_text
from gya_memory.base.fence import fence
from gya_memory.base.files import atomic_write_text, fsync_folder
from gya_memory.base.files import file_lock
from gya_memory.base.files import MemoryLocked
from gya_memory.hermes.injection import Finding
from gya_memory.hermes.injection import scan
from gya_memory.base.errors import GyaMemoryError


ENTRY_DELIMITER = "\n§\n"


LOCK_TIMEOUT_S = 10.0


_PREVIEW_CHARS = 60


ChangeKind = Literal["added", "replaced", "removed", "noop"]


# -- results and errors ---------------------------------------------------------------------
@dataclass(frozen=True)
class Usage:
    """How full one file is: ``chars`` of ``cap``, ``percent`` rounded down."""

    chars: int
    cap: int
    percent: int

    @classmethod
    def of(cls, chars: int, cap: int) -> Usage:
        return cls(chars=chars, cap=cap, percent=chars * 100 // cap)

    @property
    def free(self) -> int:
        """Characters left before the cap (negative if a hand-edited file is over it)."""
        return self.cap - self.chars

    def __str__(self) -> str:
        return f"{self.percent}% — {self.chars:,}/{self.cap:,} chars"


@dataclass(frozen=True)
class Change:
    """What one write did: ``kind``, the entry it concerns and the file's usage afterwards.

    ``entry`` is the added, new (replaced) or removed text; for ``"replaced"``, ``previous`` is
    the text it replaced. ``"noop"`` means the file already held exactly this and was left
    as it was.
    """

    kind: ChangeKind
    entry: str
    usage: Usage
    previous: str | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {_preview(self.entry)!r} ({self.usage})"


class MemoryFull(ValueError, GyaMemoryError):
    """The write would take the file over its cap; nothing was written."""

    def __init__(self, name: str, action: str, chars_after: int, cap: int, current: Usage) -> None:
        self.name = name
        self.chars_after = chars_after
        self.cap = cap
        self.over = chars_after - cap
        self.current = current
        super().__init__(
            f"{name} is full: this {action} would make it {chars_after:,}/{cap:,} chars, "
            f"{self.over:,} over the cap (now {current}). Nothing was written. "
            "Please consolidate: merge related entries into a shorter one with replace(), "
            "or remove() stale ones, then try again.\n"
            f"{name} 已满：这次{_ACTION_ZH.get(action, action)}后将达到 {chars_after:,}/{cap:,} "
            f"字符，超出上限 {self.over:,} 字符（当前 {current}）。未写入任何内容。"
            "请先整合：用 replace() 把相关条目合并成更短的一条，或用 remove() 删除过时的条目，"
            "然后再试。"
        )


_ACTION_ZH = {"add": "添加", "replace": "替换"}


class InjectionRefused(ValueError, GyaMemoryError):
    """The text looks like an instruction to the model or hides characters; nothing was written."""

    def __init__(self, name: str, findings: list[Finding]) -> None:
        self.name = name
        self.findings = findings
        lines = [
            f"refused to write to {name}: the text looks like a prompt injection, and "
            "everything in this file goes into the system prompt. Nothing was written.",
            f"拒绝写入 {name}：这段文字像是提示注入，而这个文件的内容会进入系统提示。未写入任何内容。",
        ]
        for f in findings:
            lines.append(f"- [{f.rule}] {f.reason_en} / {f.reason_zh}: {f.excerpt!r}")
        super().__init__("\n".join(lines))


# -- helpers ------------------------------------------------------------------------------------
def _preview(text: str, width: int = _PREVIEW_CHARS) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= width else one_line[: width - 1] + "…"


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _check_entry(name: str, text: object, what: str = "text", cap: int | None = None,
                 current: Usage | None = None, action: str = "add") -> str:
    if cap is not None and isinstance(text, str) and len(text.strip()) > cap:
        # Before any scan: a 10 MB text is refused in microseconds, not after the scanner.
        chars = len(text.strip())
        now = current if current is not None else Usage.of(0, cap)
        raise MemoryFull(name, action, chars + (now.chars + len(ENTRY_DELIMITER) if now.chars else 0),
                         cap, now)
    text = _normalise(check_text(what, text, sys.maxsize))
    if any(line.strip() == "§" for line in text.split("\n")):
        raise ValueError(
            f"{what} has a line that is only '§'; that line separates entries in {name}, "
            "so an entry may not contain it (a § inside a line is fine)"
        )
    findings = scan(text)
    if findings:
        raise InjectionRefused(name, findings)
    return text


def _check_substring(substring: object) -> str:
    return _normalise(check_text("substring", substring, sys.maxsize))


def _parse(raw: str) -> list[str]:
    """The entries of a file's text: split at the delimiter, stripped, empty and repeats dropped."""
    raw = raw.replace("\r\n", "\n").replace("\r", "\n")
    entries = (e.strip() for e in raw.split(ENTRY_DELIMITER))
    return list(dict.fromkeys(e for e in entries if e))


BLOCKED = "BLOCKED: this entry looks like a prompt injection and is not shown ({rules}) / 已屏蔽：疑似提示注入，未显示"
"""What a poisoned entry (say, from a hand-edited file) becomes in a session snapshot."""


def render_entries(title: str, text: str, usage: str, tag: str = "entries") -> str:
    """A heading, then the entries fenced as data (:mod:`gya_memory.base.fence`): one ``- `` line
    each, so no entry can forge a heading, a tag or another entry. (Bullets, not numbers:
    the small local model used the profile less reliably when it was numbered.)"""
    body = fence(tag, _parse(text), numbered=False) if text else "(empty)"
    return f"## {title} [{usage}]\n{body}"


def screen_entries(entries: list[str]) -> tuple[list[str], list[str]]:
    """Entries with every poisoned one replaced by the :data:`BLOCKED` placeholder, and
    one line per blocked entry saying why."""
    shown, blocked = [], []
    for i, entry in enumerate(entries, start=1):
        findings = scan(entry)
        if findings:
            rules = ", ".join(f.rule for f in findings)
            shown.append(BLOCKED.format(rules=rules))
            blocked.append(f"entry {i}: {rules}: {_preview(entry)!r}")
        else:
            shown.append(entry)
    return shown, blocked


def _is_temp_of(name: str, file_name: str) -> bool:
    return name.startswith(f".{file_name}.") and name.endswith(".tmp")


# -- one bounded file ---------------------------------------------------------------------------
class MemoryFile:
    """One bounded, curated memory file: its entries, changed by unique substring.

    >>> import tempfile, pathlib
    >>> notes = MemoryFile(pathlib.Path(tempfile.mkdtemp()) / "USER.md", cap=1375, title="USER PROFILE")
    >>> print(notes.add("User prefers TypeScript over JS"))
    added: 'User prefers TypeScript over JS' (2% — 31/1,375 chars)
    >>> notes.replace("TypeScript", "User prefers TypeScript over JS; strict mode on").kind
    'replaced'
    >>> notes.entries()
    ['User prefers TypeScript over JS; strict mode on']
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        cap: int,
        title: str,
        *,
        lock_timeout: float = LOCK_TIMEOUT_S,
        tag: str = "entries",
    ) -> None:
        if not is_int(cap, low=1):
            raise ValueError(f"cap must be a positive number of characters, got {cap!r}")
        lock_timeout = check_finite("lock_timeout", lock_timeout, low=0)
        self.path = Path(path)
        if not self.path.name:
            raise ValueError(f"path must name a file, got {path!r}")
        self.cap = cap
        self.title = check_text("title", title, 200)
        self.tag = tag
        self.lock_timeout = float(lock_timeout)
        self._remove_stale_temps(wait=False)

    def _stale_temps(self) -> list[Path]:
        try:
            return [p for p in self.path.parent.iterdir() if _is_temp_of(p.name, self.path.name)]
        except (FileNotFoundError, NotADirectoryError):
            return []

    def _remove_stale_temps(self, *, wait: bool) -> int:
        """Remove temp files a killed writer left behind (``.MEMORY.md.*.tmp``). Only with
        the lock held, so a live writer's temp file is never touched; on open
        (``wait=False``) it is skipped if another process holds the lock right now."""
        if not self._stale_temps():
            return 0
        try:
            with file_lock(self.lock_path, self.lock_timeout if wait else 0.0, self.name):
                return self._unlink_temps()
        except MemoryLocked:
            return 0

    def _unlink_temps(self) -> int:
        removed = 0
        for p in self._stale_temps():
            try:
                p.unlink()
                removed += 1
            except FileNotFoundError:
                pass
        return removed

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def lock_path(self) -> Path:
        """The sidecar lock file, e.g. ``.MEMORY.md.lock`` next to ``MEMORY.md``."""
        return self.path.with_name(f".{self.path.name}.lock")

    # -- reading (no lock needed: writes replace the file atomically) --------------------------
    def _read(self) -> list[str]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        try:
            return _parse(raw.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise ValueError(f"{self.path} is not UTF-8 text ({exc}); fix or remove it") from None

    def entries(self) -> list[str]:
        """The entries as they are on disk now, in order."""
        return self._read()

    def text(self) -> str:
        """The file's content in canonical form: the entries joined by the delimiter."""
        return ENTRY_DELIMITER.join(self._read())

    def usage(self) -> Usage:
        """How many characters of the cap the entries use now (see the module docstring)."""
        return Usage.of(len(self.text()), self.cap)

    def render(self) -> str:
        """This file as a system-prompt block, from the disk as it is now."""
        text = self.text()
        return render_entries(self.title, text, str(Usage.of(len(text), self.cap)), self.tag)

    # -- writing --------------------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[list[str]]:
        with file_lock(self.lock_path, self.lock_timeout, self.name):
            self._unlink_temps()  # a killed writer's leftovers; no live writer now
            yield self._read()  # fresh, inside the lock: another kernel may have written

    def _usage_if_big(self, text: object) -> Usage | None:
        """The current usage, read only when ``text`` alone is over the cap (for the message)."""
        if isinstance(text, str) and len(text.strip()) > self.cap:
            return self.usage()
        return None

    def erase(self) -> int:
        """Delete this file, its lock and any temp files; returns how many entries it held."""
        with file_lock(self.lock_path, self.lock_timeout, self.name):
            entries = self._read()
            self._unlink_temps()
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
        try:
            self.lock_path.unlink()
        except FileNotFoundError:
            pass
        if self.path.parent.exists():
            fsync_folder(self.path.parent)
        return len(entries)

    def _check_room(self, action: str, before: list[str], after: list[str]) -> None:
        chars_before = len(ENTRY_DELIMITER.join(before))
        chars_after = len(ENTRY_DELIMITER.join(after))
        # Over the cap is refused unless the change shrinks a (hand-edited) oversize file.
        if chars_after > self.cap and chars_after >= chars_before:
            raise MemoryFull(self.name, action, chars_after, self.cap, Usage.of(chars_before, self.cap))

    def _save(self, entries: list[str]) -> Usage:
        text = ENTRY_DELIMITER.join(entries)
        atomic_write_text(self.path, text)
        return Usage.of(len(text), self.cap)

    def _find(self, entries: list[str], substring: str) -> int:
        matches = [i for i, e in enumerate(entries) if substring in e]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            listed = "\n".join(f"  - {_preview(e)!r}" for e in entries) or "  (the file is empty)"
            raise ValueError(f"no entry contains {substring!r} in {self.name}; its entries:\n{listed}")
        listed = "\n".join(f"  - {_preview(entries[i])!r}" for i in matches)
        raise ValueError(
            f"{substring!r} is in {len(matches)} entries of {self.name}; give a longer "
            f"substring that only one of them contains:\n{listed}"
        )

    def add(self, text: str) -> Change:
        """Append ``text`` as a new entry. Adding an exact duplicate changes nothing ("noop")."""
        entry = _check_entry(self.name, text, cap=self.cap, current=self._usage_if_big(text))
        with self._locked() as entries:
            if entry in entries:
                return Change("noop", entry, Usage.of(len(ENTRY_DELIMITER.join(entries)), self.cap))
            after = [*entries, entry]
            self._check_room("add", entries, after)
            return Change("added", entry, self._save(after))

    def replace(self, old_substring: str, new_text: str) -> Change:
        """Replace the one entry that contains ``old_substring`` by ``new_text``."""
        substring = _check_substring(old_substring)
        entry = _check_entry(self.name, new_text, "new_text", cap=self.cap,
                             current=self._usage_if_big(new_text), action="replace")
        with self._locked() as entries:
            i = self._find(entries, substring)
            old = entries[i]
            if old == entry:
                return Change("noop", entry, Usage.of(len(ENTRY_DELIMITER.join(entries)), self.cap), old)
            if entry in entries:
                raise ValueError(
                    f"another entry of {self.name} already says exactly {_preview(entry)!r}; "
                    f"remove {_preview(old)!r} instead of replacing it"
                )
            after = [*entries[:i], entry, *entries[i + 1:]]
            self._check_room("replace", entries, after)
            return Change("replaced", entry, self._save(after), old)

    def remove(self, substring: str) -> Change:
        """Remove the one entry that contains ``substring``."""
        substring = _check_substring(substring)
        with self._locked() as entries:
            i = self._find(entries, substring)
            removed = entries[i]
            return Change("removed", removed, self._save([*entries[:i], *entries[i + 1:]]))

    def __repr__(self) -> str:
        return f"MemoryFile({self.name!r}, cap={self.cap:,}, title={self.title!r})"
