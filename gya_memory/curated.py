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

import os
import re
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .checks import check_text
from .clock import Clock, system_clock
from .config import get_settings

ENTRY_DELIMITER = "\n§\n"
MEMORY_FILE = "MEMORY.md"
USER_FILE = "USER.md"
MEMORY_CAP = 2200
USER_CAP = 1375
MEMORY_TITLE = "MEMORY (your notes)"
USER_TITLE = "USER PROFILE"
LOCK_TIMEOUT_S = 10.0
DEFAULT_FOLDER_NAME = "memories"
_PREVIEW_CHARS = 60

GUIDANCE = """\
Save (值得存): conclusions that stay true across sessions.
  - USER.md: preferences, communication style, expectations — e.g. "User prefers TypeScript over JS".
  - MEMORY.md: environment facts, project conventions, lessons learned.
Skip (跳过): trivia ("user asked about Python"), facts that are easy to look up again, raw data dumps.
Full (满了): consolidate — merge related entries with replace(), remove stale ones — then add.
"""
"""What to store and what to skip, in the spirit of Hermes's own tool description."""

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


@dataclass(frozen=True)
class Finding:
    """One reason to refuse a write: the rule, the text that tripped it, why (en + zh)."""

    rule: str
    excerpt: str
    reason_en: str
    reason_zh: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.reason_en} / {self.reason_zh}: {self.excerpt!r}"


class MemoryFull(ValueError):
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


class InjectionRefused(ValueError):
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


class MemoryLocked(TimeoutError):
    """Another process held the file's lock for longer than the timeout."""


# -- injection scanning -----------------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    """A pattern that refuses a write: ``pattern`` is a regex searched case-insensitively."""

    name: str
    pattern: str
    reason_en: str
    reason_zh: str


_FILLER = r"(?:[\w'’-]+\s+)"  # one word and the space after it (bounded repeats below)

