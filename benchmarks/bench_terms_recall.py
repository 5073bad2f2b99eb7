"""e5's latent terms as a ranking at MemoryBank's size (issue 17; a first look, session 19).

    ./run.sh bench terms_recall            # cn and en, ~4 min on 2 cores

Each user's exchanges (18-52 per user) ranked for every answerable probing question by the
cosine (dense), by e5's latent terms (``LocalE5Embedder.terms``, the agent's candidate order
since session 19), and by RRF (k = 60) of the two: turn R@5, R@10 and MRR@10 against the
labelled evidence. Raw rankings: no store, no date filter, no floor, so compare them with
``bench_recall``'s dense row (the same numbers) and its lexical and hybrid rows, not its gated
ones. Reads ``../shared/data/memorybank`` (``--data``); prints numbers only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from _shared import print_footer


def rrf(lists: Sequence[Sequence[str]], k: float = 60.0) -> list[str]:
    """``bench_recall.fuse_rrf`` of two rankings of keys (ties keep the first's order)."""
    import bench_recall as br
    first, second = ([(key, 0.0) for key in ranked] for ranked in lists)
    return br.fuse_rrf(first, second, k=k)


def metrics(ranked: Sequence[str], evidence: frozenset[str]) -> tuple[float, float, float]:
    rr = next((1.0 / (i + 1) for i, key in enumerate(ranked[:10]) if key in evidence), 0.0)
    return (len(set(ranked[:5]) & evidence) / len(evidence),
            len(set(ranked[:10]) & evidence) / len(evidence), rr)


def main(argv: Sequence[str] | None = None) -> int:
    import bench_recall as br
    from gya_memory.answer.terms import overlap
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
    print("MemoryBank answerable questions, raw rankings: turn R@5 / R@10 / MRR@10")
    for lang, users in hays.items():
        rows: dict[str, list[tuple[float, float, float]]] = {}
        for hay in users:
            keys = [d.key for d in hay.docs]
            texts = [d.text for d in hay.docs]
            dense_docs = e5.embed_documents(texts)
            term_docs = e5.terms(texts)
            for q in hay.queries:
                if not q.answerable or not q.evidence:
                    continue
                cos = dense_docs @ e5.embed_query(q.text)
                dense = [keys[i] for i in np.argsort(-cos, kind="stable")]
                qt = e5.terms([q.text])[0]
                dots = np.array([overlap(qt, d) for d in term_docs])
                terms = [keys[i] for i in np.argsort(-dots, kind="stable")]
                for name, ranked in (("dense", dense), ("latent terms", terms),
                                     ("rrf(dense, terms)", rrf([dense, terms]))):
                    rows.setdefault(name, []).append(metrics(ranked, q.evidence))
        for name, got in rows.items():
            r5, r10, mrr = (float(np.mean([g[j] for g in got])) for j in range(3))
            print(f"  {lang:<3} {name:<18} n={len(got):<4} {r5:.3f} / {r10:.3f} / {mrr:.3f}")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
