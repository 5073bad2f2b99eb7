"""What else was tried for the retrieval gate (issue 8): every score a single threshold could
use, per (question, memory), and how well each separates answerable from no-hit questions.
``python -m gya_memory.lab.evaluation --features`` prints the table; none beat chance here.
Also the graded 0-3 judge of issue 16 (:func:`graded_relevance`), measured and not kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from gya_memory.answer.judge import ProbabilityModel, pair_messages
from gya_memory.lab.scenarios import Scenario


def _mean(values: Sequence[Any]) -> float:
    values = [float(v) for v in values]
    return sum(values) / len(values) if values else float("nan")


def load_background() -> dict[str, list[str]]:
    """The background memories (``data/background_memories.json``): 120 short statements per
    language about many imaginary users, for per-query score normalisation."""
    raw = resources.files("gya_memory.data").joinpath("background_memories.json").read_text("utf-8")
    data = json.loads(raw)
    return {"zh": list(data["zh"]), "en": list(data["en"])}


def gate_features(scenarios: Sequence[Scenario], embedder: Any) -> Any:
    """One row per (question, memory) with every score a gate could threshold:

    - ``cosine``: the raw similarity;
    - ``z``: the cosine as a z-score against the question's similarities to the background
      memories of its language (per-query normalisation);
    - ``centred``: the cosine after subtracting the background's mean vector from both
      sides (mean-centring, which undoes some of e5's squeezed range);
    - ``margin``: the cosine minus the best *other* memory's (top-1 against the rest);
    - ``overlap``: the share of the question's content words found in the memory, and
      ``agree``: 1 when the memory is first by both cosine and overlap (dense and lexical
      agree).
    """
    import numpy as np
    import pandas as pd

    from gya_memory.lab.labelled import lexical_overlap

    background = load_background()
    bg = {lang: embedder.embed_documents(texts) for lang, texts in background.items()}
    mean = {lang: v.mean(axis=0) for lang, v in bg.items()}
    rows = []
    for s in scenarios:
        docs = embedder.embed_documents([m.text for m in s.memories])
        for kind, question in (("answerable", s.question), ("no_hit", s.no_hit_question)):
            q = embedder.embed_query(question)
            cosine = docs @ q
            ref = bg[s.lang] @ q
            z = (cosine - ref.mean()) / ref.std()
            c_docs = docs - mean[s.lang]
            c_q = q - mean[s.lang]
            centred = (c_docs @ c_q) / (np.linalg.norm(c_docs, axis=1) * np.linalg.norm(c_q))
            overlap = np.array([lexical_overlap(question, m.text) for m in s.memories])
            for i, m in enumerate(s.memories):
                others = np.delete(cosine, i)
                rows.append({
                    "scenario": s.id, "lang": s.lang, "split": s.split, "kind": kind,
                    "memory": m.id, "relevant": kind == "answerable" and m.id in s.relevant,
                    "cosine": float(cosine[i]), "z": float(z[i]), "centred": float(centred[i]),
                    "margin": float(cosine[i] - others.max()), "overlap": float(overlap[i]),
                    "agree": float(i == int(np.argmax(cosine)) == int(np.argmax(overlap))
                                   and overlap[i] > 0),
                })
    return pd.DataFrame(rows)


def feature_separation(features: Any, columns: Sequence[str] = (
        "cosine", "z", "centred", "margin", "overlap", "agree")) -> Any:
    """How well one threshold on each score separates questions with an answer from no-hit
    questions, per language: the relevant memory's score on answerable questions against
    the best memory's score on no-hit questions. ``AUC`` 0.5 is chance; ``best balanced``
    is the mean of (relevant passes) and (no false hit) at the best threshold."""
    import pandas as pd

    out = []
    for column in columns:
        for lang in ("zh", "en"):
            f = features[features["lang"] == lang]
            pos = f[f["relevant"]].groupby("scenario")[column].max().to_numpy()
            neg = f[f["kind"] == "no_hit"].groupby("scenario")[column].max().to_numpy()
            pairs = [(p > n) + 0.5 * (p == n) for p in pos for n in neg]
            best = max(((pos >= t).mean() + (neg < t).mean()) / 2
                       for t in sorted(set(pos) | set(neg)))
            out.append({"score": column, "language": lang, "AUC": _mean(pairs),
                        "best balanced": float(best)})
    return pd.DataFrame(out).set_index(["score", "language"]).round(3)


# -- the graded judge (issue 16): measured on the tuning split, not kept -----------------------
GRADED_SYSTEM = (
    "A user asks a question. You see one fact remembered about the user. Grade how much the "
    "answer needs this fact.\n"
    "3: the fact states exactly what is asked (the same person, the same thing, the same "
    "detail), or it is about the user and clearly changes the right advice.\n"
    "2: the fact is about the user and would help the answer a little.\n"
    "1: the same topic, but another person, another pet or item, a different detail than "
    "the one asked, an old fact that a newer one replaced, or a plan when the question asks "
    "what was done.\n"
    "0: unrelated.\n"
    "Question: What does my wife do for a living? Fact: Works as a dentist in Leeds -> 1\n"
    "Question: Any tips for my run tomorrow? Fact: Sprained left ankle last week -> 3\n"
    "Question: Which hotel did I stay at in Rome? Fact: Wants to visit Rome next spring -> 1\n"
    "Question: Can I have the cheesecake? Fact: Lactose intolerant -> 3\n"
    "Question: What brand is my son's bike? Fact: Son rides his bike to school -> 1\n"
    "Question: Where should we go for dinner on Friday? Fact: Lives in Leeds city centre -> 2\n"
    "Question: What time is my flight on Monday? Fact: Plays tennis on Sundays -> 0\n"
    "Reply with one digit: 0, 1, 2 or 3."
)
GRADED_SYSTEM_ZH = (
    "用户问了一个问题。你看到一条记住的、关于用户的事实。给回答需要这条事实的程度打分。\n"
    "3：事实正好说出了问题问的东西（同一个人、同一样东西、同一个细节），或者它是用户本人的情况，"
    "明显会改变正确的建议。\n"
    "2：事实是用户本人的情况，对回答有一点帮助。\n"
    "1：同一个话题，但说的是另一个人、另一只宠物或另一件东西、另一个细节，或者是已经被新情况取代的旧事，"
    "或者是打算、计划，而问题问的是已经做过的事。\n"
    "0：无关。\n"
    "问题：我老婆是做什么工作的？ 事实：在牙科诊所当医生 -> 1\n"
    "问题：明天跑步有什么要注意的？ 事实：上周左脚踝扭伤了 -> 3\n"
    "问题：我去年在日本玩了几天？ 事实：打算明年春天去日本 -> 1\n"
    "问题：芝士蛋糕我能吃吗？ 事实：乳糖不耐受 -> 3\n"
    "问题：我儿子的自行车是什么牌子？ 事实：儿子每天骑车上学 -> 1\n"
    "问题：周五晚上去哪吃饭好？ 事实：住在成都春熙路附近 -> 2\n"
    "问题：我周一的航班几点？ 事实：周日常去打网球 -> 0\n"
    "只回答一个数字：0、1、2 或 3。"
)
"""The graded judge ("Beyond Yes and No", arXiv 2310.14122): a grade of 1 gives a look-alike
somewhere to go that is not "yes"; the score is the expected grade over 3."""


def graded_messages(question: str, fact: str, *, language: str | None = None) -> list[dict[str, str]]:
    """The graded judge's prompt, in the question's language."""
    return pair_messages(question, fact, language, (GRADED_SYSTEM, GRADED_SYSTEM_ZH),
                         ("Question: {q} Fact: {f} ->", "问题：{q} 事实：{f} ->"))


def graded_relevance(model: ProbabilityModel, question: str, fact: str, *,
                     language: str | None = None) -> float:
    """The expected grade (0-3) over 3, from the first token's probabilities of the four
    digits (0.5 if the model offers none of them)."""
    probs = model.next_token_probs(graded_messages(question, fact, language=language))
    digits = {g: probs.get(str(g), 0.0) for g in range(4)}
    total = sum(digits.values())
    return sum(g * p for g, p in digits.items()) / (3 * total) if total > 0 else 0.5
