"""The lexical fallback: hashed character n-grams with TF-IDF weights (offline, instant)."""

from __future__ import annotations

import functools
import hashlib
import math
import re
import unicodedata
from collections import Counter

import numpy as np

from gya_memory.base.text import HAN
from gya_memory.semantic.embeddings.thresholds import TFIDF_DIM, TFIDF_NAME
from gya_memory.semantic.embeddings.base import Embedder, check_input



# -- TF-IDF on hashed character n-grams ---------------------------------------------------
_CJK = HAN
# one CJK character | a run of other word characters (an ASCII/Latin/Cyrillic word) | any
# other visible character (punctuation, symbols, emoji)
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|\S")

# A small built-in corpus of memory-like sentences, only to estimate how common each
# n-gram is (its IDF). Changing it changes every TF-IDF vector: rename TFIDF_NAME then.
_IDF_CORPUS = (
    "用户叫李四，今年三十岁",
    "用户住在上海，周末喜欢去公园跑步",
    "用户的女儿今年上小学一年级",
    "我对花生过敏，吃东西要注意",
    "用户最近在学习日语，每天背单词",
    "用户喜欢看科幻电影，不喜欢恐怖片",
    "我下个月要去北京出差一周",
    "用户是一名小学老师，教数学",
    "用户养了一只猫，名字叫团子",
    "我每天早上七点起床，晚上十一点睡觉",
    "用户不吃香菜，也不喜欢太辣的菜",
    "用户在准备考研，目标是计算机专业",
    "我最近工作压力很大，经常加班",
    "用户想换一份离家近一点的工作",
    "用户的生日是三月十二号",
    "我喜欢喝绿茶，不加糖",
    "用户计划明年夏天去云南旅游",
    "用户说他的父母住在成都",
    "我最近在减肥，晚饭只吃沙拉",
    "用户正在用 Python 写一个数据分析的项目",
    "用户希望回答简短一点，不要太长",
    "用户上周感冒了，现在好多了",
    "我想学弹吉他，有什么入门建议吗？",
    "用户喜欢的颜色是蓝色",
    "你还记得我上次说的那本书吗？",
    "用户有什么饮食上的偏好？",
    "用户住在哪个城市？",
    "我明天有什么安排？",
    "用户的职业是什么？",
    "帮我推荐一家适合家庭聚餐的餐厅",
    "The user's name is Bob and he is 42 years old",
    "The user lives in Berlin and works from home",
    "I am allergic to peanuts, so please keep that in mind",
    "The user is learning Spanish and practises every evening",
    "The user prefers short answers without bullet points",
    "I have a meeting with my manager on Friday morning",
    "The user has two kids and a dog named Max",
    "The user is a nurse who often works night shifts",
    "I want to run a half marathon next spring",
    "The user does not eat meat and avoids dairy",
    "The user is planning a trip to Japan in October",
    "I usually go to bed around midnight",
    "The user's favourite food is pasta with tomato sauce",
    "What did I tell you about my sister last week?",
    "Where does the user live?",
    "What should I cook for dinner tonight?",
    "Can you remind me what my goals for this year are?",
    "The user asked for help writing a cover letter",
)


def _ngram_features(text: str) -> list[str]:
    """The features of ``text``: n-grams (n = 1..3) of tokens, within one clause.

    Text is NFKC-normalised (full-width -> half-width) and lowercased. Tokens are single
    CJK characters and whole words of other scripts; punctuation splits clauses and is
    dropped. A text of punctuation only keeps its characters as unigrams, so no
    non-empty text has zero features.
    """
    norm = unicodedata.normalize("NFKC", text).lower()
    clauses: list[list[str]] = [[]]
    punctuation: list[str] = []
    for tok in _TOKEN.findall(norm):
        if len(tok) == 1 and unicodedata.category(tok).startswith("P"):
            punctuation.append(tok)
            if clauses[-1]:
                clauses.append([])
        else:
            clauses[-1].append(tok)
    feats = [
        f"{n}:" + "\x1f".join(clause[i:i + n])
        for clause in clauses
        for n in (1, 2, 3)
        for i in range(len(clause) - n + 1)
    ]
    return feats or [f"1:{p}" for p in punctuation]


@functools.lru_cache(maxsize=65536)
def _bucket(feature: str) -> tuple[int, float]:
    """Stable (bucket, sign) of a feature: blake2b, the same in every process."""
    h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    return h % TFIDF_DIM, (1.0 if h >> 63 else -1.0)


@functools.lru_cache(maxsize=1)
def _idf_table() -> tuple[dict[str, float], float]:
    """Smoothed IDF, ``ln((1 + N) / (1 + df)) + 1``, of every n-gram of the built-in corpus,
    and the value for an n-gram the corpus never saw (the largest)."""
    n = len(_IDF_CORPUS)
    df = Counter(f for text in _IDF_CORPUS for f in set(_ngram_features(text)))
    table = {f: math.log((1 + n) / (1 + d)) + 1.0 for f, d in df.items()}
    return table, math.log(1 + n) + 1.0


class TFIDFEmbedder(Embedder):
    """Lexical vectors: TF-IDF over hashed character n-grams. Offline and instant.

    Recipe (``tfidf/char-1-3``, 4096 dims): the text is NFKC-normalised and lowercased,
    cut into tokens (one CJK character each, whole words otherwise), and every 1-, 2- and
    3-gram of tokens inside a clause is a feature. A feature weighs ``(1 + ln tf) * idf``:
    sublinear term frequency, and an IDF estimated once from a small built-in corpus of
    memory-like sentences (Chinese and English), so that ``用户``, ``的``, ``the`` count
    less than ``咖啡``; n-grams the corpus never saw get the highest IDF. Features are
    hashed into 4096 buckets with blake2b and a ±1 sign, and the vector is L2-normalised.
    Hash collisions make texts with nothing in common score a little off zero (within
    about ±0.1 on short sentences); the sign makes that noise as often negative as positive. No state, no fitting on your data: the same text gives
    the same vector in every process.

    Honest limits: it matches shared characters and words, nothing more. "咖啡" finds
    "戒咖啡", but "饮食" does not find "咖啡", and a paraphrase with no shared characters
    scores about 0. That is why it is only the ⚠️ degraded stand-in for a real model.
    """

    def __init__(self, *, degraded: bool = False, min_score: float | None = None) -> None:
        self.name = TFIDF_NAME
        self.dim = TFIDF_DIM
        self.degraded = degraded
        self._min_score = min_score

    def _vector(self, text: str, idf: dict[str, float], unseen: float) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float64)
        for feature, tf in Counter(_ngram_features(text)).items():
            bucket, sign = _bucket(feature)
            vec[bucket] += sign * (1.0 + math.log(tf)) * idf.get(feature, unseen)
        if not vec.any():  # every feature cancelled out in its bucket: astronomically rare
            vec[_bucket("1:" + text)[0]] = 1.0
        return vec

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        idf, unseen = _idf_table()
        return np.stack([self._vector(t, idf, unseen) for t in texts])

    def features(self, text: str) -> list[str]:
        """The n-gram features of ``text`` (for teaching: what the vector is made of)."""
        return [f.split(":", 1)[1].replace("\x1f", " ") for f in _ngram_features(check_input(text))]


def fallback_embedder() -> Embedder:
    """The ⚠️ degraded stand-in for an unreachable service: TF-IDF, ``degraded=True``."""
    return TFIDFEmbedder(degraded=True)
