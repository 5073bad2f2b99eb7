"""Self-checks for notebook 08, failure paths. No model is called; 08.1 crashes three small
SQLite writers (well under a second each) to test the learner's function on real damage."""

from __future__ import annotations

import inspect
import tempfile
import uuid
from pathlib import Path
from typing import Any

from gya_memory.teaching.exercises.verdict import UNANSWERED, Verdict, unanswered, verdict
from gya_memory.teaching.exercises.verdict import call as _call





def exercise_08_1(answer: Any) -> Verdict:
    """``is_intact(path) -> bool``: True only when ``PRAGMA integrity_check`` says ``ok``."""
    if unanswered(answer):
        return verdict("08.1", [UNANSWERED])
    if not callable(answer):
        return verdict("08.1", ["answer should be your function is_intact (the name, no brackets)"])
    from gya_memory.faults.fakes import crash_mid_transaction

    problems: list[str] = []
    cases = [  # (file, how to crash it, what it is, expected, what to fix when wrong)
        ("wal.sqlite3", dict(journal="wal"), "a WAL database after the crash", True,
         "integrity_check says 'ok' here: return True when its only row is ('ok',)"),
        ("off.sqlite3", dict(journal="off"), "the journal-off crash of section 3", False,
         "SQLite raises sqlite3.DatabaseError ('malformed') on this file: catch it and "
         "return False"),
        ("quiet.sqlite3", dict(journal="off", uncommitted=5, cache_pages=2),
         "the quiet crash (5 rows, 2-page cache)", False,
         "queries work on this file, but integrity_check returns a row about a missing "
         "index entry, not 'ok': anything but [('ok',)] means damaged"),
    ]
    with tempfile.TemporaryDirectory(prefix="gya-check-08-") as tmp:
        for file, how, label, expected, fix in cases:
            crash_mid_transaction(Path(tmp) / file, **how)
            result, error = _call(answer, str(Path(tmp) / file))
            if error:
                problems.append(f"{label}: {error}. {fix}")
            elif not isinstance(result, bool):
                problems.append(f"{label}: return True or False, got {result!r}")
            elif result != expected:
                problems.append(f"{label}: expected {expected}, got {result}. {fix}")
    return verdict("08.1", problems, "it tells an intact database from both kinds of damage, "
                   "including the quiet one that ordinary queries don't notice")


def _valid_qdrant_id(value: Any) -> str | None:
    if isinstance(value, bool):
        return f"{value!r} is a bool, not an id"
    if isinstance(value, int):
        if not 0 <= value < 2**64:
            return f"{value} is not an unsigned 64-bit integer (Qdrant refuses it)"
        return None
    if isinstance(value, str):
        if value.isdigit():
            return (f"{value!r} is a string of digits: Qdrant answers HTTP 400 'not a valid "
                    "point ID'. Return an int or a UUID string")
        try:
            uuid.UUID(value)
        except ValueError:
            return f"{value!r} is a string but not a UUID"
        return None
    return f"an id must be an unsigned int or a UUID string, got {type(value).__name__}"


def exercise_08_2(answer: Any) -> Verdict:
    """``stable_id(user_id, text)``: a valid Qdrant point id, the same in every process."""
    if unanswered(answer):
        return verdict("08.2", [UNANSWERED])
    if not callable(answer):
        return verdict("08.2", ["answer should be your function stable_id (the name, no brackets)"])
    problems: list[str] = []
    a, error = _call(answer, "user-zh-001", "最近在戒咖啡，想少喝一点")
    if error:
        return verdict("08.2", [error])
    bad = _valid_qdrant_id(a)
    if bad:
        return verdict("08.2", [bad])
    again, _ = _call(answer, "user-zh-001", "最近在戒咖啡，想少喝一点")
    if again != a:
        problems.append("two calls with the same user and text gave different ids: an upsert "
                        "would then store a duplicate instead of overwriting")
    other_user, _ = _call(answer, "user-en-001", "最近在戒咖啡，想少喝一点")
    if other_user == a:
        problems.append("two users who store the same words get the same id, so one would "
                        "overwrite the other's memory: put the user id into the id")
    other_text, _ = _call(answer, "user-zh-001", "用户叫张三")
    if other_text == a:
        problems.append("two different texts got the same id")
    try:
        source = inspect.getsource(answer)
    except (OSError, TypeError):
        source = ""
    if "hash(" in source.replace("hashlib", "").replace(".hash(", ""):
        problems.append("it calls hash(): Python salts hash() of a str with a random seed per "
                        "process, so a restart gives new ids (section 2). Use uuid.uuid5 or "
                        "hashlib")
    return verdict("08.2", problems, "a valid id that depends only on the user and the text")


REASONS = {
    "a": "the journal undid the transaction",
    "b": "the 5 rows fit in the page cache, so nothing reached the file before the kill",
    "c": "SQLite does not write transactions of fewer than 10 rows",
}


def exercise_08_3(answer: Any) -> Verdict:
    """Journal off, 5 uncommitted rows, the 10-page cache: ``(intact, reason letter)``."""
    if unanswered(answer):
        return verdict("08.3", [UNANSWERED])
    if not (isinstance(answer, tuple) and len(answer) == 2):
        return verdict("08.3", ["answer should be a pair: (r.intact, 'a', 'b' or 'c')"])
    intact, reason = answer
    problems: list[str] = []
    if intact is not True:
        problems.append("intact should be what the report says: run the crash with "
                        "journal=False, uncommitted=5 and the default cache, then read "
                        f"r.intact (you gave {intact!r})")
    letter = str(reason).strip().lower().strip("()")
    if letter not in REASONS:
        problems.append(f"the reason should be 'a', 'b' or 'c', got {reason!r}")
    elif letter == "a":
        problems.append("with journal_mode=off there is no journal to undo anything")
    elif letter == "c":
        problems.append("SQLite has no such rule: with a 2-page cache the same 5 rows did "
                        "reach the file (section 3)")
    return verdict("08.3", problems, "intact, but only because the kill came before any page "
                   "was spilled: luck, not safety")


def exercise_08_4(answer: Any) -> Verdict:
    """``recover()`` while the service is still down: ``(exception name, degraded, count)``."""
    if unanswered(answer):
        return verdict("08.4", [UNANSWERED])
    if not (isinstance(answer, tuple) and len(answer) == 3):
        return verdict("08.4", ["answer should be a triple: (type(exc).__name__, m.degraded, "
                                "m.count())"])
    name, degraded, count = answer
    problems: list[str] = []
    if name != "EmbeddingUnavailable":
        problems.append("recover() must embed with the real model while the service is down: "
                        f"which exception does that raise? (you gave {name!r}; give the class "
                        "name as a string)")
    if degraded is not True:
        problems.append("after a failed recover() the memory is still degraded: nothing was "
                        f"moved (you gave degraded={degraded!r})")
    if count != 2:
        problems.append(f"both memories are still readable from the fallback: count() is 2 "
                        f"(you gave {count!r})")
    return verdict("08.4", problems, "recover() fails before writing anything; call it again "
                   "once the service is back")
