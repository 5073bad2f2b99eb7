"""Curated memory files (整理过的记忆文件): Hermes Agent's semantic layer, as two small files.

Hermes Agent keeps what it has distilled about a user in two bounded Markdown files:

- ``MEMORY.md`` (cap 2,200 characters): the agent's own notes — environment facts, project
  conventions, lessons learned (环境事实、项目约定、踩过的坑);
- ``USER.md`` (cap 1,375 characters): the user profile — preferences, communication style,
  expectations (偏好、沟通风格、期望).

What belongs there is a conclusion that stays true across sessions ("the user prefers
TypeScript over JS"); what does not is trivia ("the user asked about Python"), facts that are
easy to find again, and raw data dumps (see :data:`GUIDANCE`).

The file format
    A file is its entries joined by :data:`ENTRY_DELIMITER`, ``"\\n§\\n"`` (a line holding
    only the section sign §, as Hermes does), with no header and no trailing newline, stored
    as UTF-8. An entry may span several lines and may contain § inside a line, but not a line
    that is only § (that line is the separator). Entries are stripped, line endings become
    ``\\n``, and an exact duplicate is stored once.

What counts against the cap
    ``len(ENTRY_DELIMITER.join(entries))``: Python characters (code points, not bytes, so 咖
    is one character although UTF-8 needs three bytes), delimiters included (3 each). For a
    file this module wrote, that is exactly the length of the file's text. A write that would
    go over the cap is refused with :class:`MemoryFull`, which asks to consolidate; nothing
    is ever truncated. Usage reads like Hermes's: ``"67% — 1,474/2,200 chars"``.

Changing an entry
    :meth:`MemoryFile.add` appends; :meth:`MemoryFile.replace` and :meth:`MemoryFile.remove`
    find the entry by a substring that exactly one entry contains (no ids to remember). Every
    change takes a lock, reads the file fresh (another kernel may have written it), and
    writes it atomically: a temporary file in the same folder, ``fsync``, ``os.replace``,
    then an ``fsync`` of the folder. A crash leaves the old file or the new one, never half
    of one, and two processes cannot lose each other's entries.

The frozen snapshot (冻结快照)
    :meth:`CuratedMemory.start_session` reads both files once and returns a frozen
    :class:`Snapshot`; its :meth:`Snapshot.system_prompt` is what the model sees for the
    whole session. Writes during the session reach the disk at once but not this prompt, so
    the prompt's prefix stays byte-for-byte the same and the LLM's prefix cache keeps
    working. The next ``start_session()`` sees them.

Write-time scanning (写入时扫描)
    Everything in these files ends up in a system prompt, so a write whose text looks like an
    instruction to the model ("ignore previous instructions", "忽略之前的所有指令", "不要告诉
    用户"), or hides text with invisible or bidirectional Unicode characters, is refused with
    :class:`InjectionRefused`, giving the reason in English and Chinese. :func:`scan` shows
    the findings without writing; :data:`RULES` lists the patterns.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
import unicodedata
from urllib.parse import quote
from dataclasses import dataclass
from pathlib import Path

from gya_memory.base.checks import check_user_id
from gya_memory.base.clock import Clock, aware_now, system_clock
from gya_memory.base.files import fsync_folder
from gya_memory.base.config import data_path
from gya_memory.hermes.bounded_file import ENTRY_DELIMITER, LOCK_TIMEOUT_S, MemoryFile, Usage, render_entries, screen_entries
from gya_memory.base.files import file_lock


MEMORY_FILE = "MEMORY.md"
USER_FILE = "USER.md"
MEMORY_CAP = 2200
USER_CAP = 1375
MEMORY_TITLE = "MEMORY (your notes)"
USER_TITLE = "USER PROFILE"
MEMORY_TAG = "memory_notes"
USER_TAG = "user_profile"


DEFAULT_FOLDER_NAME = "memories"


GUIDANCE = """\
Save (值得存): conclusions that stay true across sessions.
  - USER.md: preferences, communication style, expectations — e.g. "User prefers TypeScript over JS".
  - MEMORY.md: environment facts, project conventions, lessons learned.
Skip (跳过): trivia ("user asked about Python"), facts that are easy to look up again, raw data dumps.
Full (满了): consolidate — merge related entries with replace(), remove stale ones — then add.
"""
"""What to store and what to skip, in the spirit of Hermes's own tool description."""


