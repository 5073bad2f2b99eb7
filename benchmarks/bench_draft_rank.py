"""Rank an advice question's memories with a draft answer too (issue 16, session 15).

    ./run.sh bench draft_rank --probe        # tuning split: ~5 min on 2 cores, model loaded
    ./run.sh bench draft_rank                # rank again from the stored probe: no model

HyDE on the answer side. For every with-memory question of the tuning split, the chat model
first answers with no memory (exactly the agent's no-hit advice prompt), and each of the
user's memories is scored by its cosine to the question, to the draft (read as a query and
as a passage) and by blends of them. The probe stores ids, rounded cosines and the drafts
(``results/draft_rank_tune.json``); the report gives, per language and the question's true
kind, how often the relevant memory ranks first, in the first 3 and in the first 6.

``LabAgent(..., draft={"en"})`` (``gya_memory.lab.agent_levers``) is the agent with the ``mean(q, draft as passage)`` ranking
(``python -m gya_memory.lab.acceptance --draft en`` measures it end to end); it is off by
default because end to end it did not place or use the relevant memory more often (README,
"The acceptance check").
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from _shared import print_footer, probed_rows

RESULTS = Path(__file__).parent / "results" / "draft_rank_tune.json"


def probe(out: Path) -> None:
    from gya_memory.answer.context import Policy, assemble
    from gya_memory.answer.llm import get_llm
    from gya_memory.answer.questions import question_kind
    from gya_memory.lab.scenarios import load_acceptance
    from gya_memory.semantic.embeddings import get_embedder

    embedder, llm = get_embedder(), get_llm()
    rows = []
    for s in load_acceptance("tune"):
        texts = [m.text for m in s.memories]
        vectors = np.asarray(embedder.embed_documents(texts))
        draft = llm.chat(assemble(s.question, [], Policy(), kind="advice").messages,
                         max_tokens=160).text
        cosines = {"q": vectors @ np.asarray(embedder.embed_query(s.question)),
                   "dq": vectors @ np.asarray(embedder.embed_query(draft)),
                   "dp": vectors @ np.asarray(embedder.embed_documents([draft]))[0]}
        rows.append({"scenario": s.id, "lang": s.lang, "kind": s.question_kind,
                     "predicted_kind": question_kind(s.question, known=texts),
                     "relevant": list(s.relevant), "draft": draft,
                     "ids": [m.id for m in s.memories],
                     **{k: [round(float(x), 4) for x in v] for k, v in cosines.items()}})
        print(s.id, flush=True)
    out.write_text(json.dumps(rows, ensure_ascii=False, indent=1), "utf-8")


def _rrf(*scores: Sequence[float], k: int = 60) -> np.ndarray:
    out = np.zeros(len(scores[0]))
    for s in scores:
        for rank, i in enumerate(np.argsort(-np.asarray(s), kind="stable")):
            out[i] += 1 / (k + rank + 1)
    return out


RANKINGS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "question (shipped)": lambda r: r["q"],
    "draft as query": lambda r: r["dq"],
    "draft as passage": lambda r: r["dp"],
    "max(question, draft as query)": lambda r: np.maximum(r["q"], r["dq"]),
    "mean(question, draft as query)": lambda r: np.add(r["q"], r["dq"]),
    "mean(question, draft as passage)": lambda r: np.add(r["q"], r["dp"]),
    "rrf(question, draft as query)": lambda r: _rrf(r["q"], r["dq"]),
}


def rank_of_relevant(scores: Any, row: dict[str, Any]) -> int:
    """1-based rank of the best-ranked relevant memory (ties: the earlier memory first)."""
    order = [row["ids"][i] for i in np.argsort(-np.asarray(scores), kind="stable")]
    return min(order.index(m) for m in row["relevant"]) + 1


def report(rows: list[dict[str, Any]]) -> dict[str, dict[str, tuple[int, int, int, int]]]:
    """(first, first 3, first 6, questions) per ranking, for each language and true kind."""
    out: dict[str, dict[str, tuple[int, int, int, int]]] = {}
    for lang in ("zh", "en"):
        for kind in ("advice", "fact"):
            of = [r for r in rows if r["lang"] == lang and r["kind"] == kind]
            key = f"{lang} {kind}"
            out[key] = {}
            for name, score in RANKINGS.items():
                ranks = [rank_of_relevant(score(r), r) for r in of]
                out[key][name] = (sum(x <= 1 for x in ranks), sum(x <= 3 for x in ranks),
                                  sum(x <= 6 for x in ranks), len(ranks))
    return out


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    rows = probed_rows(argv, __doc__, RESULTS, probe, "draft with the model first")
    print(f"{len(rows)} with-memory questions (tuning split): the relevant memory ranked "
          "first / in the first 3 / in the first 6, of n")
    for key, table in report(rows).items():
        print(key)
        for name, (first, top3, top6, n) in table.items():
            print(f"  {name:34} {first:2} / {top3:2} / {top6:2}  of {n}")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
