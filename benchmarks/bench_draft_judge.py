"""The draft as the judge's input (issue 16, session 16).

    ./run.sh bench draft_judge --probe       # tuning split: ~2 min on 2 cores, model loaded
    ./run.sh bench draft_judge               # score the stored probe: no model

For every answerable tuning question whose kind is advice, the judge reads the question, the
draft the model wrote with no memory (stored by ``bench_draft_rank --probe`` in
``results/draft_rank_tune.json``) and one candidate: "should the answer change because of
this fact?" (first-token P(yes), one prefill per candidate; question and draft come first, so
a question's candidates share a cached prefix). Candidates: those the gate's free checks keep
among the top 6 (``results/gate_probe_tune.json``). Stored: ids, cosine, the shipped judge's
P(yes) and this one (``results/draft_judge_tune.json``). The report gives, per language, the
pairwise AUC of the relevant memory against the other candidates, how often it ranks first and
in the first 3 under each signal. End to end (docs/acceptance.md, "The draft as the judge's input") it
placed no more relevant memories and was not kept.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from _shared import print_footer, probed_rows

RESULTS = Path(__file__).parent / "results" / "draft_judge_tune.json"
GATE_PROBE = Path(__file__).parent / "results" / "gate_probe_tune.json"
DRAFTS = Path(__file__).parent / "results" / "draft_rank_tune.json"

SYS = {
 "en": ("A user asked a question. An assistant who knows nothing about the user wrote the answer "
        "below. You see one fact remembered about the user. Should the answer change because of "
        "this fact? yes: the fact is about the user (or someone the question is about) and makes "
        "the answer wrong, incomplete or risky for this user. no: the answer stays right; the fact "
        "is about something else or does not matter here.\n"
        "Question: Any tips for my run tomorrow? Answer: Warm up, keep a steady pace and drink water. "
        "Fact: Sprained left ankle last week -> yes\n"
        "Question: Which laptop should I buy for school? Answer: A light laptop with a good battery. "
        "Fact: Has a sister in Boston -> no\n"
        "Question: Can I have the cheesecake? Answer: Sure, enjoy it in moderation. Fact: Lactose "
        "intolerant -> yes\n"
        "Reply with one word: yes or no."),
 "zh": ("用户问了一个问题。一个完全不了解用户的助手写了下面的回答。你看到一条记住的、关于用户的事实。"
        "因为这条事实，回答应该改变吗？yes：事实说的是用户（或问题问到的人），会让这个回答对这位用户来说不对、"
        "不完整或有风险。no：回答仍然正确；事实说的是别的，或者在这里无关紧要。\n"
        "问题：明天跑步有什么要注意的？ 回答：先热身，保持匀速，多喝水。 事实：上周左脚踝扭伤了 -> yes\n"
        "问题：上学用的笔记本电脑买哪款好？ 回答：选轻薄、续航好的。 事实：姐姐住在杭州 -> no\n"
        "问题：芝士蛋糕我能吃吗？ 回答：可以，适量就好。 事实：乳糖不耐受 -> yes\n"
        "只回答一个词：yes 或 no。"),
}


def messages(lang: str, question: str, draft: str, fact: str) -> list[dict[str, str]]:
    q, d, f = (" ".join(x.split()) for x in (question, draft, fact))
    user = (f"问题：{q} 回答：{d} 事实：{f} ->" if lang == "zh"
            else f"Question: {q} Answer: {d} Fact: {f} ->")
    return [{"role": "system", "content": SYS[lang]}, {"role": "user", "content": user}]


def probe(out: Path) -> None:
    from gya_memory.answer.llm import get_llm
    from gya_memory.lab.scenarios import load_acceptance

    gate_rows = json.loads(GATE_PROBE.read_text("utf-8"))
    drafts = {r["scenario"]: r["draft"] for r in json.loads(DRAFTS.read_text("utf-8"))}
    scenarios = {s.id: s for s in load_acceptance("tune")}
    llm, rows = get_llm(), []
    for lang in ("zh", "en"):
        for r in gate_rows:
            if r["lang"] != lang or r["cond"] != "answerable" or r["kind"] != "advice":
                continue
            s = scenarios[r["scenario"]]
            cands = []
            for c in r["cands"]:
                if c["drop"] is None:
                    p = llm.next_token_probs(messages(lang, s.question, drafts[s.id], s.text_of(c["id"])))
                    y, n = p.get("yes", 0.0), p.get("no", 0.0)
                    cands.append({"id": c["id"], "cos": c["cos"], "judge": c["judge"],
                                  "dj": round(y / (y + n) if y + n else 0.5, 4)})
            rows.append({"scenario": s.id, "lang": lang, "relevant": r["relevant"], "cands": cands})
            print(s.id, flush=True)
    out.write_text(json.dumps(rows, ensure_ascii=False, indent=1), "utf-8")


def report(rows: list[dict[str, Any]]) -> dict[str, dict[str, tuple[float | None, int, int, int]]]:
    """Per language and signal: (pairwise AUC, relevant first, relevant in the first 3,
    questions with the relevant memory among the candidates)."""
    out: dict[str, dict[str, tuple[float | None, int, int, int]]] = {}
    for lang in ("zh", "en"):
        has = [r for r in rows if r["lang"] == lang
               and any(c["id"] in r["relevant"] for c in r["cands"])]
        out[lang] = {}
        for key in ("cos", "judge", "dj"):
            win = pairs = first = top3 = 0
            for r in has:
                ranked = sorted(r["cands"], key=lambda c: -c[key])
                first += ranked[0]["id"] in r["relevant"]
                top3 += any(c["id"] in r["relevant"] for c in ranked[:3])
                for a in (c[key] for c in r["cands"] if c["id"] in r["relevant"]):
                    for b in (c[key] for c in r["cands"] if c["id"] not in r["relevant"]):
                        pairs += 1
                        win += (a > b) + 0.5 * (a == b)
            out[lang][key] = (round(win / pairs, 3) if pairs else None, first, top3, len(has))
    return out


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    rows = probed_rows(argv, __doc__, RESULTS, probe, "ask the model first (~2 min)")
    names = {"cos": "cosine to the question (shipped ranking)", "judge": "yes/no judge",
             "dj": "the judge reading the draft"}
    print("tuning split, advice questions: AUC of the relevant memory / first / in the first 3")
    for lang, signals in report(rows).items():
        for key, (auc, first, top3, n) in signals.items():
            print(f"  {lang}  {names[key]:42} {auc} / {first} / {top3}  (of {n})")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
