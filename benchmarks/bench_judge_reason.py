"""A short reason before the judge's verdict (issue 16, session 16).

    ./run.sh bench judge_reason --probe      # tuning split: ~26 min on 2 cores, model loaded
    ./run.sh bench judge_reason              # score the stored replies: no model

The issue's last untried gate lever: the judge writes one short reason, then its verdict,
instead of one token (its examples show the form: "Reason: a sprained ankle changes how to
run tomorrow. Verdict: yes"). For every advice and general question of the tuning split, the
candidates the shipped gate judges (the pool of 3 after the free checks, from the stored gate
probe ``results/gate_probe_tune.json``) are asked again this way; the replies are stored
(``results/judge_reason_tune.json``: ids, the shipped judge's P(yes), the reply, the verdict
read from its last yes / no). The report compares relevant passes, a look-alike passed beside
the relevant memory, the relevant memory passed *alone* (what the answer step uses best), and
false hits on general questions, with the shipped judge, the reasoned verdict, and both.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable

from _shared import print_footer, probed_rows

from gya_memory.answer.judge import JUDGE_SYSTEM

RESULTS = Path(__file__).parent / "results" / "judge_reason_tune.json"
GATE_PROBE = Path(__file__).parent / "results" / "gate_probe_tune.json"

SYS_EN = (
    JUDGE_SYSTEM.split("\nQuestion:")[0].removesuffix(".")  # yes / no as the shipped judge reads them
    + ", or it would not change the advice.\n"
    "First give one short reason, then the verdict.\n"
    "Question: Any tips for my run tomorrow? Fact: Sprained left ankle last week\n"
    "Reason: a sprained ankle changes how to run tomorrow. Verdict: yes\n"
    "Question: What does my wife do for a living? Fact: Works as a dentist in Leeds\n"
    "Reason: this is the user's own job, not the wife's. Verdict: no\n"
    "Question: Can I have the cheesecake? Fact: Lactose intolerant\n"
    "Reason: cheesecake has milk, and the user can't digest lactose. Verdict: yes\n"
    "Question: What brand is my son's bike? Fact: Son rides his bike to school\n"
    "Reason: it mentions the bike but not its brand. Verdict: no\n"
    "Question: Which laptop should I buy for school? Fact: Has a sister in Boston\n"
    "Reason: the sister does not change which laptop is right. Verdict: no"
)
SYS_ZH = (
    "用户问了一个问题。你看到一条记住的、关于用户的事实。回答这个问题需要这条事实吗？\n"
    "yes：事实正好说出了问题问的东西；或者它是用户本人的情况（健康、饮食、作息、计划、装备），会改变正确的建议。\n"
    "no：事实说的是别人或别的东西（另一个人、另一只宠物、另一件物品），或者只是同一个话题，却没有问题问的那个细节；"
    "或者它不会改变建议。\n"
    "先用一句话说理由，再给结论。\n"
    "问题：明天跑步有什么要注意的？ 事实：上周左脚踝扭伤了\n"
    "理由：脚踝扭伤会改变明天怎么跑。结论：yes\n"
    "问题：我老婆是做什么工作的？ 事实：在牙科诊所当医生\n"
    "理由：这是用户自己的工作，不是老婆的。结论：no\n"
    "问题：芝士蛋糕我能吃吗？ 事实：乳糖不耐受\n"
    "理由：芝士蛋糕含奶，用户消化不了乳糖。结论：yes\n"
    "问题：我儿子的自行车是什么牌子？ 事实：儿子每天骑车上学\n"
    "理由：提到了自行车，但没有说牌子。结论：no\n"
    "问题：上学用的笔记本电脑买哪款好？ 事实：姐姐住在杭州\n"
    "理由：姐姐住哪里不会改变该买哪款电脑。结论：no"
)


def verdict(reply: str) -> str | None:
    """The last "yes" or "no" of a reply (None if it has neither)."""
    found = re.findall(r"\b(yes|no)\b", reply.lower())
    return found[-1] if found else None


def probe(out: Path) -> None:
    from gya_memory.answer.llm import get_llm
    from gya_memory.lab.scenarios import load_acceptance

    gate_rows = json.loads(GATE_PROBE.read_text("utf-8"))
    scenarios = {s.id: s for s in load_acceptance("tune")}
    llm, rows = get_llm(), []
    for lang in ("zh", "en"):  # one system prompt at a time: the prompt cache holds
        for r in gate_rows:
            if r["lang"] != lang or r["kind"] == "fact" or r["cond"] == "no_hit":
                continue
            s = scenarios[r["scenario"]]
            q = s.question if r["cond"] == "answerable" else s.general_question
            cands = []
            for c in [c for c in r["cands"] if c["drop"] is None][:3]:
                fact = s.text_of(c["id"])
                user = f"问题：{q} 事实：{fact}" if lang == "zh" else f"Question: {q} Fact: {fact}"
                reply = llm.chat([{"role": "system", "content": SYS_ZH if lang == "zh" else SYS_EN},
                                  {"role": "user", "content": user}], max_tokens=60).text
                cands.append({"id": c["id"], "judge": c["judge"], "reply": reply,
                              "v": verdict(reply)})
            rows.append({"scenario": r["scenario"], "lang": lang, "cond": r["cond"],
                         "kind": r["kind"], "relevant": r["relevant"], "cands": cands})
            print(r["scenario"], r["cond"], flush=True)
    out.write_text(json.dumps(rows, ensure_ascii=False, indent=1), "utf-8")


def shipped(row: dict[str, Any], cand: dict[str, Any]) -> bool:
    return cand["judge"] >= (0.2 if row["kind"] == "advice" else 0.9)


GATES: dict[str, Callable[[dict[str, Any], dict[str, Any]], bool]] = {
    "shipped judge (P(yes) >= 0.2, general >= 0.9)": shipped,
    "reason, then its verdict": lambda r, c: c["v"] == "yes",
    "both": lambda r, c: c["v"] == "yes" and shipped(r, c),
}


def report(rows: list[dict[str, Any]]) -> dict[str, dict[str, tuple[int, ...]]]:
    """Per language and gate: (relevant passes, look-alike beside it, relevant alone,
    answerable questions, general false hits, general questions)."""
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for lang in ("zh", "en"):
        out[lang] = {}
        for name, ok in GATES.items():
            rel = look = alone = n = fh = g = 0
            for r in rows:
                if r["lang"] != lang:
                    continue
                got = [c["id"] for c in r["cands"] if ok(r, c)]
                if r["cond"] == "answerable":
                    hit = any(i in r["relevant"] for i in got)
                    other = any(i not in r["relevant"] for i in got)
                    n, rel, look, alone = n + 1, rel + hit, look + (hit and other), alone + (hit and not other)
                else:
                    g, fh = g + 1, fh + bool(got)
            out[lang][name] = (rel, look, alone, n, fh, g)
    return out


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    rows = probed_rows(argv, __doc__, RESULTS, probe, "ask the model first (~26 min)")
    print("tuning split, advice and general questions: relevant passes / a look-alike beside it / "
          "relevant alone (of the answerable) · false hits on general questions")
    for lang, gates in report(rows).items():
        for name, (rel, look, alone, n, fh, g) in gates.items():
            print(f"  {lang}  {name:48} {rel:2} / {look:2} / {alone:2} of {n}   general {fh:2} of {g}")
        unparsed = sum(c["v"] is None for r in rows if r["lang"] == lang for c in r["cands"])
        print(f"  {lang}  replies with no verdict: {unparsed}")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