RULES: tuple[Rule, ...] = (
    # "Ignore all previous instructions", "disregard the above rules", "forget everything above".
    Rule(
        "ignore_previous_en",
        rf"\b(?:ignore|disregard|forget|override)\s+{_FILLER}{{0,3}}?"
        rf"(?:previous|prior|above|earlier|preceding|all|your)\s+{_FILLER}{{0,2}}?"
        r"(?:instructions?|rules|guidelines|directions|prompts?|commands)\b"
        r"|\b(?:ignore|disregard|forget)\s+(?:everything|anything)\s+(?:above|before|earlier)",
        "tries to make the model ignore its earlier instructions",
        "试图让模型忽略之前的指令",
    ),
    # "You are now DAN": a new identity for the model.
    Rule(
        "you_are_now_en",
        r"\byou\s+are\s+now\b",
        "tries to give the model a new identity or role",
        "试图给模型换一个身份或角色",
    ),
    # "New system prompt: ...", "system prompt override". A note that merely mentions a
    # project's system prompt is allowed: this project is about prompts.
    Rule(
        "system_prompt_en",
        r"\b(?:new|updated|override|overriding|replace|replaced|replacement|real|actual|true)"
        r"\s+(?:the\s+|your\s+)?system\s+prompt\b"
        r"|\bsystem\s+prompt\s*(?:override|update|[:：=])",
        "tries to replace or rewrite the system prompt",
        "试图替换或改写系统提示",
    ),
    # "Reveal your system prompt", "print the hidden instructions".
    Rule(
        "reveal_prompt_en",
        rf"\b(?:reveal|print|show|output|repeat|leak|dump|disclose)\s+{_FILLER}{{0,3}}?"
        r"(?:system|initial|hidden|original|secret)\s+(?:prompt|instructions)\b"
        r"|\b(?:reveal|repeat|leak|dump|disclose)\s+your\s+(?:prompt|instructions)\b",
        "asks the model to reveal its hidden prompt",
        "要求模型泄露隐藏的提示词",
    ),
    # "Do not tell the user", "don't tell the user", "never mention this to the user".
    Rule(
        "hide_from_user_en",
        rf"\b(?:do\s+not|don['’]t|never)\s+{_FILLER}{{0,3}}?"
        rf"(?:tell|inform|mention\s+{_FILLER}{{0,2}}?to)\s+(?:the\s+)?users?\b",
        "tells the model to keep something from the user",
        "要求模型向用户隐瞒信息",
    ),
    # Chat-template or role markers that make a note look like a new message: <|im_start|>,
    # <system>, [INST]. (A plain "System: Ubuntu 24.04" is an environment fact and allowed.)
    Rule(
        "role_marker",
        r"<\|[a-z_]+\|>|<\s*/?\s*system\s*>|\[/?(?:system|inst)\]",
        "imitates a chat-template or role marker, as if a new message began",
        "冒充对话模板或角色标记，像是开始了一条新消息",
    ),
    # curl/wget/nc/scp that carry a secret: $API_KEY, ${TOKEN}, ?token=..., &password=...
    Rule(
        "exfiltration",
        r"\b(?:curl|wget|nc|scp)\b[^\n]{0,300}?"
        r"(?:\$\{?[a-z_]*(?:key|token|secret|password|passwd|credentials?)\b\}?"
        r"|[?&](?:api[_-]?key|token|secret|password)=)",
        "a command that sends secrets (keys, tokens, passwords) somewhere",
        "一条把密钥、令牌或密码发往别处的命令",
    ),
    # 忽略之前的所有指令 / 忽略以上 / 无视之前 / 忘记之前的规则 / 忽略所有指令
    Rule(
        "ignore_previous_zh",
        r"(?:忽略|无视|不要理会|不用理会|别管)掉?你?(?:之前|以前|先前|此前|上面|以上|上述|前面|前述)"
        r"(?:[^。！\n]{0,8}?(?:指令|指示|规则|设定|提示|要求))?"
        r"|(?:忽略|无视|忘记|忘掉|抛开)掉?你?的?(?:所有|全部|一切)的?(?:指令|指示|规则|设定|提示|要求)"
        r"|(?:忘记|忘掉|抛开)掉?你?(?:之前|以前|先前|此前|上面|以上|上述|前面)[^。！\n]{0,8}?"
        r"(?:指令|指示|规则|设定|提示|要求)",
        "tries to make the model ignore its earlier instructions",
        "试图让模型忽略之前的指令",
    ),
    # 你现在是… / 从现在开始你是… / 你的新身份是…
    Rule(
        "you_are_now_zh",
        r"你现在是|从现在(?:开始|起)[，,]?\s*你(?:是|就是|将扮演|要扮演)|你的新身份是",
        "tries to give the model a new identity or role",
        "试图给模型换一个身份或角色",
    ),
    # 新的系统提示：… / 覆盖系统提示 / 系统提示词： (a mere mention is allowed, as in English)
    Rule(
        "system_prompt_zh",
        r"(?:新的?|更新后?的?|覆盖|替换|改写|真正的)\s*系统提示词?|系统提示词?\s*[:：=]",
        "tries to replace or rewrite the system prompt",
        "试图替换或改写系统提示",
    ),
    # 泄露/输出/复述 系统提示 / 提示词
    Rule(
        "reveal_prompt_zh",
        r"(?:泄露|透露|输出|打印|显示|复述|告诉我)[^。\n]{0,8}?(?:系统提示|初始提示|隐藏提示|提示词)",
        "asks the model to reveal its hidden prompt",
        "要求模型泄露隐藏的提示词",
    ),
    # 不要告诉用户 / 别把这件事告诉用户 / 瞒着用户
    Rule(
        "hide_from_user_zh",
        r"(?:不要|别|不准|不许|切勿|千万别|不能)(?:把[^。\n]{0,20}?)?(?:告诉|告知|透露给|通知)(?:用户|使用者)"
        r"|(?:不要|别|不能)让(?:用户|使用者)知道|瞒着(?:用户|使用者)",
        "tells the model to keep something from the user",
        "要求模型向用户隐瞒信息",
    ),
)
"""The text patterns :func:`scan` refuses. They are searched in the text after NFKC folding
(full-width ｉｇｎｏｒｅ becomes ignore) and with invisible characters taken out (so a
zero-width space cannot split a word past them)."""

# Characters a reader cannot see. Zero-width space/non-joiner/joiner, word joiner, invisible
# operators, byte-order mark, soft hyphen, Mongolian vowel separator, and the Unicode "tag"
# block (which can smuggle ASCII text past a human). Two legitimate uses are let through:
# a zero-width joiner inside an emoji sequence (👨‍👩‍👧) and the tag characters of a
# subdivision flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿).
INVISIBLE_CHARS = frozenset(
    "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e"
) | frozenset(chr(c) for c in range(0xE0000, 0xE0080))
# Bidirectional controls: embeddings/overrides U+202A–U+202E, isolates U+2066–U+2069, and the
# marks U+200E, U+200F, U+061C. They can make text display in another order than it is read
# ("Trojan Source").
BIDI_CHARS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_FLAG_TAG_SEQUENCE = "\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f"  # 🏴 + tags + cancel tag
_ZWJ = "\u200d"


