"""Probe every gate signal once, then replay gates on the probe (issue 16, session 11).

    ./run.sh bench gate_replay --probe             # tuning split: ~40 min on 2 cores, model loaded
    ./run.sh bench gate_replay                     # replay the stored probe: seconds, no model

The probe asks, for the top 6 candidates of every tuning question (with memory, no hit,
general) that pass the gate's free checks, the reader (1 - P(unknown)), the judge with its old
worked examples (the article's 聚餐 / 戒咖啡 pair among them) and the judge as shipped, one
prompt kind at a time so the model's prompt cache keeps the shared prefix. It stores ids and
rounded probabilities only (``results/gate_probe_tune.json``). The replay then scores gates
without the model: relevant memories passed, a look-alike passed beside them, and false hits on
no-hit and general questions, per language. It approximates :func:`gya_memory.answer.gate.screen`
without ``newest_wins``.

The probe also asks the reader and the judge about each question with three neutral facts
(:data:`NEUTRAL`: "N/A", a fact true of everyone, an everyday liking), so a candidate's
probability can be read against what the model says with no real fact (contextual
calibration, Zhao et al. 2021): the replay's "normalised" gates pass a candidate by how far it
moves the model from its highest neutral answer (session 16). A second signal for the
reader's near misses (fact questions: the first candidate passes under the reader's bar when
the judge also says yes) is replayed too (session 17).
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable

from _shared import print_footer, probed_rows

RESULTS = Path(__file__).parent / "results" / "gate_probe_tune.json"
OLD_PAIR = {"en": ("Question: 周五部门聚会吃火锅，我点锅底该注意什么？ Fact: 这阵子口腔溃疡，吃不了辣 -> yes",
                   "Question: 今晚聚餐，我点饮料时该注意什么？ Fact: 最近在戒咖啡，想少喝一点 -> yes"),
            "zh": ("问题：周五部门聚会吃火锅，我点锅底该注意什么？ 事实：这阵子口腔溃疡，吃不了辣 -> yes",
                   "问题：今晚聚餐，我点饮料时该注意什么？ 事实：最近在戒咖啡，想少喝一点 -> yes")}
NEUTRAL = {"zh": ("N/A", "有一个名字", "喜欢听音乐"), "en": ("N/A", "Has a name", "Likes listening to music")}
"""Facts that answer no question: the per-question baseline of the normalised gates."""


def probe(out: Path) -> None:
    from gya_memory.answer import judge as J
    from gya_memory.answer.gate import Gate, floor_for
    from gya_memory.answer.llm import get_llm
    from gya_memory.answer.questions import question_kind
    from gya_memory.lab.scenarios import load_acceptance, store_scenarios
    from gya_memory.semantic.embeddings import get_embedder

    old = (J.JUDGE_SYSTEM.replace(*OLD_PAIR["en"]), J.JUDGE_SYSTEM_ZH.replace(*OLD_PAIR["zh"]))
    assert old != (J.JUDGE_SYSTEM, J.JUDGE_SYSTEM_ZH), "the judge's examples changed: update OLD_PAIR"

    def judge_old(llm: Any, q: str, f: str) -> float:
        m = J.judge_messages(q, f)  # the shipped prompt with the old examples' system text
        m[0] = {"role": "system", "content": old[m[0]["content"] == J.JUDGE_SYSTEM_ZH]}
        p = llm.next_token_probs(m)
        y, n = p.get("yes", 0.0), p.get("no", 0.0)
        return y / (y + n) if y + n > 0 else 0.5

    scenarios = load_acceptance("tune")
    embedder, llm = get_embedder(), get_llm()
    stores = store_scenarios(scenarios, embedder)
    gate, rows = Gate(), []
    for s in scenarios:
        memory, ids = stores[s.user], {m.text: m.id for m in s.memories}
        for cond, q in (("answerable", s.question), ("no_hit", s.no_hit_question),
                        ("general", s.general_question)):
            ranked = sorted(memory.candidates(q, top_k=6), key=lambda h: -float(h.score))
            kind = question_kind(q, known=[h.text for h in ranked])
            floor = floor_for(embedder, q)
            # the gate without the model: every candidate its free checks keep passes
            checked = gate.apply(q, ranked, floor=floor, judge=None, pool=len(ranked), kind=kind)
            cands = [{"id": ids.get(d.hit.text, "?"), "cos": round(float(d.hit.score), 4),
                      "drop": None if d.passed else d.reason} for d in checked]
            signals: tuple[tuple[str, Callable[[str], float]], ...] = (
                ("reader", lambda t: J.reader_relevance(llm, q, t)),
                ("judge_old", lambda t: judge_old(llm, q, t)),
                ("judge", lambda t: J.judge_relevance(llm, q, t)))
            for key, score in signals:  # one prompt kind at a time: the prompt cache holds
                for h, c in zip(ranked, cands):
                    if c["drop"] is None:
                        c[key] = round(score(h.text), 4)
            rows.append({"scenario": s.id, "lang": s.lang, "cond": cond, "kind": kind,
                         "relevant": list(s.relevant) if cond == "answerable" else [],
                         "cands": cands, "question": q})
        print(s.id, flush=True)
    for key, read in (("reader", J.reader_relevance), ("judge", J.judge_relevance)):
        for row in rows:  # one prompt kind at a time again
            neutral = row.setdefault("neutral", {})
            neutral[key] = [round(read(llm, row["question"], f), 4) for f in NEUTRAL[row["lang"]]]
    for row in rows:
        del row["question"]  # ids and numbers only: the questions stay in the data set
    out.write_text(json.dumps(rows, ensure_ascii=False, indent=1), "utf-8")


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def replay(rows: list[dict[str, Any]], judge: str = "judge", judge_min: float = 0.2,
           fact_min: float = 0.98, general_min: float = 0.9, pool: int = 3,
           normalised: bool = False, second: tuple[float, float] | None = None) -> dict[str, tuple[int, ...]]:
    """(relevant passes, look-alike beside, no-hit false hits, general false hits, questions)
    per language, for one gate. ``normalised``: the bars are on the logit of a candidate's
    probability minus the logit of the question's highest neutral one (:data:`NEUTRAL`).
    ``second = (reader_min, judge_min)``: for fact questions, the first candidate also passes
    under the reader's bar when its reader P is at least ``reader_min`` and the judge says yes
    with at least ``judge_min`` (a second signal for the reader's near misses)."""
    def passing(r: dict[str, Any]) -> list[str]:
        kept = [c for c in r["cands"] if c["drop"] is None][:pool if r["kind"] == "advice" else 3]
        key, bar = {"fact": ("reader", fact_min), "advice": (judge, judge_min),
                    "general": (judge, general_min)}[r["kind"]]
        if not normalised:
            return [c["id"] for k, c in enumerate(kept) if c[key] >= bar or (
                second is not None and r["kind"] == "fact" and k == 0
                and c["reader"] >= second[0] and c["judge"] >= second[1])]
        base = logit(max(r["neutral"]["reader" if key == "reader" else "judge"]))
        return [c["id"] for c in kept if logit(c[key]) - base >= bar]

    out = {}
    for lang in ("zh", "en"):
        of = {c: [r for r in rows if r["lang"] == lang and r["cond"] == c]
              for c in ("answerable", "no_hit", "general")}
        a = [(r, passing(r)) for r in of["answerable"]]
        out[lang] = (sum(any(i in r["relevant"] for i in p) for r, p in a),
                     sum(any(i not in r["relevant"] for i in p) for r, p in a),
                     sum(bool(passing(r)) for r in of["no_hit"]),
                     sum(bool(passing(r)) for r in of["general"]), len(a))
    return out


def show(name: str, replayed: dict[str, tuple[int, ...]]) -> None:
    """One gate's line of the report."""
    print(f"  {name:40} " + "   ".join(
        f"{lang}: {v[0]:2} / {v[1]:2} / {v[2]}, {v[3]}" for lang, v in replayed.items()))


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    rows = probed_rows(argv, __doc__, RESULTS, probe, "probe with the model first")
    print(f"{len(rows)} questions (tuning split); relevant passes / look-alike beside / "
          "false hits no-hit, general (of 24 each)")
    for name, kw in (("old examples, P(yes) >= 0.3", {"judge": "judge_old", "judge_min": 0.3}),
                     ("fresh example, P(yes) >= 0.3", {"judge_min": 0.3}),
                     ("fresh example, P(yes) >= 0.2 (shipped)", {}),
                     ("old examples, P(yes) >= 0.2", {"judge": "judge_old"}),
                     ("fresh example, >= 0.2, pool 6", {"pool": 6})):
        show(name, replay(rows, **kw))  # type: ignore[arg-type]
    print("fact questions: the first candidate also passes with reader >= a and judge >= b:")
    for second in ((0.5, 0.5), (0.8, 0.5), (0.8, 0.7), (0.9, 0.5)):
        show(f"reader >= {second[0]:g} and judge >= {second[1]:g}", replay(rows, second=second))
    if all("neutral" in row for row in rows):
        print("normalised against the question's highest neutral fact (logit difference; "
              "reader for fact questions, judge for advice and general):")
        for fact, advice in ((2.0, -2.0), (3.0, -1.0), (4.0, -0.5), (2.0, 0.0)):
            show(f"reader +{fact:g}, judge {advice:+g}, general +2",
                 replay(rows, normalised=True, fact_min=fact, judge_min=advice, general_min=2.0))
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
