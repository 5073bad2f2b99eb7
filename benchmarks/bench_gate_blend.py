"""A learned blend of the gate's signals per candidate (issue 16, session 21; not kept).

    ./run.sh bench gate_blend --probe     # tuning split: ~22 min on 2 cores, model loaded
    ./run.sh bench gate_blend             # replay from the stored probe: no model, seconds

Every model signal tried alone ranks at or below e5's latent terms; an earlier learned blend
(judge and cosine) came before the terms. Here, for the with-memory and no-hit question of
every tuning scenario, the six candidates the agent's gate takes (the cosine search's first 30
re-ranked by latent terms) are probed for everything the gate could use: the cosine, the terms
overlap (and its share of the first candidate's), the place in the terms order, the floor and
``about`` checks, the reader's 1 - P(unknown) and the judge's P(yes), both for every
candidate whatever the question's kind (``results/gate_blend_tune.json``: ids and numbers).

The replay compares the shipped gate (floor and ``about``, then the reader at 0.98 for fact
questions, the judge at 0.2 for advice and 0.9 for general ones, a pool of 3; the slot rules
and ``newest_wins`` are left out, so it is close to the agent, not equal) with a logistic
regression over those features, trained and thresholded on three folds of scenarios and
scored on the fourth (each threshold chosen to maximise relevant placements minus a penalty
per no-hit question that gets anything). Reported per language: questions whose relevant
memory is placed, no-hit questions that get a memory placed, and with-memory questions that
get another memory placed too.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from _shared import print_footer, probed_rows

PROBE = Path(__file__).parent / "results" / "gate_blend_tune.json"
FOLDS = 4
PENALTIES = (1, 2, 3)
POOL = 3


def probe(out: Path) -> None:
    from gya_memory.answer.about import fits
    from gya_memory.answer.gate import about_of_hit, floor_for
    from gya_memory.answer.judge import judge_relevance, reader_relevance
    from gya_memory.answer.llm import get_llm
    from gya_memory.answer.questions import question_kind
    from gya_memory.answer.terms import TERMS_DEPTH, overlap
    from gya_memory.lab.acceptance import question_for
    from gya_memory.lab.scenarios import load_acceptance, store_scenarios
    from gya_memory.semantic.embeddings import get_embedder

    scenarios = load_acceptance("tune")
    embedder, llm = get_embedder(), get_llm()
    stores = store_scenarios(scenarios, embedder)
    rows = []
    for s in scenarios:
        memory, ids = stores[s.user], {m.text: m.id for m in s.memories}
        for condition in ("memory", "no_hit"):
            q, _ = question_for(s, condition)
            kind = question_kind(q, known=[m.text for m in s.memories])
            hits = list(memory.candidates(q, top_k=TERMS_DEPTH))
            tq, *td = embedder.terms([q, *(h.text for h in hits)])
            terms = [overlap(tq, d) for d in td]
            order = sorted(range(len(hits)), key=lambda i: -terms[i])[:6]
            floor = floor_for(embedder, q)
            # one prompt at a time over all candidates: the model's prompt cache keeps the prefix
            reader = [reader_relevance(llm, q, hits[i].text) for i in order]
            judge = [judge_relevance(llm, q, hits[i].text) for i in order]
            rows.append({"scenario": s.id, "lang": s.lang, "condition": condition, "kind": kind,
                         "relevant": list(s.relevant) if condition == "memory" else [],
                         "cands": [{"id": ids.get(hits[i].text, "?"), "rank": rank,
                                    "cos": round(float(hits[i].score), 4),
                                    "terms": round(terms[i], 4),
                                    "top_terms": round(terms[order[0]], 4),
                                    "floor_ok": bool(hits[i].score >= floor),
                                    "about_ok": bool(fits(about_of_hit(hits[i]), q, kind)),
                                    "reader": round(reader[rank], 4),
                                    "judge": round(judge[rank], 4)}
                                   for rank, i in enumerate(order)]})
            print(s.id, condition, flush=True)
    out.write_text(json.dumps(rows, indent=0), "utf-8")


Placer = Callable[[dict[str, Any]], list[str]]


def shipped(row: dict[str, Any]) -> list[str]:
    """The shipped gate, replayed: floor and ``about``, then the reader or the judge by kind,
    at the gate's own bars."""
    from gya_memory.answer.gate import FACT_MIN, GENERAL_MIN, JUDGE_MIN

    bar = {"fact": ("reader", FACT_MIN), "general": ("judge", GENERAL_MIN)}.get(
        row["kind"], ("judge", JUDGE_MIN))
    return [c["id"] for c in row["cands"]
            if c["floor_ok"] and c["about_ok"] and c[bar[0]] >= bar[1]][:POOL]


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def features(row: dict[str, Any], c: dict[str, Any]) -> list[float]:
    """Bias, the terms overlap as a share of the first candidate's, 1 / (1 + place), the
    cosine (centred), the reader's and the judge's log-odds split by the question's kind, and
    the kind."""
    fact = float(row["kind"] == "fact")
    share = c["terms"] / c["top_terms"] if c["top_terms"] > 0 else 0.0
    reader, judge = _logit(c["reader"]), _logit(c["judge"])
    return [1.0, share, 1 / (1 + c["rank"]), c["cos"] * 10 - 8, reader * fact,
            judge * (1 - fact), reader * (1 - fact), judge * fact, fact]