def _is_emoji_part(ch: str) -> bool:
    # Symbols (So), skin-tone modifiers (Sk), and the emoji presentation selector U+FE0F.
    return ch == "\ufe0f" or unicodedata.category(ch) in ("So", "Sk")


def _without_allowed_emoji_parts(text: str) -> str:
    """``text`` without the zero-width joiners and tags that belong to emoji sequences."""
    text = re.sub(_FLAG_TAG_SEQUENCE, "\U0001f3f4", text)
    out = []
    for i, ch in enumerate(text):
        if (
            ch == _ZWJ
            and 0 < i < len(text) - 1
            and _is_emoji_part(text[i - 1])
            and _is_emoji_part(text[i + 1])
        ):
            continue
        out.append(ch)
    return "".join(out)


def _char_finding(text: str, chars: frozenset[str], rule: str, en: str, zh: str) -> Finding | None:
    hits = [i for i, ch in enumerate(text) if ch in chars]
    if not hits:
        return None
    codes = sorted({text[i] for i in hits})
    named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'UNNAMED')}" for c in codes)
    start = max(0, hits[0] - 15)
    window = text[start:hits[0] + 16]
    excerpt = "".join(f"<U+{ord(c):04X}>" if c in chars else c for c in window)
    return Finding(rule, excerpt, f"{en} ({named})", f"{zh}（{named}）")


def scan(text: str) -> list[Finding]:
    """Why ``text`` should not go into a system prompt: one :class:`Finding` per rule it trips.

    An empty list means the text is clean. Nothing is written; writes call this themselves.
    """
    if not isinstance(text, str):
        raise ValueError(f"scan() needs a string, got {type(text).__name__}: {text!r}")
    findings: list[Finding] = []
    masked = _without_allowed_emoji_parts(text)
    for found in (
        _char_finding(
            masked, INVISIBLE_CHARS, "invisible_char",
            "contains an invisible character that can hide text from a human reader",
            "含有不可见字符，可以对人类读者隐藏文字",
        ),
        _char_finding(
            masked, BIDI_CHARS, "bidi_control",
            "contains a bidirectional control that can make text display in another order "
            "than the model reads it",
            "含有双向文本控制字符，可让显示顺序与模型读到的顺序不同",
        ),
    ):
        if found is not None:
            findings.append(found)
    visible = "".join(ch for ch in masked if ch not in INVISIBLE_CHARS and ch not in BIDI_CHARS)
    visible = unicodedata.normalize("NFKC", visible)
    for rule in RULES:
        match = re.search(rule.pattern, visible, re.IGNORECASE)
        if match:
            findings.append(Finding(rule.name, _preview(match.group(0).strip()), rule.reason_en, rule.reason_zh))
    return findings


# -- helpers ------------------------------------------------------------------------------------
def _preview(text: str, width: int = _PREVIEW_CHARS) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= width else one_line[: width - 1] + "…"


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _check_entry(name: str, text: object, what: str = "text") -> str:
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


