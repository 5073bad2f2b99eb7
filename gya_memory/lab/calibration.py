"""Threshold calibration (阈值校准): choose ``min_score`` per embedder on a labelled set.

The article filters weak candidates with ``min_score=0.5``. That number was measured with
bge-m3, whose unrelated pairs score around 0.4. A threshold belongs to one embedder: the
default e5 model here scores every pair of sentences in this set between about 0.71 and
0.93, so 0.5 lets every candidate through and "no hit" never happens. Each embedder therefore ships a
min_score chosen on data, and this module is how it is chosen.

The data is ``gya_memory/data/labelled_memories.json``, written for this project: six users
(three writing Chinese, three English), nine memories each over three sessions, and 105
queries, each asked within one user's memories. 78 have gold memories: mostly paraphrases that
share no content word with their memory (「我最近饮食上有什么要注意的吗？」 for
「最近在戒咖啡，想少喝一点」), some that hinge on a rare name, number, date or ID (``MU5137``,
``阿莫西林``, ``Okonkwo-Hale``), and the article's own four questions. 27 have no answer
among that user's memories, on a nearby topic (「用户去过哪里？」, an order number that
was never mentioned), so a retriever has to say "nothing" rather than return the least bad
memory. (The small e5 model does not manage that for 「用户去过哪里？」: its best wrong memory
scores 0.893, above the right memory of two of the article's questions.)

What is measured, for a ranking of one user's memories per query:

- recall@1, recall@3: share of answerable queries with a gold memory ranked first / in the
  top 3, with no threshold applied; MRR is the mean of 1/rank of the first gold memory.
- acceptance at a threshold ``t``: share of answerable queries whose best gold memory
  scores ``>= t`` (the right memory survives the filter).
- rejection at ``t``: share of no-answer queries whose best candidate scores ``< t``
  (the retriever correctly reports no hit).

How the threshold is chosen: every value on a 0.001 grid across the observed scores is a
candidate, and the threshold is the one that maximises balanced accuracy, the mean of
acceptance and rejection (the two classes count equally though answerable queries are about
three times as many). Ties go to the candidate farthest from any observed score: the middle
of the best gap between scores. The threshold is chosen on the same queries it is scored on,
so those two rates are optimistic; :attr:`CalibrationReport.heldout_acceptance` and
``heldout_rejection`` are the honest version: each user's queries scored with a threshold
chosen on the other users. The report also shows the recall-first alternative (the highest
threshold that keeps 90% of answers) and a threshold per language: e5 scores Chinese pairs a
few hundredths higher than English ones, so one threshold for both is a compromise, and
``embeddings.MIN_SCORE_BY_LANGUAGE`` ships one per language.

The labelled set itself is :mod:`gya_memory.lab.labelled`; the threshold maths is
:mod:`gya_memory.lab.scoring`, the report :mod:`gya_memory.lab.calibration_report`.

Run ``python -m gya_memory.lab.calibration [--embedder local|tfidf|ollama|openai]`` to calibrate.
Nothing happens at import time: the data is read and models are loaded only when asked.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from gya_memory.lab.calibration_report import CalibrationReport, QueryResult, group_metrics, leave_one_user_out
from gya_memory.base.config import EMBEDDERS
from gya_memory.semantic.embeddings.base import l2_normalise
from gya_memory.lab.labelled import KINDS, LANGUAGES, LabelledSet, load_labelled
from gya_memory.lab.scoring import ARTICLE_THRESHOLD
from gya_memory.lab.scoring import as_scores, choose_threshold, rates_at, threshold_for_acceptance

if TYPE_CHECKING:  # pandas is imported only when a table is asked for
    from gya_memory.semantic.embeddings.base import Embedder


#: ``rank(user, query)`` returns ``(memory_id, score)`` pairs for that user's memories,
#: higher score = more relevant. It may leave memories out (a keyword search that matches
#: nothing returns ``[]``); a left-out memory counts as never found and never accepted.
Ranker = Callable[[str, str], Sequence[tuple[str, float]]]
#: ``embed_documents(texts)`` -> ``(n, dim)`` array, one row per text.
EmbedDocuments = Callable[[list[str]], Any]
#: ``embed_query(text)`` -> ``(dim,)`` array.
EmbedQuery = Callable[[str], Any]


def evaluate_ranker(
    rank: Ranker,
    labelled: LabelledSet | None = None,
    threshold: float | None = None,
    *,
    thresholds: Iterable[float] | None = None,
    name: str = "ranker",
) -> CalibrationReport:
    """Score ``rank`` on the labelled set and choose (or apply) a threshold.

    ``rank(user, query)`` must rank only that user's memories. With ``threshold`` given,
    the report uses it as is (nothing is chosen); otherwise the threshold is chosen from
    ``thresholds`` (default: a 0.001 grid across the observed scores) by
    :func:`choose_threshold`. The report also gives the leave-one-user-out rates, the
    threshold that keeps 90% of answers (:func:`threshold_for_acceptance`), a threshold per
    language and the rates at the article's 0.5.
    """
    labelled = labelled or load_labelled()
    owner = {m.id: m.user for m in labelled.memories}
    results: list[QueryResult] = []
    all_scores: list[float] = []
    for q in labelled.queries:
        pairs = [(str(i), float(s)) for i, s in rank(q.user, q.text)]
        ids = [i for i, _ in pairs]
        if len(set(ids)) != len(ids):
            raise ValueError(f"ranker returned a memory twice for query {q.id}: {ids}")
        for memory_id in ids:
            if owner.get(memory_id) != q.user:
                raise ValueError(
                    f"ranker returned {memory_id!r} for query {q.id} of user {q.user!r}; "
                    "rank only that user's memories"
                )
        pairs.sort(key=lambda p: -p[1])  # stable: equal scores keep the ranker's order
        all_scores.extend(s for _, s in pairs if math.isfinite(s))
        results.append(
            QueryResult(q.id, q.user, q.lang, q.kind, q.text, q.gold, tuple(pairs))
        )
    positive = as_scores(r.gold_score for r in results if r.answerable)
    negative = as_scores(r.best_score for r in results if not r.answerable)
    if threshold is None:
        chosen = choose_threshold(positive, negative, thresholds)
        rule = "max balanced accuracy, middle of the best gap"
    else:
        chosen, rule = float(threshold), "given"
    acceptance, rejection = rates_at(positive, negative, chosen)
    acc_article, rej_article = rates_at(positive, negative, ARTICLE_THRESHOLD)
    heldout = leave_one_user_out(results)
    keep90 = threshold_for_acceptance(positive, 0.9)
    overall = group_metrics("all", results, chosen)
    langs = [lang for lang in LANGUAGES if any(r.lang == lang for r in results)]
    langs += sorted({r.lang for r in results} - set(langs))
    kinds = [k for k in KINDS if any(r.kind == k for r in results)]
    kinds += sorted({r.kind for r in results} - set(kinds))
    return CalibrationReport(
        name=name,
        threshold=chosen,
        threshold_rule=rule,
        recall_at_1=overall.recall_at_1,
        recall_at_3=overall.recall_at_3,
        mrr=overall.mrr,
        acceptance=acceptance,
        rejection=rejection,
        acceptance_at_article=acc_article,
        rejection_at_article=rej_article,
        heldout_acceptance=heldout[0],
        heldout_rejection=heldout[1],
        keep90_threshold=keep90,
        keep90_rejection=rates_at(positive, negative, keep90)[1],
        thresholds_by_language={
            lang: choose_threshold(
                [r.gold_score for r in results if r.lang == lang and r.answerable],
                [r.best_score for r in results if r.lang == lang and not r.answerable],
            )
            for lang in langs
        },
        score_min=min(all_scores) if all_scores else math.nan,
        score_max=max(all_scores) if all_scores else math.nan,
        positive_scores=positive,
        negative_scores=negative,
        by_language={
            lang: group_metrics(lang, [r for r in results if r.lang == lang], chosen) for lang in langs
        },
        by_kind={k: group_metrics(k, [r for r in results if r.kind == k], chosen) for k in kinds},
        results=tuple(results),
        n_memories=len(labelled.memories),
        n_users=len(labelled.users),
    )


def embedding_ranker(
    embed_documents: EmbedDocuments,
    embed_query: EmbedQuery,
    labelled: LabelledSet | None = None,
) -> Ranker:
    """A :data:`Ranker` that ranks a user's memories by cosine similarity.

    Every memory is embedded once, in one ``embed_documents`` call; each query is embedded
    with ``embed_query``. Vectors are L2-normalised here as well, so the score is the cosine
    even if an embedder forgets to.
    """
    labelled = labelled or load_labelled()
    texts = [m.text for m in labelled.memories]
    docs = np.asarray(embed_documents(texts), dtype=np.float32)
    if docs.ndim != 2 or docs.shape[0] != len(texts):
        raise ValueError(
            f"embed_documents returned shape {docs.shape} for {len(texts)} texts; "
            "expected (n_texts, dim)"
        )
    docs = l2_normalise(docs)
    by_user: dict[str, tuple[list[str], np.ndarray]] = {}
    for user in labelled.users:
        idx = [i for i, m in enumerate(labelled.memories) if m.user == user]
        by_user[user] = ([labelled.memories[i].id for i in idx], docs[idx])

    def rank(user: str, query: str) -> list[tuple[str, float]]:
        ids, vectors = by_user[user]
        q = l2_normalise(np.asarray(embed_query(query), dtype=np.float32).reshape(1, -1))[0]
        if q.shape[0] != vectors.shape[1]:
            raise ValueError(f"query vector has {q.shape[0]} dims, documents {vectors.shape[1]}")
        scores = vectors @ q
        order = np.argsort(-scores, kind="stable")
        return [(ids[i], float(scores[i])) for i in order]

    return rank


def evaluate(
    embed_documents: EmbedDocuments,
    embed_query: EmbedQuery,
    labelled: LabelledSet | None = None,
    *,
    threshold: float | None = None,
    thresholds: Iterable[float] | None = None,
    embed_queries: EmbedDocuments | None = None,
    name: str = "embedder",
) -> CalibrationReport:
    """Calibrate an embedder: rank each user's memories by cosine, then choose min_score.

    ``embed_documents(list[str]) -> (n, dim)`` and ``embed_query(str) -> (dim,)``, e.g. the
    two methods of an embedder from :mod:`gya_memory.semantic.embeddings`. Query/passage prefixes
    (e5's ``query: `` / ``passage: ``) are the embedder's business. ``embed_queries``, if
    given, embeds all query texts in one batch (faster than one call per query; same
    vectors). ``threshold`` and ``thresholds`` are as in :func:`evaluate_ranker`.
    """
    labelled = labelled or load_labelled()
    if embed_queries is not None:
        texts = list(dict.fromkeys(q.text for q in labelled.queries))
        vectors = np.asarray(embed_queries(texts), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(
                f"embed_queries returned shape {vectors.shape} for {len(texts)} texts"
            )
        cache = dict(zip(texts, vectors, strict=True))
        single = embed_query

        def embed_query(text: str) -> Any:
            return cache[text] if text in cache else single(text)

    rank = embedding_ranker(embed_documents, embed_query, labelled)
    return evaluate_ranker(rank, labelled, threshold, thresholds=thresholds, name=name)


# -- command line -----------------------------------------------------------------------
def calibrate(
    embedder: Embedder | None = None,
    labelled: LabelledSet | None = None,
    *,
    threshold: float | None = None,
) -> CalibrationReport:
    """Evaluate an embedder (default: the configured one, see ``GYA_EMBEDDER``) on the
    labelled set and choose its threshold (or report at ``threshold``)."""
    from gya_memory.semantic.embeddings import get_embedder

    embedder = get_embedder() if embedder is None else embedder
    return evaluate(embedder.embed_documents, embedder.embed_query, labelled,
                    threshold=threshold, name=embedder.name)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gya_memory.lab.calibration``: calibrate an embedder on the labelled set."""
    parser = argparse.ArgumentParser(
        prog="python -m gya_memory.lab.calibration",
        description="Calibrate min_score for an embedder on the labelled set.",
    )
    parser.add_argument("--embedder", choices=EMBEDDERS,
                        help="which embedder (default: GYA_EMBEDDER, else local)")
    parser.add_argument("--threshold", type=float, help="report at this threshold instead")
    parser.add_argument("--queries", action="store_true", help="also print every query")
    args = parser.parse_args(argv)
    from gya_memory.semantic.embeddings import get_embedder

    report = calibrate(get_embedder(args.embedder), threshold=args.threshold)
    print(report.summary())
    if args.queries:
        import pandas as pd

        with pd.option_context("display.width", 200, "display.max_rows", None):
            print(report.per_query_frame().drop(columns=["user"]).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
