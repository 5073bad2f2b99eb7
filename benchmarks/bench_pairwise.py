"""Pairwise ranking of the gate's candidates by the chat model (issue 16, session 21; not kept).

    ./run.sh bench pairwise --probe     # tuning split: ~16 min on 2 cores, model loaded
    ./run.sh bench pairwise             # rank again from the stored probe: no model

Pairwise ranking prompting (PRP, Qin et al. 2023, arXiv 2306.17563): small models rank
better by comparing two documents than by grading one (the judge) or ordering a list (the
"which fact matters?" prompt). For every with-memory question of the tuning split, the six
candidates the agent's gate judges (cosine top 30 re-ranked by e5's latent terms; their ids
and order come from ``results/acceptance_tune_terms.json``) are compared in every pair, in
both orders: "which fact should a good answer take into account, A or B?", read as
``P(A) / (P(A) + P(B))`` from the first token (one prefill each, 30 per question). A
candidate's score is its summed wins, each pair averaged over the two orders (which cancels
the model's preference for the first letter), plus ``w`` times its place in the terms order.
The report: how often the relevant memory comes first, in the first 2 and the first 3, per
language, against the terms order alone. The probe stores ids and rounded probabilities only
(``results/pairwise_tune.json``).
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _shared import print_footer, probed_rows

RESULTS = Path(__file__).parent / "results"
PROBE = RESULTS / "pairwise_tune.json"
CANDIDATES = RESULTS / "acceptance_tune_terms.json"
WEIGHTS = (0.0, 0.5, 1.0, 2.0)

SYSTEM = (
    "A user asks a question. You see two facts remembered about the user, A and B. Which fact "
    "should a good answer to this question take into account? Prefer the fact about the very "
    "person, thing and detail the question is about, or the fact about the user that changes "
    "the right advice. Reply with one letter: A or B.")
SYSTEM_ZH = (
    "用户问了一个问题。你看到两条记住的、关于用户的事实：A 和 B。好的回答应该考虑哪一条？"
    "优先选说的正是问题里那个人、那样东西、那个细节的事实，或者会改变正确建议的用户本人情况。"
    "只回答一个字母：A 或 B。")


def pairwise_messages(question: str, a: str, b: str, zh: bool) -> list[dict[str, str]]:
    """The pairwise prompt in the question's language; the question first, so the pairs of
    one question share their prefix in the model's prompt cache."""
    user = (f"问题：{question}\nA：{a}\nB：{b}\n选哪条？" if zh
            else f"Question: {question}\nA: {a}\nB: {b}\nWhich one?")
    return [{"role": "system", "content": SYSTEM_ZH if zh else SYSTEM},
            {"role": "user", "content": user}]


def p_first(llm: Any, question: str, a: str, b: str, zh: bool) -> float:
    """``P(A) / (P(A) + P(B))`` from the first token (0.5 if the model offers neither)."""
    probs = llm.next_token_probs(pairwise_messages(question, a, b, zh), top=10)
    pa = sum(p for t, p in probs.items() if t.strip().upper() == "A")
    pb = sum(p for t, p in probs.items() if t.strip().upper() == "B")
    return pa / (pa + pb) if pa + pb > 0 else 0.5


def probe(out: Path) -> None:
    from gya_memory.answer.llm import get_llm
    from gya_memory.lab.scenarios import load_acceptance

    by_id = {s.id: s for s in load_acceptance("tune")}
    answers = json.loads(CANDIDATES.read_text("utf-8"))["answers"]
    llm, rows = get_llm(), []
    for answer in (a for a in answers if a["condition"] == "memory"):
        s = by_id[answer["scenario"]]
        text = {m.id: m.text for m in s.memories}
        ids = [g[0] for g in answer["gate"]]
        pairs = {f"{a}|{b}": [round(p_first(llm, s.question, text[a], text[b], s.lang == "zh"), 4),
                              round(p_first(llm, s.question, text[b], text[a], s.lang == "zh"), 4)]
                 for a, b in itertools.combinations(ids, 2)}
        rows.append({"scenario": s.id, "lang": s.lang, "ids": ids,
                     "relevant": list(s.relevant), "pairs": pairs})
        print(s.id, flush=True)
    out.write_text(json.dumps(rows, indent=0), "utf-8")


def order(row: dict[str, Any], w: float) -> list[str]:
    """The candidates by summed pairwise wins (both orders averaged) plus ``w`` times their
    place in the terms order (1 for the first, 1/6 for the sixth); ties keep the terms order."""
    ids, score = row["ids"], defaultdict(float)
    for key, (ab, ba) in row["pairs"].items():
        a, b = key.split("|")
        win = (ab + 1 - ba) / 2
        score[a] += win
        score[b] += 1 - win
    for i, x in enumerate(ids):
        score[x] += w * (len(ids) - i) / len(ids)
    return sorted(ids, key=lambda x: (-score[x], ids.index(x)))


def firsts(rows: Sequence[dict[str, Any]], ranked: Any) -> tuple[int, int, int]:
    """How often a relevant memory is first, in the first 2, in the first 3."""
    return tuple(sum(bool(set(ranked(r)[:n]) & set(r["relevant"])) for r in rows)
                 for n in (1, 2, 3))  # type: ignore[return-value]


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    rows = probed_rows(argv, __doc__, PROBE, probe, "compare the pairs with the model first")
    print("tuning split, with memory: the relevant memory first / in the first 2 / first 3")
    for lang in ("zh", "en"):
        of = [r for r in rows if r["lang"] == lang]
        among = sum(bool(set(r["ids"]) & set(r["relevant"])) for r in of)
        print(f"{lang}: {len(of)} questions, the relevant memory among the 6 candidates in {among}")
        print(f"  {'latent terms (the agent order)':34} {firsts(of, lambda r: r['ids'])}")
        for w in WEIGHTS:
            print(f"  {'pairwise wins + ' + str(w) + ' x terms place':34} "
                  f"{firsts(of, lambda r, w=w: order(r, w))}")
        first = [p for r in of for pair in r["pairs"].values() for p in pair]
        print(f"  mean P(A): {sum(first) / len(first):.3f} (0.5 = no preference for the first)")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
