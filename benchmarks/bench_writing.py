"""The write path of issue 18 on the hand-labelled writing set (48 conversations, 2-3 sessions
each, ``gya_memory/data/writing/``): extraction recall and precision, whose-fact errors,
updates, duplicates and time per session, per language, with the local model.

    ./run.sh bench writing                       # test split (conversations 06-12 of each part)
    ./run.sh bench writing --split tune --limit 2
    ./run.sh bench writing --json benchmarks/results/writing_test.json

A proposal *matches* a labelled fact when every key group of the fact has one of its forms in
the proposal (case-insensitive); the keys are names, numbers and the key noun, so a
paraphrase that keeps them counts. Precision counts a proposal right when it matches a
labelled fact of its session (restated ones included); an unmatched proposal is printed so
it can be read. Each conversation gets a fresh store; its sessions are written in order.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from _shared import print_footer


def load(split: str | None) -> list[dict[str, Any]]:
    folder = resources.files("gya_memory") / "data" / "writing"
    out = []
    for name in ("zh_a", "zh_b", "en_a", "en_b"):
        for c in json.loads((folder / f"{name}.json").read_text("utf-8"))["conversations"]:
            if split in (None, "all", c["split"]):
                out.append(c)
    return out


def matches(fact: dict[str, Any], text: str) -> bool:
    t = text.lower()
    return all(any(form.lower() in t for form in group) for group in fact["keys"])


def is_user(about: str) -> bool:
    return about.strip().lower() == "user"


def run(conversations: list[dict[str, Any]], llm: Any, embedder: Any, show: bool = True) -> list[dict[str, Any]]:
    from gya_memory.semantic import SemanticMemory
    from gya_memory.writing import remember

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in conversations:
            memory = SemanticMemory(Path(tmp) / c["id"], user_id=c["user"], embedder=embedder)
            facts: dict[str, dict[str, Any]] = {}
            for s in c["sessions"]:
                start = time.perf_counter()
                report = remember(memory, llm, s["messages"], session_id=s["session_id"], when=s["when"])
                seconds = time.perf_counter() - start
                for f in s["extract"]:
                    facts[f["id"]] = f
                labelled = s["extract"]
                decided = {d.proposal.text: d for d in report.decisions}
                row = {"conversation": c["id"], "lang": c["lang"], "session": s["session_id"],
                       "seconds": round(seconds, 1), "raw": report.raw, "dropped": len(report.dropped),
                       "proposals": [], "facts": []}
                for p in report.proposals:
                    hit = [f["id"] for f in labelled if matches(f, p.text)]
                    whose = None
                    if hit:
                        whose = is_user(facts[hit[0]]["about"]) == is_user(p.about)
                    d = decided.get(p.text)
                    row["proposals"].append({"text": p.text, "about": p.about, "matches": hit,
                                             "whose_ok": whose, "action": d.action if d else None,
                                             "replaced": d.replaced if d else None})
                for f in labelled:
                    found = [p for p in row["proposals"] if f["id"] in p["matches"]]
                    entry = {"id": f["id"], "found": bool(found), "kind": f["kind"]}
                    if f.get("updates"):
                        old = facts[f["updates"]]
                        entry["update_ok"] = any(p["action"] == "update" and p["replaced"]
                                                 and matches(old, p["replaced"]) for p in found)
                        entry["old_kept"] = any(matches(old, m.text) for m in memory.all()) is False
                    if f.get("restates"):
                        entry["duplicate"] = any(p["action"] in ("add", "update") for p in found)
                    row["facts"].append(entry)
                rows.append(row)
                if show:
                    got = sum(e["found"] for e in row["facts"])
                    print(f"  {c['id']} {s['session_id']} {seconds:5.1f} s  found {got}/{len(labelled)}  "
                          f"proposed {len(row['proposals'])} (dropped {row['dropped']})", flush=True)
                    for p in row["proposals"]:
                        if not p["matches"]:
                            print(f"      unmatched: {p['text']!r} (about {p['about']})")
            memory.close()
    return rows


def rates(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    def mean(xs: list[Any]) -> float:
        xs = [float(x) for x in xs]
        return round(sum(xs) / len(xs), 3) if xs else float("nan")

    out = {}
    for lang in ("zh", "en"):
        r = [x for x in rows if x["lang"] == lang]
        if not r:
            continue
        facts = [f for x in r for f in x["facts"]]
        props = [p for x in r for p in x["proposals"]]
        secs = sorted(x["seconds"] for x in r)
        out[lang] = {
            "recall (>= 0.8)": mean([f["found"] for f in facts if "duplicate" not in f]),
            "precision (>= 0.9)": mean([bool(p["matches"]) for p in props]),
            "whose-fact errors (<= 0.05)": mean([p["whose_ok"] is False for p in props if p["matches"]]),
            "update right (>= 0.85)": mean([f["update_ok"] for f in facts if "update_ok" in f]),
            "restated, no duplicate (>= 0.9)": mean([not f["duplicate"] for f in facts if "duplicate" in f]),
            "proposals per session": round(len(props) / len(r), 2),
            "dropped while parsing": sum(x["dropped"] for x in r),
            "seconds per session, median": secs[len(secs) // 2],
            "sessions": len(r),
        }
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench_writing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=["tune", "test", "all"], default="test")
    parser.add_argument("--limit", type=int, help="the first N conversations of each language")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    started = time.perf_counter()

    import pandas as pd

    from gya_memory.embeddings import get_embedder
    from gya_memory.llm import get_llm

    conversations = load(args.split)
    if args.limit:
        conversations = [c for lang in ("zh", "en")
                         for c in [x for x in conversations if x["lang"] == lang][:args.limit]]
    print(f"{len(conversations)} conversations ({args.split})")
    rows = run(conversations, get_llm(), get_embedder())
    print("\n" + pd.DataFrame(rates(rows)).to_string())
    if args.json:
        args.json.write_text(json.dumps({"split": args.split, "rows": rows}, ensure_ascii=False, indent=1), "utf-8")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
