"""Solutions to the exercises of notebook 05 (context assembly).

Each function returns what the notebook's self-check takes, e.g.
``check.exercise_05_1(exercise_05_1())``.
"""

from __future__ import annotations

from typing import Any


def exercise_05_1():
    """build_messages with a fence, best first, one memory per line, and a no-hit note."""

    def build_messages(question: str, memories: list[tuple[float, str]]) -> list[dict[str, str]]:
        ranked = sorted(memories, key=lambda m: -m[0])
        lines = [f"[{n}] {' '.join(text.split())} ({score:.3f})"
                 for n, (score, text) in enumerate(ranked, start=1)]
        if not lines:
            lines = ["记忆库里没有能回答这个问题的信息。No stored memory answers this question."]
        block = "\n".join(["<memories>", *lines, "</memories>"])
        return [
            {"role": "system", "content": "你是一个贴心的助手。You are a helpful assistant."},
            {"role": "user", "content": f"{block}\n\n{question}"},
        ]

    return build_messages


def exercise_05_2():
    """Threshold, then top-k, then the character budget (weakest out first)."""

    def select_memories(hits: list[tuple[float, str]], min_score: float, top_k: int,
                        budget_chars: int) -> list[str]:
        kept = [text for score, text in sorted(hits, key=lambda h: -h[0]) if score >= min_score]
        kept = kept[:top_k]
        while kept and len("\n".join(f"- {t}" for t in kept)) > budget_chars:
            kept.pop()  # the weakest is last
        return kept

    return select_memories


def exercise_05_3():
    """The calibrated threshold of notebook 04 does it; top_k alone cannot say 'none'."""
    from gya_memory import Policy

    return Policy(top_k=3, min_score=0.86)


def exercise_05_4():
    """Per subject, only the newest memory; memories without a subject always stay."""

    def newest_wins(memories: list[dict[str, Any]]) -> list[str]:
        newest: dict[str, dict[str, Any]] = {}
        for m in memories:
            subject = m.get("subject")
            if subject is None:
                continue
            if subject not in newest or m["created_at"] > newest[subject]["created_at"]:
                newest[subject] = m
        return [m["text"] for m in memories
                if m.get("subject") is None or newest[m["subject"]] is m]

    return newest_wins
