"""e5's latent terms as a ranking at MemoryBank's size (issue 17; a first look, session 19).

    ./run.sh bench terms_recall            # cn and en, ~4 min on 2 cores

Each user's exchanges (18-52 per user) ranked for every answerable probing question by the
cosine (dense), by BM25 (the package's ``lexical.BM25``), by e5's latent terms
(``LocalE5Embedder.terms``, the agent's candidate order since session 19), and by fusions of
them: RRF (k = 60) of each pair and of all three, and a weighted three-way RRF whose weights
and k are chosen by cross-validation on ``bench_recall``'s fixed folds (the weights scored on
fold f are the best on the other four: ``bench_recall.cross_validate``). Turn R@5, R@10 and
MRR@10 against the labelled evidence. Raw rankings: no store, no date filter, no floor, so
compare them with ``bench_recall``'s dense row (the same numbers), not its gated ones. Reads
``../shared/data/memorybank`` (``--data``); prints numbers only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from _shared import print_footer


def rrf(lists: Sequence[Sequence[str]], k: float = 60.0,
        weights: Sequence[float] | None = None) -> list[str]:
    """The keys of ``lexical.rrf`` (weighted reciprocal rank fusion), best first."""
    from gya_memory.semantic.lexical import rrf as fuse
    return [key for key, _ in fuse(lists, k, weights)]


WEIGHTS = (0.5, 1.0, 2.0)
KS = (10.0, 30.0, 60.0)


def weighted_grid() -> list[tuple[float, float, float, float]]:
    """(k, w_dense, w_lexical, w_terms): every k of :data:`KS` with every weight of
    :data:`WEIGHTS` per ranking, once per ranking order (2, 2, 2 orders as 1, 1, 1 does)."""
    grid, seen = [], set()
    for k in KS:
        for w in itertools.product(WEIGHTS, repeat=3):
            shape = (k, *(x / max(w) for x in w))
            if shape not in seen:
                seen.add(shape)
                grid.append((k, *w))
    return grid


def metrics(ranked: Sequence[str], evidence: frozenset[str]) -> tuple[float, float, float]:
    rr = next((1.0 / (i + 1) for i, key in enumerate(ranked[:10]) if key in evidence), 0.0)
    return (len(set(ranked[:5]) & evidence) / len(evidence),
            len(set(ranked[:10]) & evidence) / len(evidence), rr)


def summary(got: Iterable[tuple[float, float, float]]) -> str:
    r5, r10, mrr = (float(np.mean(col)) for col in zip(*got))
    return f"{r5:.3f} / {r10:.3f} / {mrr:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    import bench_recall as br
    from gya_memory.answer.terms import overlap
    from gya_memory.semantic.lexical import BM25
    from gya_memory.semantic.embeddings.local import LocalE5Embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=br.DEFAULT_DATA)
    parser.add_argument("--datasets", default="cn,en", help="cn, en or both")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    labels = json.loads(br.LABELS.read_text(encoding="utf-8"))
    try:
        hays = {lang: br.load_memorybank(args.data / "memorybank", lang, labels)
                for lang in args.datasets.split(",")}
    except br.MissingData as exc:
        print(f"bench_terms_recall: missing {exc} (give the data folder with --data)",
              file=sys.stderr)
        return 2
    e5 = LocalE5Embedder()
    grid = weighted_grid()
    print("MemoryBank answerable questions, raw rankings: turn R@5 / R@10 / MRR@10")
    for lang, users in hays.items():
        rows: dict[str, dict[str, tuple[float, float, float]]] = {}  # ranking -> qid -> metrics
        weighted: dict[str, dict[str, dict[str, float | None]]] = {}  # the grid, for the folds
        folds: dict[str, int] = {}
        for hay in users:
            keys = [d.key for d in hay.docs]
            texts = [d.text for d in hay.docs]
            dense_docs = e5.embed_documents(texts)
            term_docs = e5.terms(texts)
            bm25 = BM25(zip(keys, texts))
            for q in hay.queries:
                if not q.answerable or not q.evidence:
                    continue
                qid = f"{hay.name}/{q.qid}"
                folds[qid] = q.fold
                cos = dense_docs @ e5.embed_query(q.text)
                dense = [keys[i] for i in np.argsort(-cos, kind="stable")]
                lex = [keys[i] for i in np.argsort(-np.array(bm25.scores(q.text)), kind="stable")]
                qt = e5.terms([q.text])[0]
                dots = np.array([overlap(qt, d) for d in term_docs])
                terms = [keys[i] for i in np.argsort(-dots, kind="stable")]
                ranked = {"dense": dense, "lexical (BM25)": lex, "latent terms": terms,
                          "rrf(dense, BM25)": rrf([dense, lex]),
                          "rrf(dense, terms)": rrf([dense, terms]),
                          "rrf(BM25, terms)": rrf([lex, terms]),
                          "rrf(dense, BM25, terms)": rrf([dense, lex, terms])}
                for name, order in ranked.items():
                    rows.setdefault(name, {})[qid] = metrics(order, q.evidence)
                for k, *w in grid:
                    r5, r10, mrr = metrics(rrf([dense, lex, terms], k, w), q.evidence)
                    weighted.setdefault(f"{k:g}:{w[0]:g},{w[1]:g},{w[2]:g}", {})[qid] = {
                        "turn_r5": r5, "turn_r10": r10, "mrr": mrr}
        for name, got in rows.items():
            print(f"  {lang:<3} {name:<24} n={len(got):<4} {summary(got.values())}")
        oof, chosen, _ = br.cross_validate(weighted, folds)
        got = {qid: (m["turn_r5"], m["turn_r10"], m["mrr"]) for qid, m in oof.items()}
        print(f"  {lang:<3} {'weighted rrf, out of fold':<24} n={len(got):<4} "
              f"{summary(got.values())}")
        print(f"      k:w_dense,w_BM25,w_terms chosen per fold: "
              + ", ".join(f"{f}: {v}" for f, v in sorted(chosen.items())))
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
