"""What else was tried for the retrieval gate (issue 8): every score a single threshold could
use, per (question, memory), and how well each separates answerable from no-hit questions.
``python -m gya_memory.lab.evaluation --features`` prints the table; none beat chance here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

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
