"""The gate at real sizes, replayed from a probe: other kind rules and bars, no model (issue 17).

    ./run.sh bench recall --datasets cn,en --judge-every 4 --judge-modes hybrid --gate-probe \
        --json /tmp/probe.json                                # the probe: ~40 min on 2 cores
    ./run.sh bench gate_sizes /tmp/probe.json                 # the replay: seconds

``bench_recall.py --gate-probe`` records, for every judged question (every not-answerable one,
one answerable in N), the hybrid top 5 that ``retrieve(mode="hybrid")`` screens: each
candidate's free checks under each question kind, the reader's 1 - P(unknown) and the judge's
P(yes). This script replays the gate on them (:func:`replay`, which follows
:meth:`gya_memory.answer.gate.Gate.apply`: free checks, a pool of 5, the reader for fact
questions, the judge for advice and general ones) and reports, per data set, the false hits on
the not-answerable questions and the evidence recall of what passes on the answerable ones
(against the ungated hybrid R@5 of the same questions).

Two levers, both chosen to leave the acceptance set alone:

- **a reader bar for a stored exchange** (``exchange_min``): the reader's 0.98 was chosen on
  one-line facts; a chat turn or an exchange (not :func:`gya_memory.answer.gate.is_statement`)
  reads differently. The acceptance set stores one-line facts only, so this bar never applies
  there;
- **the recall-cue kind rule** (:func:`recall_kind`): a question about the earlier
  conversation itself ("我曾经告诉过你…", "I once told you…", "what did you recommend…") or
  about a dated event of the user's ("5月3日那天我…", "On May 4th, I went to…") asks for a
  stored fact, also where the shipped rule reads it as advice.

The first line of each table is the shipped gate; the replay of it is checked against what
the judged ``retrieve()`` of the same run returned (the "replay = run" count). Two more levers
(:func:`cue_judge`, a stricter judge for recall-cue questions; :func:`reader_margin`, the
reader's first candidate when it stands ahead) are scored out of fold by :func:`cross_fit`:
each value chosen on one half of the users, scored on the other.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from _shared import print_footer

POOL = 5  # bench_recall's GATE_TOP_K
FACT_MIN, JUDGE_MIN, GENERAL_MIN = 0.98, 0.2, 0.9  # gya_memory.answer.gate's defaults
EXCHANGE_BARS = (0.98, 0.95, 0.9, 0.8, 0.7, 0.5)
EXCHANGE_SIGNALS = ("reader", "xreader", "xyes", "ureader", "rreader", "ereader")  # the rest: bench_exchange_reader.py

_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
           "december")
# the earlier conversation itself, or a dated event of the user's, then a question about it
_RECALL_ZH = re.compile(r"曾|(告诉|说|提|分享|推荐|聊)过|你给(了)?我|你还记得|对吗[？?]?$|"
                        r"^[\"“]?(在)?\d{1,2}月\d{1,2}[日号]")
_RECALL_EN = re.compile(
    rf"\b(told|shared with|mentioned to|recommended to|asked) you\b|"
    rf"\byou (have |once )?(recommended|suggested|told|shared|gave|given|taught)\b|"
    rf"\bdid you (recommend|suggest|tell|say|give|share)\b|\bremember\b|, right\?[\"”]?$|"
    rf"^[\"“]?on ({_MONTHS}) \d{{1,2}}(st|nd|rd|th)?\b", re.I)
_BEFORE_EN = re.compile(r"\b(once|before|earlier)\b")
_SAID_EN = re.compile(r"\b(told|shared|mentioned|recommended|talked|asked)\b")


def recall_kind(question: str, shipped: str) -> str:
    """``fact`` for a personal question (one the shipped rule does not read as general) about
    the earlier conversation or a dated event of the user's, else the shipped rule's kind."""
    q = question.strip()
    if re.search(r"[\u4e00-\u9fff]", q):
        cue = bool(_RECALL_ZH.search(q))
    else:
        cue = bool(_RECALL_EN.search(q)) or bool(_BEFORE_EN.search(q) and _SAID_EN.search(q))
    return "fact" if cue and shipped != "general" else shipped


KIND_RULES: dict[str, Callable[[str, str], str]] = {
    "shipped": lambda question, shipped: shipped,
    "recall cue": recall_kind,
}


def replay(row: Mapping[str, Any], kind: str, *, fact_min: float = FACT_MIN,
           exchange_min: float | None = None, judge_min: float = JUDGE_MIN,
           general_min: float = GENERAL_MIN, pool: int = POOL,
           exchange_signal: str = "reader") -> list[str]:
    """The turn keys the gate passes for one probed question read as ``kind``: candidates
    best first (a stable sort by score, as ``Gate.apply``), those the free checks of ``kind``
    drop skipped, the first ``pool`` others asked (the reader for a fact question, at
    ``fact_min``, or ``exchange_min`` for a candidate that is not a one-line statement, read
    from ``exchange_signal``: the shipped ``reader`` or ``bench_exchange_reader.py``'s
    ``xreader`` / ``xyes``; the judge for advice and general questions)."""
    exchange_min = fact_min if exchange_min is None else exchange_min
    keys: list[str] = []
    asked = 0
    for c in sorted(row["cands"], key=lambda c: -float(c["score"])):
        if c["free"][kind] is not None:
            continue
        if asked >= pool:
            break
        asked += 1
        if kind == "fact" and c["statement"]:
            p, bar = c["reader"], fact_min
        elif kind == "fact":
            p, bar = c.get(exchange_signal), exchange_min
        else:
            p, bar = c["judge"], judge_min if kind == "advice" else general_min
        if p is not None and p >= bar:
            keys += c["keys"]
    return keys


def recall_at(keys: Sequence[str], evidence: Sequence[str], k: int = POOL) -> float:
    return len(set(keys[:k]) & set(evidence)) / len(evidence)


def score(rows: Mapping[str, Mapping[str, Any]], ungated: Mapping[str, float | None],
          rule: Callable[[str, str], str], **bars: Any) -> dict[str, Any]:
    """False hits on the not-answerable rows, evidence recall on the answerable ones (and the
    ungated R@5 of the same questions), and how many questions the rule reads as fact."""
    false_hits = n_un = 0
    gated: list[float] = []
    base: list[float] = []
    facts = 0
    for qid, row in rows.items():
        kind = rule(row["question"], row["kind"])
        facts += kind == "fact"
        got = replay(row, kind, **bars)
        if not row["answerable"]:
            n_un += 1
            false_hits += bool(got)
        elif row["evidence"]:
            gated.append(recall_at(got, row["evidence"]))
            if ungated.get(qid) is not None:
                base.append(float(ungated[qid]))  # type: ignore[arg-type]
    return {"false_hits": false_hits, "unanswerable": n_un, "answerable": len(gated),
            "gated_recall": statistics.fmean(gated) if gated else None,
            "ungated_r5": statistics.fmean(base) if base else None, "facts": facts}


# -- two more levers, each chosen on one half of the users and scored on the other -----------
# (session 31). The probe is all the data there is at these sizes, so a bar is chosen on the
# users of one fold (by gated recall minus the false-hit rate; a tie keeps the value nearer
# the shipped gate) and scored on the other's; the two halves' scores are then added.
CUE_JUDGE_BARS = (0.2, 0.3, 0.4, 0.45, 0.5, 0.6)  # 0.2: the shipped advice bar
MARGIN_SETTINGS: tuple[tuple[float, float] | None, ...] = (None, *(
    (a, m) for a in (0.9, 0.7, 0.5) for m in (0.4, 0.2, 0.1)))  # None: shipped


def cue_judge(row: Mapping[str, Any], bar: float) -> list[str]:
    """The shipped gate, but a question the recall cue marks (:func:`recall_kind`) and the
    shipped rule reads as advice ("I once told you my blood type. What is it?") needs P(yes)
    ``bar`` from the judge instead of 0.2: the lenient advice judge passes the look-alikes."""
    cue = row["kind"] == "advice" and recall_kind(row["question"], "advice") == "fact"
    return replay(row, row["kind"], judge_min=bar if cue else JUDGE_MIN)


def reader_margin(row: Mapping[str, Any], setting: tuple[float, float] | None) -> list[str]:
    """The shipped gate, but where it passes nothing for a fact question, the candidate the
    reader rates highest passes when its value is at least ``a`` and ``m`` ahead of the next
    (``setting = (a, m)``): the evidence exchange is often the reader's first, under 0.98."""
    got = replay(row, row["kind"])
    if got or setting is None or row["kind"] != "fact":
        return got
    asked = [c for c in sorted(row["cands"], key=lambda c: -float(c["score"]))
             if c["free"]["fact"] is None][:POOL]
    ranked = sorted(asked, key=lambda c: -float(c["reader"] or 0.0))
    if not ranked:
        return got
    top = float(ranked[0]["reader"] or 0.0)
    second = float(ranked[1]["reader"] or 0.0) if len(ranked) > 1 else 0.0
    return list(ranked[0]["keys"]) if top >= setting[0] and top - second >= setting[1] else got