# -- the two files and the session snapshot -------------------------------------------------------
@dataclass(frozen=True)
class Snapshot:
    """Both files as they were when the session started; it never changes afterwards.

    ``memory_text`` and ``user_text`` are what the model is shown: an entry that trips the
    injection scan (a file edited by hand is never scanned on write) is replaced by the
    :data:`BLOCKED` placeholder, and ``blocked`` says which and why. Usage counts the files
    as they are on disk.
    """

    memory_text: str
    user_text: str
    memory_usage: str
    user_usage: str
    taken_at: str
    memory_title: str = MEMORY_TITLE
    user_title: str = USER_TITLE
    blocked: tuple[str, ...] = ()
    memory_tag: str = MEMORY_TAG
    user_tag: str = USER_TAG

    def memory_block(self) -> str:
        return render_entries(self.memory_title, self.memory_text, self.memory_usage, self.memory_tag)

    def user_block(self) -> str:
        return render_entries(self.user_title, self.user_text, self.user_usage, self.user_tag)

    def system_prompt(self, base: str) -> str:
        """``base`` followed by the frozen MEMORY and USER PROFILE blocks.

        The same snapshot always gives the same string, so the prompt prefix stays cacheable
        for the whole session.
        """
        if not isinstance(base, str):
            raise ValueError(f"base must be a string, got {type(base).__name__}: {base!r}")
        blocks = [self.memory_block(), self.user_block()]
        return "\n\n".join([base.rstrip(), *blocks] if base.strip() else blocks)


def default_folder() -> Path:
    """Where the files live when no folder is given: ``$GYA_DATA_DIR/memories``."""
    return data_path(DEFAULT_FOLDER_NAME)


_TOMBSTONE = ".erased-"


def _remove_tombstones(base: Path) -> None:
    """Finish erasures a killed process left halfway (renamed, not yet deleted)."""
    try:
        stale = [p for p in base.iterdir() if p.name.startswith(_TOMBSTONE) and p.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return
    for p in stale:
        shutil.rmtree(p, ignore_errors=True)


FOLDER_PREFIX_CHARS = 24
"""How much of the id the folder name shows; the hash after it tells ids apart."""


def user_folder_name(user_id: str) -> str:
    """The folder of one user's files under the base folder: ``user-``, a readable prefix
    of the id, and a hash of the whole id (``alice`` → ``user-alice-2bd806c97f0e00af...``).

    Bounded and collision-free: at most 24 characters of the id (letters and digits of any
    script, ``-`` and ``_``; anything else becomes ``_``) plus 32 hex digits of its SHA-256,
    so the name stays under 140 bytes for any valid id (a file name may have 255), and two
    ids never share a folder, also on a file system that ignores case.
    """
    user_id = check_user_id(user_id)
    readable = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in user_id)
    prefix = re.sub(r"_+", "_", readable)[:FOLDER_PREFIX_CHARS].strip("_")
    digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32]
    return f"user-{prefix}-{digest}" if prefix else f"user-{digest}"


def legacy_folder_names(user_id: str) -> list[str]:
    """The names earlier versions gave ``user_id``'s folder (``user-`` and the id
    percent-encoded, for the id as given and in NFC and NFD), the ones a file can have."""
    forms = dict.fromkeys([user_id, unicodedata.normalize("NFC", user_id),
                           unicodedata.normalize("NFD", user_id)])
    names = ["user-" + quote(form, safe="-_") for form in forms]
    return [n for n in dict.fromkeys(names) if len(n.encode("utf-8")) <= 255]


def _migrate(base: Path, raw_id: str, folder: Path) -> None:
    """Rename a folder an earlier version made for this user (``user-alice``) to its
    bounded name, once, on first open. Two old folders for one id (the id written in NFC
    and in NFD) cannot be merged safely: that is an error naming both."""
    if folder.exists():
        return
    found = [base / n for n in legacy_folder_names(raw_id) if (base / n).is_dir()]
    if len(found) > 1:
        raise ValueError(f"two folders hold the curated files of user {folder.name!r}: "
                         f"{', '.join(map(str, found))}; merge them into {folder} by hand")
    if found:
        try:
            os.rename(found[0], folder)
        except FileNotFoundError:  # another process migrated it first
            pass
        fsync_folder(base)


