"""The answer prompt alone, on fixed placements of the acceptance set (issue 16).

    ./run.sh bench answer_prompt                                # tune split, both prompts, both placements
    ./run.sh bench answer_prompt --split test --prompts shipped --placements given

The gate decides *what* the model sees; this benchmark holds that fixed and changes only *how*
it is asked, so the two can be told apart. For the question of every scenario that needs one
memory (``Scenario.question``), the model gets:

- ``given``: the relevant memory alone (a perfect gate: how often can the model use a memory
  it is handed?);
- ``beside``: the relevant memory with the two highest-ranked other memories by e5 cosine that
  pass the ``about`` rule, in ranking order (what a gate that places its top 3 sends).

Prompts: ``shipped`` (the defaults of :mod:`gya_memory.answer.context`) and ``from_fact`` (tried in
issue 16 and not shipped: "answer me as 'you'; if one of these facts changes the answer,
start from it", with two or three sentences instead of one or two). The outcome is
:func:`gya_memory.lab.acceptance.outcome` (``used``: the answer states the memory's
``must_state``). Results go to ``--json`` (ids, outcomes and answers).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

from _shared import print_footer

from gya_memory.answer import context
from gya_memory.answer.about import fits
from gya_memory.lab.acceptance import outcome
from gya_memory.answer.context import Policy, assemble
from gya_memory.semantic.embeddings import get_embedder
from gya_memory.answer.gate import about_of_hit
from gya_memory.answer.llm import get_llm
from gya_memory.answer.questions import question_kind
from gya_memory.lab.scenarios import load_acceptance, store_scenarios

SHIPPED = copy.deepcopy(context._TEXT)
FROM_FACT = {
    "zh": {"after": "用“你”称呼我，直接回答。如果上面哪条情况会改变答案，先点明它（比如“你……，所以……”）。",
           "system": "你是一个贴心的助手。回答要简短，两三句话。"},
    "en": {"after": "Answer me directly, as \"you\". If one of these facts changes the answer, "
                    "start from it (\"Since you ..., ...\").",
           "system": "You are a helpful assistant. Keep answers short: two or three sentences."}}
PROMPTS = ("shipped", "from_fact")
PLACEMENTS = ("given", "beside")


def use_prompt(name: str) -> None:
    """Put the ``after`` line of prompt ``name`` in place (the system message goes per call)."""
    context._TEXT.clear()
    context._TEXT.update(copy.deepcopy(SHIPPED))
    if name == "from_fact":
        for lang, texts in FROM_FACT.items():
            context._TEXT[lang]["after"] = texts["after"]


def placed(scenario, memory, how: str) -> list:
    """The hits the model gets: the relevant one, alone or beside the top two others."""
    hits = memory.candidates(scenario.question, top_k=len(scenario.memories))
    kind = question_kind(scenario.question)
    relevant = set(scenario.relevant_texts)
    if how == "given":
        return [h for h in hits if h.text in relevant][:1]
    others = [h for h in hits if h.text not in relevant and fits(about_of_hit(h), scenario.question, kind)][:2]
    keep = {h.text for h in others} | relevant
    return [h for h in hits if h.text in keep][:3]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("tune", "test"), default="tune")
    parser.add_argument("--prompts", default=",".join(PROMPTS))
    parser.add_argument("--placements", default=",".join(PLACEMENTS))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    prompts = [p for p in args.prompts.split(",") if p]
    placements = [p for p in args.placements.split(",") if p]
    for name, allowed in (("prompt", PROMPTS), ("placement", PLACEMENTS)):
        for value in (prompts if name == "prompt" else placements):
            if value not in allowed:
                parser.error(f"unknown {name} {value!r}; choose from {', '.join(allowed)}")
    scenarios = load_acceptance(args.split)
    stores = store_scenarios(scenarios, get_embedder())
    llm = get_llm()
    rows = []
    for prompt in prompts:
        use_prompt(prompt)
        for how in placements:
            for s in scenarios:
                hits = placed(s, stores[s.user], how)
                system = FROM_FACT[s.lang]["system"] if prompt == "from_fact" else None
                a = assemble(s.question, hits, Policy(top_k=3, budget_chars=None), system=system)
                reply = llm.chat(a.messages, max_tokens=160)
                label, _ = outcome(s, "memory", reply.text, [h.text for h in hits], s.question,
                                   s.question_kind or "advice")
                ids = {m.text: m.id for m in s.memories}
                rows.append({"prompt": prompt, "placement": how, "scenario": s.id, "lang": s.lang,
                             "kind": s.question_kind, "placed": [ids[h.text] for h in hits],
                             "outcome": label, "answer": reply.text})
                print(f"{prompt:8} {how:7} {s.id} {label:9} {reply.text[:70]!r}", flush=True)
    use_prompt("shipped")
    print("\nused the relevant memory (answers that state it):")
    for prompt in prompts:
        for how in placements:
            cells = []
            for lang in ("zh", "en"):
                mine = [r for r in rows if (r["prompt"], r["placement"], r["lang"]) == (prompt, how, lang)]
                cells.append(f"{lang} {sum(r['outcome'] == 'used' for r in mine)}/{len(mine)}")
            print(f"  {prompt:8} {how:7} " + "   ".join(cells))
    if args.json:
        args.json.write_text(json.dumps({"split": args.split, "rows": rows}, ensure_ascii=False,
                                        indent=1), "utf-8")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