def user_folds(data: Mapping[str, tuple[Mapping[str, Any], Any]]) -> dict[tuple[str, str], int]:
    """(data set, question id) -> 0 or 1, every question of a user in the same fold: the
    users (the id before '#') of each data set, sorted, alternate."""
    folds = {}
    for ds, (rows, _) in data.items():
        users = sorted({q.split("#")[0] for q in rows})
        of = {u: i % 2 for i, u in enumerate(users)}
        folds |= {(ds, q): of[q.split("#")[0]] for q in rows}
    return folds


def counts(data: Mapping[str, tuple[Mapping[str, Any], Any]], folds: Mapping[tuple[str, str], int],
           fold: int | None, gate: Callable[[Mapping[str, Any]], list[str]]) -> tuple[int, int, float, int]:
    """(false hits, not-answerable questions, summed evidence recall, answerable questions
    with evidence) of ``gate`` over one fold (None: all), every data set pooled."""
    hits = n_un = n_ans = 0
    recall = 0.0
    for ds, (rows, _) in data.items():
        for q, row in rows.items():
            if fold is not None and folds[(ds, q)] != fold:
                continue
            got = gate(row)
            if not row["answerable"]:
                n_un, hits = n_un + 1, hits + bool(got)
            elif row["evidence"]:
                n_ans, recall = n_ans + 1, recall + recall_at(got, row["evidence"])
    return hits, n_un, recall, n_ans