class CuratedMemory:
    """``MEMORY.md`` (the agent's notes) and ``USER.md`` (the user profile) in one folder.

    With ``user_id``, the files live in that user's own folder under ``folder``
    (:func:`user_folder_name`; a folder an earlier version named ``user-<id>`` is renamed to
    it on first open), and :meth:`erase` removes them all. Nothing is read or
    written until you ask: the folder is created by the first write.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str] | None = None,
        *,
        user_id: str | None = None,
        clock: Clock = system_clock,
        memory_cap: int = MEMORY_CAP,
        user_cap: int = USER_CAP,
        lock_timeout: float = LOCK_TIMEOUT_S,
    ) -> None:
        if folder is not None and (isinstance(folder, bytes) or not isinstance(folder, (str, os.PathLike))
                                   or not str(folder).strip()):
            raise ValueError(f"folder must be a non-empty str or Path, got "
                             f"{type(folder).__name__}: {folder!r:.80}")
        base = Path(folder) if folder is not None else default_folder()
        self.user_id = None if user_id is None else check_user_id(user_id)
        self.folder = base if self.user_id is None else base / user_folder_name(self.user_id)
        self.clock = clock
        if self.user_id is not None:
            _remove_tombstones(base)
            _migrate(base, str(user_id), self.folder)
        self.memory = MemoryFile(self.folder / MEMORY_FILE, memory_cap, MEMORY_TITLE,
                                 lock_timeout=lock_timeout, tag=MEMORY_TAG)
        self.user = MemoryFile(self.folder / USER_FILE, user_cap, USER_TITLE,
                               lock_timeout=lock_timeout, tag=USER_TAG)

    def start_session(self) -> Snapshot:
        """Read both files once, scan every entry again (a hand-edited file was never scanned),
        blank the poisoned ones, and freeze the result for this session's system prompt."""
        now = aware_now(self.clock)
        memory_entries, user_entries = self.memory.entries(), self.user.entries()
        memory_shown, memory_blocked = screen_entries(memory_entries)
        user_shown, user_blocked = screen_entries(user_entries)
        return Snapshot(
            memory_text=ENTRY_DELIMITER.join(memory_shown),
            user_text=ENTRY_DELIMITER.join(user_shown),
            memory_usage=str(Usage.of(len(ENTRY_DELIMITER.join(memory_entries)), self.memory.cap)),
            user_usage=str(Usage.of(len(ENTRY_DELIMITER.join(user_entries)), self.user.cap)),
            taken_at=now.isoformat(),
            memory_title=self.memory.title,
            user_title=self.user.title,
            blocked=tuple(f"{MEMORY_FILE} {b}" for b in memory_blocked)
            + tuple(f"{USER_FILE} {b}" for b in user_blocked),
        )

    def check_erasable(self) -> None:
        """Raise unless :meth:`erase` can run: the user's folder, if there, is a folder whose
        files are readable (:func:`gya_memory.erasure.forget_user` asks before deleting)."""
        if self.folder.exists() and not self.folder.is_dir():
            raise NotADirectoryError(f"{self.folder} should be a folder of curated files but "
                                     "is a file; move it away. Nothing was deleted.")
        for file in (self.memory, self.user):
            try:
                file.entries()
            except (OSError, ValueError) as exc:
                raise type(exc)(f"cannot read {file.path}: {exc}. Nothing was deleted.") from None

    def erase(self) -> int:
        """Delete both files, their locks and temp files. Returns how many entries were
        deleted.

        A per-user folder goes in one atomic step: it is renamed to a hidden tombstone
        (``.erased-user-...``) first, so a crash halfway leaves the user's files either all
        there or all gone from view; the tombstone is then deleted, or by the next
        ``CuratedMemory`` opened on the same base folder if the process died first."""
        if self.user_id is None:
            return self.memory.erase() + self.user.erase()
        removed = len(self.memory.entries()) + len(self.user.entries())
        if not self.folder.exists():
            return 0
        with file_lock(self.memory.lock_path, self.memory.lock_timeout, self.memory.name), \
                file_lock(self.user.lock_path, self.user.lock_timeout, self.user.name):
            removed = len(self.memory.entries()) + len(self.user.entries())
            tombstone = self.folder.with_name(f"{_TOMBSTONE}{self.folder.name}-{os.getpid()}-"
                                              f"{time.monotonic_ns()}")
            os.rename(self.folder, tombstone)
            fsync_folder(self.folder.parent)
        shutil.rmtree(tombstone, ignore_errors=True)
        fsync_folder(self.folder.parent)
        return removed

    def __repr__(self) -> str:
        return f"CuratedMemory({str(self.folder)!r})"
