"""Solutions to notebook 07's exercises (see README.md in this folder)."""

from __future__ import annotations


def exercise_07_1():
    delimiter = "\n§\n"  # ENTRY_DELIMITER

    def room(entries, cap):
        used = len(delimiter.join(entries))
        return cap - used - (len(delimiter) if entries else 0)
    return room


def exercise_07_2():
    return "CREATE VIRTUAL TABLE notes USING fts5(content, tokenize='trigram')"


def exercise_07_3():
    from gya_memory.hermes import scan

    def guarded(entries):
        return [f"[BLOCKED: matched {', '.join(f.rule for f in scan(e))}]" if scan(e) else e
                for e in entries]
    return guarded


def exercise_07_4():
    return {
        "Prefers answers in Chinese, code comments in English": "USER.md",
        "This repo's tests run with ./run.sh test": "MEMORY.md",
        "The exact traceback the user pasted on 10 September": "session search",
        "User asked what a Python list is": "skip",
    }