def cross_fit(data: Mapping[str, tuple[Mapping[str, Any], Any]],
              lever: Callable[[Mapping[str, Any], Any], list[str]], grid: Sequence[Any]) -> dict[str, Any]:
    """Each fold's value chosen on the other fold (gated recall minus the false-hit rate, the
    first of a tie), and the two folds' out-of-fold counts added, beside the shipped gate's
    (``grid[0]``) on the same questions."""
    folds = user_folds(data)
    chosen, out = [], [0, 0, 0.0, 0]
    for fold in (0, 1):
        def merit(value: Any) -> float:
            h, n, r, a = counts(data, folds, 1 - fold, lambda row: lever(row, value))
            return (r / a if a else 0.0) - (h / n if n else 0.0)
        best = max(grid, key=merit)  # max keeps the first of equal values
        chosen.append(best)
        out = [x + y for x, y in zip(out, counts(data, folds, fold, lambda row: lever(row, best)))]
    base = counts(data, folds, None, lambda row: lever(row, grid[0]))
    return {"chosen": chosen, "false_hits": out[0], "unanswerable": out[1],
            "gated_recall": out[2] / out[3] if out[3] else None,
            "shipped": {"false_hits": base[0], "gated_recall": base[2] / base[3] if base[3] else None},
            "answerable": out[3]}


