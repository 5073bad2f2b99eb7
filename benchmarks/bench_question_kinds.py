"""The question-kind rule on questions it was not written for (issue 16, session 22).

    ./run.sh bench question_kinds        # no model, a second

``gya_memory.answer.questions.question_kind`` decides what an honest answer looks like when
no memory passes (fact: "I don't know"; advice: help that assumes nothing; general: just
answer), and which signal the gate reads. Its largest known error: a personal fact asked as a
task ("Which city should I put on the envelope for my brother's card?") read as advice, so an
empty store answers with a guess. ``gya_memory/data/question_kinds.json`` holds 80 questions
written by hand for tuning (40 per language, half of them such facts), apart from the
acceptance scenarios. The report: accuracy, facts read as facts, and other kinds read as
facts, on that set plus the acceptance tuning split, and on the acceptance test split
(questions read alone, as with an empty store).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

SET = Path(__file__).resolve().parents[1] / "gya_memory" / "data" / "question_kinds.json"
FIELDS = (("question", "question_kind"), ("no_hit_question", "no_hit_kind"))


def hand_set(path: Path = SET) -> list[tuple[str, str, str]]:
    """(language, question, kind) of the hand-written tuning set."""
    return [(r["lang"], r["question"], r["kind"])
            for r in json.loads(path.read_text("utf-8"))["questions"]]


def acceptance_rows(split: str) -> list[tuple[str, str, str]]:
    from gya_memory.lab.scenarios import load_acceptance

    scenarios = load_acceptance(split)
    rows = [(s.lang, getattr(s, q), getattr(s, k)) for s in scenarios for q, k in FIELDS]
    return rows + [(s.lang, s.general_question, "general") for s in scenarios]


def scores(rows: Sequence[tuple[str, str, str]],
           kind_of: Callable[[str], str]) -> dict[str, tuple[int, int, int, int, int, int]]:
    """Per language: (right, all, facts read as fact, facts, others read as fact, others)."""
    out = {}
    for lang in ("zh", "en"):
        rs = [(q, k, kind_of(q)) for lg, q, k in rows if lg == lang]
        facts = [p for _, k, p in rs if k == "fact"]
        others = [p for _, k, p in rs if k != "fact"]
        out[lang] = (sum(k == p for _, k, p in rs), len(rs), facts.count("fact"), len(facts),
                     others.count("fact"), len(others))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from gya_memory.answer.questions import question_kind

    sets = {"tune (hand set + acceptance tune)": hand_set() + acceptance_rows("tune"),
            "test (acceptance test)": acceptance_rows("test")}
    print(f"{'set':36} {'lang':4} {'right':>9} {'facts as fact':>14} {'others as fact':>15}")
    for name, rows in sets.items():
        for lang, (ok, n, ff, nf, of, no) in scores(rows, question_kind).items():
            print(f"{name:36} {lang:4} {ok:>4}/{n:<4} {ff:>8}/{nf:<5} {of:>9}/{no:<5}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