def fit(x: Sequence[Sequence[float]], y: Sequence[bool], l2: float = 1.0,
        steps: int = 3000, rate: float = 0.1) -> np.ndarray:
    """A logistic regression by gradient descent, L2-regularised (the bias, the first
    feature, too)."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    w = np.zeros(xs.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xs @ w))
        w -= rate * (xs.T @ (p - ys) + l2 * w) / len(ys)
    return w


def learned(w: np.ndarray, bar: float) -> Placer:
    def place(row: dict[str, Any]) -> list[str]:
        return [c["id"] for c in row["cands"] if c["floor_ok"] and c["about_ok"]
                and 1 / (1 + math.exp(-float(np.dot(w, features(row, c))))) >= bar][:POOL]
    return place


def score(rows: Sequence[dict[str, Any]], place: Placer) -> tuple[int, int, int]:
    """(relevant placed, no-hit questions with a placement, with-memory questions with another
    memory placed)."""
    memory = [r for r in rows if r["condition"] == "memory"]
    return (sum(bool(set(place(r)) & set(r["relevant"])) for r in memory),
            sum(bool(place(r)) for r in rows if r["condition"] == "no_hit"),
            sum(bool(set(place(r)) - set(r["relevant"])) for r in memory))


def out_of_fold(rows: Sequence[dict[str, Any]], penalty: int) -> dict[tuple[str, str], list[str]]:
    """Each fold's placements by a blend fitted and thresholded on the other folds."""
    scenarios = sorted({r["scenario"] for r in rows})
    fold = {s: i % FOLDS for i, s in enumerate(scenarios)}
    placed: dict[tuple[str, str], list[str]] = {}
    for f in range(FOLDS):
        train = [r for r in rows if fold[r["scenario"]] != f]
        w = fit([features(r, c) for r in train for c in r["cands"]],
                [c["id"] in r["relevant"] for r in train for c in r["cands"]])

        def gain(bar: float) -> float:
            relevant, false_hits, _ = score(train, learned(w, bar))
            return relevant - penalty * false_hits

        bar = max(np.arange(0.05, 0.96, 0.05), key=lambda b: (gain(b), -b))
        for r in rows:
            if fold[r["scenario"]] == f:
                placed[r["scenario"], r["condition"]] = learned(w, float(bar))(r)
    return placed


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    rows = probed_rows(argv, __doc__, PROBE, probe, "probe every candidate with the model first")
    print("tuning split: relevant placed (of 24) / no-hit questions with a placement (of 24) / "
          "with-memory questions with another memory placed")
    blends = {p: out_of_fold(rows, p) for p in PENALTIES}
    for lang in ("zh", "en"):
        of = [r for r in rows if r["lang"] == lang]
        print(f"{lang}: shipped gate (replayed)                {score(of, shipped)}")
        for p, placed in blends.items():
            print(f"{lang}: learned blend, penalty {p} (out of fold) "
                  f"{score(of, lambda r, m=placed: m[r['scenario'], r['condition']])}")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