def _render_block(title: str, text: str, usage: str) -> str:
    return f"## {title} [{usage}]\n{text if text else '(empty)'}"


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX). Windows cannot open a folder; it is skipped."""
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` (UTF-8): temp file in the same folder, fsync, rename, fsync folder.

    If anything fails, the temp file is removed and the old file is left as it was.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_folder(path.parent)


@contextmanager
def _file_lock(lock_path: Path, timeout: float, name: str) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (flock on POSIX, msvcrt on Windows).

    The lock lives in a sidecar file because the memory file itself is replaced on every
    write. It is released when the process dies, so a crashed writer cannot leave it stuck.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    with open(lock_path, "a+b") as f:
        if os.name == "nt":
            import msvcrt

            def try_lock() -> bool:
                f.seek(0)
                try:
                    msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
                except OSError:
                    return False
                return True

            def unlock() -> None:
                f.seek(0)
                msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        else:
            import fcntl

            def try_lock() -> bool:
                try:
                    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return False
                return True

            def unlock() -> None:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

        delay = 0.001
        while not try_lock():
            if time.monotonic() >= deadline:
                raise MemoryLocked(
                    f"could not lock {name} within {timeout:g} s: another process (another "
                    f"notebook kernel?) is writing it and holds {lock_path.name}. Nothing was "
                    "written; try again when it is done."
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            unlock()


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
    ) -> None:
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ValueError(f"cap must be a positive number of characters, got {cap!r}")
        if isinstance(lock_timeout, bool) or not isinstance(lock_timeout, (int, float)) or lock_timeout < 0:
            raise ValueError(f"lock_timeout must be a number of seconds >= 0, got {lock_timeout!r}")
        self.path = Path(path)
        if not self.path.name:
            raise ValueError(f"path must name a file, got {path!r}")
        self.cap = cap
        self.title = check_text("title", title, 200)
        self.lock_timeout = float(lock_timeout)

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
        return _render_block(self.title, text, str(Usage.of(len(text), self.cap)))

    # -- writing --------------------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[list[str]]:
        with _file_lock(self.lock_path, self.lock_timeout, self.name):
            yield self._read()  # fresh, inside the lock: another kernel may have written

    def _check_room(self, action: str, before: list[str], after: list[str]) -> None:
        chars_before = len(ENTRY_DELIMITER.join(before))
        chars_after = len(ENTRY_DELIMITER.join(after))
        # Over the cap is refused unless the change shrinks a (hand-edited) oversize file.
        if chars_after > self.cap and chars_after >= chars_before:
            raise MemoryFull(self.name, action, chars_after, self.cap, Usage.of(chars_before, self.cap))

    def _save(self, entries: list[str]) -> Usage:
        text = ENTRY_DELIMITER.join(entries)
        _atomic_write(self.path, text)
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
        entry = _check_entry(self.name, text)
        with self._locked() as entries:
            if entry in entries:
                return Change("noop", entry, Usage.of(len(ENTRY_DELIMITER.join(entries)), self.cap))
            after = [*entries, entry]
            self._check_room("add", entries, after)
            return Change("added", entry, self._save(after))

    def replace(self, old_substring: str, new_text: str) -> Change:
        """Replace the one entry that contains ``old_substring`` by ``new_text``."""
        substring = _check_substring(old_substring)
        entry = _check_entry(self.name, new_text, "new_text")
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


# -- the two files and the session snapshot -------------------------------------------------------
@dataclass(frozen=True)
class Snapshot:
    """Both files as they were when the session started; it never changes afterwards."""

    memory_text: str
    user_text: str
    memory_usage: str
    user_usage: str
    taken_at: str
    memory_title: str = MEMORY_TITLE
    user_title: str = USER_TITLE

    def memory_block(self) -> str:
        return _render_block(self.memory_title, self.memory_text, self.memory_usage)

    def user_block(self) -> str:
        return _render_block(self.user_title, self.user_text, self.user_usage)

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
    return get_settings().data_dir / DEFAULT_FOLDER_NAME


class CuratedMemory:
    """``MEMORY.md`` (the agent's notes) and ``USER.md`` (the user profile) in one folder.

    Nothing is read or written until you ask: the folder is created by the first write.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str] | None = None,
        *,
        clock: Clock = system_clock,
        memory_cap: int = MEMORY_CAP,
        user_cap: int = USER_CAP,
        lock_timeout: float = LOCK_TIMEOUT_S,
    ) -> None:
        self.folder = Path(folder) if folder is not None else default_folder()
        self.clock = clock
        self.memory = MemoryFile(self.folder / MEMORY_FILE, memory_cap, MEMORY_TITLE, lock_timeout=lock_timeout)
        self.user = MemoryFile(self.folder / USER_FILE, user_cap, USER_TITLE, lock_timeout=lock_timeout)

    def start_session(self) -> Snapshot:
        """Read both files once and freeze them for this session's system prompt."""
        now = self.clock()
        if now.tzinfo is None or now.utcoffset() is None:
            raise ValueError("the clock returned a naive datetime; give it a time zone")
        memory_text, user_text = self.memory.text(), self.user.text()
        return Snapshot(
            memory_text=memory_text,
            user_text=user_text,
            memory_usage=str(Usage.of(len(memory_text), self.memory.cap)),
            user_usage=str(Usage.of(len(user_text), self.user.cap)),
            taken_at=now.isoformat(),
            memory_title=self.memory.title,
            user_title=self.user.title,
        )

    def __repr__(self) -> str:
        return f"CuratedMemory({str(self.folder)!r})"
