"""Self-checks for notebook 03, episodic memory in SQLite. Each check builds its own
in-memory database with the article's table, so it never touches the notebook's file."""

from __future__ import annotations

import sqlite3
from typing import Any

from gya_memory.teaching.exercises.verdict import UNANSWERED, Verdict, unanswered, verdict


ARTICLE_TABLE = """CREATE TABLE facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    subject TEXT NOT NULL,
    fact TEXT NOT NULL,
    session_id TEXT NOT NULL,
    created_at TEXT NOT NULL
)"""
ROWS = [
    ("姓名", "用户叫张三", "session-A", "2026-09-01T09:00:00+08:00"),
    ("偏好", "最近在戒咖啡，想少喝一点", "session-A", "2026-09-01T09:01:00+08:00"),
    ("职业", "用户是一名后端工程师", "session-A", "2026-09-01T09:02:00+08:00"),
    ("偏好", "咖啡因摄入想先减少 50%", "session-B", "2026-09-04T09:03:00+08:00"),
    ("偏好", "晚上不喝浓茶", "session-B", "2026-09-04T09:04:00+08:00"),
    ("name", "user_name is Alice", "session-C", "2026-09-05T09:05:00+08:00"),
    ("note", "a path C:\\tmp and 100 percent", "session-A", "2026-09-05T09:06:00+08:00"),
]
COFFEE_FACT = "最近在戒咖啡，想少喝一点"
DIET_QUESTION_ZH = "我最近饮食上有什么要注意的吗？"


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(ARTICLE_TABLE)
    conn.executemany("INSERT INTO facts(subject, fact, session_id, created_at) VALUES (?,?,?,?)",
                     ROWS)
    return conn


def exercise_03_1(answer: Any) -> Verdict:
    """A SQL query: each session and how many facts it holds, in order of its first fact."""
    if unanswered(answer):
        return verdict("03.1", [UNANSWERED])
    if not isinstance(answer, str):
        return verdict("03.1", ["answer should be the SQL query, as a string"])
    expected = [("session-A", 4), ("session-B", 2), ("session-C", 1)]
    try:
        got = [tuple(r) for r in _db().execute(answer).fetchall()]
    except sqlite3.Error as exc:
        return verdict("03.1", [f"SQLite refused the query: {exc}"])
    problems = []
    if got and len(got[0]) != 2:
        problems.append(f"each row should be (session_id, count), got rows of {len(got[0])} values")
    elif sorted(got) != sorted(expected):
        problems.append(f"on a test table with {len(ROWS)} rows expected {sorted(expected)} "
                        f"in some order, got {got[:5]}: group by session_id and count")
    elif got != expected:
        problems.append(f"right counts, wrong order: got {[s for s, _ in got]}; order the "
                        "sessions by their first fact (MIN(id))")
    return verdict("03.1", problems, "the package's sessions() is this query plus user_id")


def exercise_03_2(answer: Any) -> Verdict:
    """``escape_like(keyword)`` so that ``LIKE ? ESCAPE '\\'`` matches it literally."""
    if unanswered(answer):
        return verdict("03.2", [UNANSWERED])
    if not callable(answer):
        return verdict("03.2", ["answer should be your function escape_like (no brackets)"])
    conn = _db()
    problems = []
    for keyword in ["%", "_", "\\", "咖啡", "50%", "r_n"]:
        try:
            pattern = f"%{answer(keyword)}%"
            got = [f for (f,) in conn.execute(
                "SELECT fact FROM facts WHERE fact LIKE ? ESCAPE '\\' ORDER BY id", (pattern,))]
        except Exception as exc:
            problems.append(f"keyword {keyword!r}: {type(exc).__name__}: {exc}")
            continue
        want = [r[1] for r in ROWS if keyword.lower() in r[1].lower()]
        if got != want:
            problems.append(f"keyword {keyword!r} should find only the facts that really "
                            f"contain it, {want}; found {got}"[:160])
    return verdict("03.2", problems, "% and _ now match only themselves")


def exercise_03_3(answer: Any) -> Verdict:
    """A keyword taken from the diet question that still finds the coffee fact."""
    if unanswered(answer):
        return verdict("03.3", [UNANSWERED])
    if not isinstance(answer, str) or len(answer.strip()) < 2:
        return verdict("03.3", ["answer should be a keyword of at least two characters"])
    keyword = answer.strip()
    problems = []
    if keyword not in DIET_QUESTION_ZH:
        problems.append(f"{keyword!r} is not part of the question {DIET_QUESTION_ZH}")
    if keyword not in COFFEE_FACT:
        problems.append(f"search({keyword!r}) would not find the coffee fact {COFFEE_FACT}")
    return verdict("03.3", problems, f"{keyword!r} is in both: a shared filler word, "
                                     "luck rather than understanding")
