"""The acceptance check end to end with context-aware decoding of the answer (issue 16).

    ./run.sh bench answer_decoding --alpha 0.5 --split tune --conditions memory,no_hit --json out.json

Many answers ignore a memory the gate placed ("Yes, that fits your week." beside "plays
pickleball Thursday nights"): the 1.5B model's prior for a generic answer outweighs the fact.
Context-aware decoding (Shi et al. 2023, "Trusting Your Evidence: Hallucinate Less with
Context-aware Decoding", arXiv 2305.14739) scores each next token by how much the context
raises it: ``(1 + alpha) * log p(token | memories, question) - alpha * log p(token | question)``,
among the tokens at least ``beta`` times as likely as the greedy one with the memories (the
plausibility bar that keeps the contrast from picking rare tokens). Here the first ``--tokens``
tokens of an answer that carries memories are picked so (the start of a short answer decides
whether it builds on the fact), the rest is greedy as before; answers without memories are
unchanged. Nothing else changes: the same candidates, gate, prompt and outcome rules.

llama.cpp gives the top ``K`` log-probabilities of one next token per request; each picked
token costs one request with the memories and one without, each in its own slot with the
prompt cache on (so a step reads one new token). A third slot is added for the prompt without
memories, so the judge's cached instructions stay in theirs. A token outside the top ``K``
without memories gets the lowest log-probability of that list (it is at most that likely).

The prompt without memories is the same messages with the memory block, its intro and its
closing line removed (``without_memories``): "My question: ..." alone, no no-hit note.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

STOP = {151643: "<|endoftext|>", 151645: "<|im_end|>"}  # Qwen2.5's stop tokens: id -> text
TOP_K = 20


def without_memories(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with the memory block taken out of the message that carries it: what
    follows the block's closing line and the blank line after it (the question) is kept."""
    from gya_memory.answer.context import CLOSE

    out = []
    for m in messages:
        content = str(m["content"])
        if CLOSE in content:
            content = content.split(CLOSE, 1)[1].split("\n\n", 1)[-1]
        out.append({**m, "content": content})
    return out


def contrast(with_memories: Mapping[int, float], without: Mapping[int, float], *,
             alpha: float, beta: float) -> int:
    """The token to write: among ``with_memories``' tokens (id -> log-probability) at least
    ``beta`` times as likely as its best, the highest ``(1 + alpha) * lp - alpha * lp0``,
    where ``lp0`` is the token's log-probability without memories (the lowest listed one if
    it is not listed). Ties go to the token more likely with the memories."""
    if not with_memories or not without:
        raise ValueError("both distributions need at least one token")
    best = max(with_memories.values())
    unlisted = min(without.values())
    plausible = {t: lp for t, lp in with_memories.items() if lp >= best + math.log(beta)}
    return max(plausible, key=lambda t: ((1 + alpha) * plausible[t]
                                         - alpha * without.get(t, unlisted), plausible[t]))


def top_tokens(engine: Any, prompt: str, ids: list[int], slot: int) -> dict[int, float]:
    """The ``TOP_K`` likeliest next tokens (id -> log-probability) after ``prompt`` and
    ``ids``, read in the engine's ``slot`` (its prompt cache kept per slot)."""
    data = engine.server.handle_completions({
        "prompt": [prompt, *ids] if ids else prompt, "n_predict": 1, "n_probs": TOP_K,
        "cache_prompt": True, "id_slot": slot, "temperature": 0, "seed": 0})
    top = data["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    return {int(t["id"]): float(t["logprob"]) for t in top}


class ContrastiveReplies:
    """``MemoryAgent.reply_to`` with the first ``tokens`` tokens picked by :func:`contrast`
    when the messages carry memories; a log of what it did in :attr:`log`."""

    def __init__(self, alpha: float, beta: float, tokens: int, plain: Any) -> None:
        self.alpha, self.beta, self.tokens, self.plain = alpha, beta, tokens, plain
        self.log: list[dict[str, Any]] = []

    def __call__(self, agent: Any, messages: list[dict[str, Any]]) -> Any:
        from gya_memory.answer.context import OPEN
        from gya_memory.answer.llm.interface import Reply

        if self.alpha <= 0 or not any(OPEN in str(m["content"]) for m in messages):
            return self.plain(agent, messages)
        start = time.perf_counter()
        llm = agent.llm
        engine = llm._engine()
        prompt, bare = llm.prompt_text(messages), llm.prompt_text(without_memories(messages))
        ids: list[int] = []
        changed = 0
        stopped = False
        for _ in range(self.tokens):
            near = top_tokens(engine, prompt, ids, 0)
            far = top_tokens(engine, bare, ids, 2)
            token = contrast(near, far, alpha=self.alpha, beta=self.beta)
            changed += near[token] < max(near.values())
            if token in STOP:
                stopped = True
                break
            ids.append(token)
        text = engine.post("/detokenize", {"tokens": ids})["content"] if ids else ""
        if not stopped:
            data = engine.server.handle_completions({
                "prompt": [prompt, *ids], "n_predict": agent.max_tokens - len(ids),
                "cache_prompt": True, "id_slot": 0, "temperature": 0, "seed": 0,
                "stop": list(STOP.values())})
            text += data["choices"][0]["text"]
        seconds = time.perf_counter() - start
        self.log.append({"question": messages[-1]["content"].rsplit("\n\n", 1)[-1],
                         "changed_tokens": changed, "tokens": len(ids), "seconds": round(seconds, 2)})
        return Reply(text=text.strip(), model=llm.name, prompt_tokens=0,
                     completion_tokens=len(ids), latency_s=seconds)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alpha", type=float, default=0.5, help="0: the shipped greedy answer")
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--tokens", type=int, default=12)
    args, rest = parser.parse_known_args(argv)
    if args.alpha < 0 or not 0 < args.beta <= 1 or args.tokens < 1:
        parser.error("--alpha >= 0, 0 < --beta <= 1 and --tokens >= 1")

    import xllamacpp

    from gya_memory.answer import agent
    from gya_memory.answer.llm import local
    from gya_memory.lab import acceptance

    server = xllamacpp.Server

    def three_slots(params: Any) -> Any:  # answers, the judge, and answers without memories
        params.n_parallel = 3
        params.n_ctx = 3 * local.N_CTX
        return server(params)

    xllamacpp.Server = three_slots
    replies = ContrastiveReplies(args.alpha, args.beta, args.tokens, agent.MemoryAgent.reply_to)
    agent.MemoryAgent.reply_to = lambda self, messages: replies(self, messages)  # type: ignore[method-assign]
    code = acceptance.main(rest)
    if replies.log:
        changed = sorted(r["changed_tokens"] for r in replies.log)
        print(f"contrastive answers: {len(changed)}; tokens other than the greedy one, median "
              f"{changed[len(changed) // 2]}, max {changed[-1]}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
