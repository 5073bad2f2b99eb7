"""The write path of issue 18 on the hand-labelled writing set (48 conversations, 2-3 sessions
each, ``gya_memory/data/writing/``): extraction recall and precision, whose-fact errors,
updates, duplicates and time per session, per language, with the local model.

    ./run.sh bench writing                       # test split (conversations 06-12 of each part)
    ./run.sh bench writing --split tune --limit 2
    ./run.sh bench writing --json benchmarks/results/writing_test.json
    ./run.sh bench writing --split all --labelled rule   # the update rule alone, seconds, no model

A proposal *matches* a labelled fact when every key group of the fact has one of its forms in
the proposal (case-insensitive); the keys are names, numbers and the key noun, so a
paraphrase that keeps them counts. Precision counts a proposal right when it matches a
labelled fact of its session (restated ones included); an unmatched proposal is printed so
it can be read. Each conversation gets a fresh store; its sessions are written in order.

``--hand RESULTS.json`` scores a stored run against the hand labels
(``gya_memory/data/writing_hand_labels.json``, every proposal of the test run read against its
session): precision, wrong and invented proposals and recall as a reader counts them, and how
often the key-word matcher agrees. No model is loaded.

``--labelled rule`` writes each session's labelled facts themselves (no model: extraction as
if perfect) and counts what the update step does with them: the decider's own rate, apart
from what extraction loses.

``--reuse RESULTS.json`` takes the model's extraction replies from an earlier run whose
extraction prompt was the same (checked by a hash of the prompt, session by session), so a
change to the compare/update step is measured in minutes: the model is greedy, so the
replies would be the same. Their seconds are the earlier run's.
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


def prompt_hash(messages: list[dict[str, Any]], when: str) -> str:
    import hashlib

    from gya_memory.answer.extraction import extraction_messages

    text = json.dumps(extraction_messages(messages, when), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


WORTH = 0.0  # the second look's bar (--worth; 0: off, as in the package)


def write_session(memory: Any, llm: Any, s: dict[str, Any], reused: dict[str, Any] | None) -> tuple[Any, float, float]:
    """One session written: the report, the seconds extraction took, the seconds deciding took.
    As :func:`gya_memory.answer.writing.remember`, with the second look
    (:func:`gya_memory.lab.writing_levers.screen`, ``--worth``) before the decisions."""
    from gya_memory.answer.extraction import parse_proposals, propose
    from gya_memory.answer.writing import WriteReport, write
    from gya_memory.lab.writing_levers import screen

    if reused is None:
        start = time.perf_counter()
        raw, proposals, dropped = propose(llm, s["messages"], s["when"])
    else:
        raw, proposals, dropped = reused["raw"], *parse_proposals(reused["raw"], s["messages"])
        start = time.perf_counter()
    proposals, unworthy = screen(llm, proposals, minimum=WORTH)
    if reused is None:  # counted with proposing, as remember() did when it ran the second look
        propose_s, start = round(time.perf_counter() - start, 2), time.perf_counter()
    else:
        propose_s = reused["propose_s"]
    report = WriteReport(s["session_id"], raw, proposals, dropped + unworthy)
    report.decisions = write(memory, llm, proposals, session_id=s["session_id"], when=s["when"])
    decide_s = time.perf_counter() - start
    return report, propose_s, round(decide_s, 2) if reused is None else decide_s


def run(conversations: list[dict[str, Any]], llm: Any, embedder: Any, show: bool = True,
        reuse: dict[tuple[str, str, str], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    from gya_memory.semantic.memory import SemanticMemory

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in conversations:
            memory = SemanticMemory(Path(tmp) / c["id"], user_id=c["user"], embedder=embedder)
            facts: dict[str, dict[str, Any]] = {}
            for s in c["sessions"]:
                key = (c["id"], s["session_id"], prompt_hash(s["messages"], s["when"]))
                report, propose_s, decide_s = write_session(memory, llm, s, (reuse or {}).get(key))
                seconds = propose_s + decide_s
                for f in s["extract"]:
                    facts[f["id"]] = f
                labelled = s["extract"]
                decided = {d.proposal.text: d for d in report.decisions}
                row = {"conversation": c["id"], "lang": c["lang"], "session": s["session_id"],
                       "seconds": round(seconds, 1), "propose_s": round(propose_s, 2),
                       "decide_s": round(decide_s, 2), "prompt": key[2], "raw": report.raw, "dropped": len(report.dropped),
                       "proposals": [], "facts": []}
                for p in report.proposals:
                    hit = [f["id"] for f in labelled if matches(f, p.text)]
                    whose = None  # right if a matched label is about the same side (user or not):
                    if hit:  # "小林是遛狗师" matches 请了遛狗师 (user) and 遛狗师叫小林 (小林)
                        whose = any(is_user(facts[i]["about"]) == is_user(p.about) for i in hit)
                    d = decided.get(p.text)
                    row["proposals"].append({"text": p.text, "about": p.about, "matches": hit,
                                             "whose_ok": whose, "action": d.action if d else None,
                                             "replaced": d.replaced if d else None})
                for p in row["proposals"]:
                    if p["action"] == "update":  # right only if it replaced what the label says
                        olds = [facts[facts[i]["updates"]] for i in p["matches"] if facts[i].get("updates")]
                        p["update_right"] = any(matches(old, p["replaced"]) for old in olds)
                    if p["action"] == "skip" and p["matches"]:  # a labelled new fact thrown away
                        p["lost"] = not any(facts[i].get("restates") or facts[i].get("updates")
                                            for i in p["matches"])
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


def set_decide(spec: str) -> None:
    """Run writing.decide with other options (an experiment, not a new default): ``how`` a
    model's way (:func:`gya_memory.lab.writing_levers.by_model`, with ``same_min`` and
    ``conflict_min``), ``off`` or ``rule``; ``pool`` and the floors ``zh`` / ``en``."""
    import functools

    from gya_memory.answer import writing
    from gya_memory.lab.writing_levers import by_model, by_rule

    options: dict[str, Any] = {}
    floors = dict(writing.COMPARE_MIN)
    for item in spec.split(","):
        key, value = item.split("=")
        if key in ("zh", "en"):
            floors[key] = float(value)
        elif key == "pool":
            options["pool"] = int(value)
        elif key == "restate":
            options["restate_min"] = float(value)
        elif key in ("same_min", "conflict_min"):
            options[key] = float(value)
        else:
            options[key] = value
    options["compare_min"] = floors
    print(f"decide: {options}")
    how = options.pop("how", None)
    model = {k: options.pop(k) for k in ("same_min", "conflict_min") if k in options}
    if how == "rule":
        how = by_rule()
    elif how is not None and how not in writing.HOWS:
        how = by_model(how, **model)
    chosen = functools.partial(writing.decide, **options)

    def decide(proposal: Any, memory: Any, llm: Any, **kw: Any) -> Any:
        if how is not None:  # write() passes the default how: the experiment's wins
            kw["how"] = how
        return chosen(proposal, memory, llm, **kw)

    writing.decide = decide  # type: ignore[assignment]


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
        decide = sorted(x.get("decide_s", float("nan")) for x in r)
        out[lang] = {
            "recall (>= 0.8)": mean([f["found"] for f in facts if "duplicate" not in f]),
            "precision (>= 0.9)": mean([bool(p["matches"]) for p in props]),
            "whose-fact errors (<= 0.05)": mean([p["whose_ok"] is False for p in props if p["matches"]]),
            "update right (>= 0.85)": mean([f["update_ok"] for f in facts if "update_ok" in f]),
            "restated, no duplicate (>= 0.9)": mean([not f["duplicate"] for f in facts if "duplicate" in f]),
            "updates that replaced the wrong memory": mean([not p["update_right"] for p in props if "update_right" in p]),
            "updates done": sum("update_right" in p for p in props),
            "new facts skipped as duplicates": sum(bool(p.get("lost")) for p in props),
            "proposals per session": round(len(props) / len(r), 2),
            "dropped while parsing": sum(x["dropped"] for x in r),
            "seconds per session, median": secs[len(secs) // 2],
            "of which deciding, median": decide[len(decide) // 2],
            "sessions": len(r),
        }
    return out


def labelled_updates(conversations: list[dict[str, Any]], embedder: Any, how: str = "rule",
                     show: bool = True) -> dict[str, dict[str, int]]:
    """The update step alone, on the labelled facts themselves, as if extraction were perfect
    (``--labelled``; no chat model, so only ``how="off"`` or ``"rule"``, the lab's
    :func:`gya_memory.lab.writing_levers.by_rule`): each session's
    labelled facts are written in order with :func:`gya_memory.answer.writing.write`. Per
    language: labelled updates that replaced exactly the labelled old fact, replaced another
    memory, or were added beside it; and false updates, new facts that replaced something."""
    from gya_memory.answer.extraction import Proposal
    from gya_memory.answer.writing import write
    from gya_memory.lab.writing_levers import by_rule
    from gya_memory.semantic.memory import SemanticMemory

    way = by_rule() if how == "rule" else how
    out = {lang: {"updates": 0, "right": 0, "replaced another": 0, "skipped": 0, "added beside": 0,
                  "new facts": 0, "false updates": 0, "restatements": 0, "restated, skipped": 0,
                  "new or updated facts skipped": 0} for lang in ("zh", "en")}
    with tempfile.TemporaryDirectory() as tmp:
        for c in conversations:
            memory = SemanticMemory(Path(tmp) / c["id"], user_id=c["user"], embedder=embedder)
            texts: dict[str, str] = {}
            n = out[c["lang"]]
            for s in c["sessions"]:
                for f in s["extract"]:
                    texts[f["id"]] = f["text"]
                    d = write(memory, None, [Proposal(f["text"], f["about"], f["turn"])],
                              session_id=s["session_id"], when=s["when"], how=way)[0]  # type: ignore[arg-type]
                    if f.get("restates"):
                        n["restatements"] += 1
                        n["restated, skipped"] += d.action == "skip"
                    elif d.action == "skip":
                        n["new or updated facts skipped"] += 1
                        if show:
                            print(f"  {c['id']} {s['session_id']} skipped: {f['text']!r}: {d.reason}")
                    if f.get("updates"):
                        n["updates"] += 1
                        old = texts[f["updates"]]
                        verdict = ("right" if d.replaced == old else "replaced another") \
                            if d.action == "update" else "skipped" if d.action == "skip" else "added beside"
                        n[verdict] += 1
                        if show and verdict != "right":
                            print(f"  {c['id']} {s['session_id']} {verdict}: {f['text']!r} "
                                  f"(old {old!r}): {d.reason}" + (f", replaced {d.replaced!r}" if d.replaced else ""))
                    elif not f.get("restates"):
                        n["new facts"] += 1
                        if d.action == "update":
                            n["false updates"] += 1
                            if show:
                                print(f"  {c['id']} {s['session_id']} false update: {f['text']!r} "
                                      f"replaced {d.replaced!r}")
            memory.close()
    return out


HAND_LABELS = "writing_hand_labels.json"
MADE_UP = ("invented", "misstated", "mixed up")  # the hand notes of a wrong proposal that states a false fact


def load_hand_labels() -> dict[tuple[str, str, str], dict[str, str]]:
    """The hand labels, by (conversation, session, proposal text)."""
    raw = (resources.files("gya_memory") / "data" / HAND_LABELS).read_text("utf-8")
    return {(x["conversation"], x["session"], x["text"]): x for x in json.loads(raw)["labels"]}


def hand_rates(rows: list[dict[str, Any]],
               labels: dict[tuple[str, str, str], dict[str, str]]) -> dict[str, dict[str, float]]:
    """Per language, what a reader counts: a proposal is right when its label is ``fact``;
    *made up* when it states something false (an invented, misstated or mixed-up fact); a
    labelled fact is found when a proposal the reader did not label *wrong* matches it, or a
    proposal's hand note names it ("f4 in other words"): "User's daughter Lily grows
    tomatoes", for a user who grows them and has no Lily, finds nothing. ``agreement``: the matcher's right/wrong equals the reader's."""
    import re

    out = {}
    for lang in ("zh", "en"):
        r = [x for x in rows if x["lang"] == lang]
        if not r:
            continue
        marks, agree, found, facts = [], [], 0, 0
        for x in r:
            named = set()
            for p in x["proposals"]:
                label = labels[(x["conversation"], x["session"], p["text"])]
                marks.append(label)
                agree.append(bool(p["matches"]) == (label["label"] == "fact"))
                named |= set(re.findall(r"\bf\d+\b", label.get("note", "")))
                if label["label"] != "wrong":
                    named |= set(p["matches"])
            for f in x["facts"]:
                if "duplicate" in f:
                    continue
                facts += 1
                found += f["id"] in named
        n = len(marks)
        out[lang] = {
            "precision, by hand (>= 0.9)": round(sum(m["label"] == "fact" for m in marks) / n, 3),
            "remarks kept": round(sum(m["label"] == "remark" for m in marks) / n, 3),
            "wrong: questions, fragments, wrong person, false": round(sum(m["label"] == "wrong" for m in marks) / n, 3),
            "made up: invented, misstated (<= 0.02)": round(sum(m.get("note", "").startswith(MADE_UP) for m in marks) / n, 3),
            "recall, by hand (>= 0.8)": round(found / facts, 3) if facts else float("nan"),
            "matcher agrees with the reader": round(sum(agree) / n, 3),
            "proposals": n,
        }
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench_writing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=["tune", "test", "all"], default="test")
    parser.add_argument("--limit", type=int, help="the first N conversations of each language")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--decide", default="", help="options for writing.decide, e.g. how=first (the model may update; default off), how=pick,pool=3,zh=0.86,en=0.82")
    parser.add_argument("--worth", type=float, help="P(yes) a proposal needs in the second look (0: off)")
    parser.add_argument("--reuse", type=Path, help="take the extraction replies from this results file")
    parser.add_argument("--hand", type=Path, help="score this stored test run against the hand labels (no model)")
    parser.add_argument("--example", choices=["shipped", "two_per_turn"], default="shipped",
                        help="the worked example of the extraction prompt (two_per_turn: "
                        "gya_memory.lab.writing_levers, measured and kept off)")
    parser.add_argument("--labelled", choices=["rule", "off"], help="the update step alone on the labelled facts, "
                        "as if extraction were perfect (no chat model)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.hand:
        import pandas as pd

        rows = json.loads(args.hand.read_text("utf-8"))["rows"]
        print(f"{args.hand.name}: the key-word matcher's rates, then a reader's")
        print(pd.DataFrame(rates(rows)).loc[["recall (>= 0.8)", "precision (>= 0.9)"]].to_string())
        print("\n" + pd.DataFrame(hand_rates(rows, load_hand_labels())).to_string())
        print_footer(started)
        return 0

    import pandas as pd

    from gya_memory.semantic.embeddings import get_embedder

    conversations = load(args.split)
    if args.limit:
        conversations = [c for lang in ("zh", "en")
                         for c in [x for x in conversations if x["lang"] == lang][:args.limit]]
    print(f"{len(conversations)} conversations ({args.split})")
    if args.decide:
        set_decide(args.decide)
    if args.labelled:
        print(f"the labelled facts written in order, how={args.labelled!r} (as if extraction were perfect):")
        print("\n" + pd.DataFrame(labelled_updates(conversations, get_embedder(), args.labelled)).to_string())
        print_footer(started)
        return 0
    from gya_memory.answer.llm import get_llm

    if args.example == "two_per_turn":
        from gya_memory.lab.writing_levers import use_example_two_per_turn

        use_example_two_per_turn()
        print("worked example: two facts in a turn (gya_memory.lab.writing_levers)")

    if args.worth is not None:
        global WORTH
        WORTH = args.worth
        print(f"second look: P(yes) >= {args.worth}")
    reuse = None
    if args.reuse:
        earlier = json.loads(args.reuse.read_text("utf-8"))["rows"]
        reuse = {(x["conversation"], x["session"], x["prompt"]): x for x in earlier if "prompt" in x}
        print(f"reusing {len(reuse)} extraction replies from {args.reuse.name}")
    rows = run(conversations, get_llm(), get_embedder(), reuse=reuse)
    print("\n" + pd.DataFrame(rates(rows)).to_string())
    if args.json:
        args.json.write_text(json.dumps({"split": args.split, "decide": args.decide or "default",
                                             "rates": rates(rows), "rows": rows}, ensure_ascii=False, indent=1), "utf-8")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