def replay_matches_run(rows: Mapping[str, Mapping[str, Any]]) -> tuple[int, int]:
    """(questions whose shipped replay returns the run's judged ``retrieve()`` keys, questions
    with the run's keys recorded)."""
    same = total = 0
    for row in rows.values():
        if row.get("returned") is None:
            continue
        total += 1
        same += replay(row, row["kind"]) == row["returned"]
    return same, total


def load(paths: Sequence[Path]) -> dict[str, tuple[dict[str, Any], dict[str, float | None]]]:
    """Per data set: the probed rows and the ungated hybrid turn R@5 per question."""
    out: dict[str, tuple[dict[str, Any], dict[str, float | None]]] = {}
    for path in paths:
        results = json.loads(path.read_text(encoding="utf-8"))["results"]
        for ds, res in results.items():
            if not isinstance(res, dict) or "gate_probe" not in res:
                continue
            per_q = res.get("per_query", {}).get("hybrid", {})
            rows, ungated = out.setdefault(ds, ({}, {}))
            rows.update(res["gate_probe"])
            ungated.update({q: m.get("turn_r5") for q, m in per_q.items()})
    return out


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("probes", nargs="+", type=Path,
                        help="bench_recall --gate-probe --json files")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    missing = [p for p in args.probes if not p.is_file()]
    if missing:
        print(f"bench_gate_sizes: no such file {missing[0]}; make one with bench_recall.py "
              "--judge-every N --gate-probe --json FILE", file=sys.stderr)
        return 2
    data = load(args.probes)
    if not data:
        print("bench_gate_sizes: no gate probe in these files (run bench_recall with "
              "--gate-probe)", file=sys.stderr)
        return 2
    for ds, (rows, ungated) in data.items():
        same, total = replay_matches_run(rows)
        print(f"\n{ds}: {len(rows)} probed questions; the shipped replay returns what the run's "
              f"judged retrieve() returned for {same} of {total}")
        print(f"  {'kind rule':<11} {'exchange bar':>12} {'read as fact':>12} {'false hits':>11} "
              f"{'gated recall':>13} {'ungated R@5':>12}")
        signals = [s for s in EXCHANGE_SIGNALS
                   if s == "reader" or any(s in c for r in rows.values() for c in r["cands"])]
        for name, rule in KIND_RULES.items():
            for signal, bar in [(s, b) for s in signals for b in EXCHANGE_BARS]:
                s0 = score(rows, ungated, rule, exchange_min=bar, exchange_signal=signal)
                label = f"{signal} {bar:.2f}"
                print(f"  {name:<11} {label:>12} {s0['facts']:>12} "
                      f"{s0['false_hits']:>4} / {s0['unanswerable']:<4} "
                      f"{fmt(s0['gated_recall']):>13} {fmt(s0['ungated_r5']):>12}"
                      f"   ({s0['answerable']} answerable)")
    print("\nTwo more levers, each chosen on one half of the users and scored on the other "
          "(every data set pooled):")
    for name, lever, grid in (("judge bar for recall-cue questions", cue_judge, CUE_JUDGE_BARS),
                              ("reader's first, by a margin", reader_margin, MARGIN_SETTINGS)):
        r = cross_fit(data, lever, grid)
        print(f"  {name:<36} chosen {r['chosen'][0]} / {r['chosen'][1]}: false hits "
              f"{r['shipped']['false_hits']} -> {r['false_hits']} of {r['unanswerable']}, gated "
              f"recall {fmt(r['shipped']['gated_recall'])} -> {fmt(r['gated_recall'])} "
              f"({r['answerable']} answerable)")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
