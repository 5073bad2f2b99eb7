"""The pure parts of benchmarks/bench_recall.py (metrics, fusion, folds) on tiny made-up data:
no ../shared/data, no model, no store."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load_bench(name: str):
    """benchmarks/<name>.py as a module (its folder on sys.path while it loads, for _shared)."""
    path = ROOT / "benchmarks" / f"{name}.py"
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_recall")


def test_recall_and_reciprocal_rank(bench):
    ranked = ["a", "b", "c", "d", "e", "f"]
    assert bench.recall_at(ranked, {"b", "f"}, 5) == 0.5
    assert bench.recall_at(ranked, {"b", "f"}, 10) == 1.0
    assert bench.recall_at(ranked, set(), 5) is None
    assert bench.reciprocal_rank(ranked, {"c", "a"}) == 1.0
    assert bench.reciprocal_rank(ranked, {"c"}) == pytest.approx(1 / 3)
    assert bench.reciprocal_rank(ranked, {"f"}, at=5) == 0.0


def test_expand_and_sessions(bench):
    # p1 stands for two turns (one text twice), p2 and p3 are two chunks of one turn
    docs_of = {"p1": ["s0:1", "s2:1"], "p2": ["s1:0"], "p3": ["s1:0"]}
    turns = bench.expand(["p2", "p1", "p3", "unknown"], docs_of)
    assert turns == ["s1:0", "s0:1", "s2:1"]
    session_of = {"s0:1": "A", "s1:0": "B", "s2:1": "A"}
    assert bench.sessions_in_order(turns, session_of) == ["B", "A"]


def test_query_metrics_and_mean(bench):
    q = bench.Query("q1", "t", "?", frozenset({"x", "y"}), frozenset({"S"}), True, 0)
    m = bench.query_metrics(["x", "z"], ["S"], q)
    assert m == {"turn_r5": 0.5, "turn_r10": 0.5, "session_r5": 1.0, "mrr": 1.0}
    mean = bench.mean_metrics([m, {"turn_r5": 1.0, "turn_r10": 1.0, "session_r5": None,
                                   "mrr": 0.0}])
    assert mean["turn_r5"] == 0.75 and mean["session_r5"] == 1.0 and mean["n"] == 2


def test_rrf(bench):
    dense = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    lexical = [("c", 12.0), ("d", 3.0)]
    # 1:1, k=60: c is in both lists and wins
    assert bench.fuse_rrf(dense, lexical, k=60)[0] == "c"
    # the lexical list weighed near zero: the dense order, then the lexical-only d
    assert bench.fuse_rrf(dense, lexical, k=60, w_lexical=1e-9) == ["a", "b", "c", "d"]
    assert bench.fuse_rrf([], [], k=60) == []


def test_minmax_and_dbsf(bench):
    dense = [("a", 0.90), ("b", 0.85), ("c", 0.80)]
    lexical = [("c", 20.0), ("b", 10.0), ("d", 1.0)]
    assert bench.fuse_minmax(dense, lexical, alpha=1.0)[:3] == ["a", "b", "c"]
    assert bench.fuse_minmax(dense, lexical, alpha=0.0)[:2] == ["c", "b"]
    # equal weights: a (1 + 0) and c (0 + 1) tie, the dense order breaks the tie
    assert bench.fuse_minmax(dense, lexical, alpha=0.5)[:2] == ["a", "c"]
    assert bench.fuse_dbsf(dense, lexical, alpha=1.0)[:3] == ["a", "b", "c"]
    assert set(bench.fuse_dbsf(dense, lexical, alpha=0.5)) == {"a", "b", "c", "d"}
    # one candidate, or equal scores: no division by zero
    assert bench.fuse_dbsf([("a", 0.5)], [("a", 3.0), ("b", 3.0)]) == ["a", "b"]
    assert bench.fuse_minmax([("a", 0.5)], []) == ["a"]


def test_grid_labels_are_unique_and_include_the_defaults(bench):
    labels = [v.label for v in bench.fusion_grid()]
    assert len(labels) == len(set(labels))
    assert "rrf(k=60, wl=1)" in labels and "dbsf(alpha=0.5)" in labels


def test_cross_validation_never_chooses_on_the_scored_fold(bench):
    # Variant "good" wins on folds 1-4; "cheat" wins only on fold 0. Fold 0 must be scored with
    # the choice made on folds 1-4 ("good"), although "cheat" is better there.
    folds = {f"q{i}": i % 5 for i in range(10)}
    per_variant = {
        "good": {q: {"turn_r5": 0.0 if f == 0 else 1.0, "turn_r10": 1.0, "session_r5": 1.0,
                     "mrr": 1.0} for q, f in folds.items()},
        "cheat": {q: {"turn_r5": 1.0 if f == 0 else 0.0, "turn_r10": 1.0, "session_r5": 1.0,
                      "mrr": 1.0} for q, f in folds.items()},
    }
    oof, chosen, untrained = bench.cross_validate(per_variant, folds)
    assert chosen[0] == "good" and untrained == []
    assert all(chosen[f] == "good" for f in range(1, 5))
    assert oof["q0"]["turn_r5"] == 0.0 and oof["q5"]["turn_r5"] == 0.0
    assert bench.mean_metrics(oof.values())["turn_r5"] == pytest.approx(0.8)
    # every question in one fold: nothing to choose on, the first variant, flagged
    oof, chosen, untrained = bench.cross_validate(per_variant, {"q0": 0, "q5": 0})
    assert chosen == {0: "good"} and untrained == [0]


def test_spread_chunks_dates_and_types(bench):
    assert bench.spread(120, 3) == [0, 40, 80]
    assert bench.spread(5, None) == [0, 1, 2, 3, 4]
    assert bench.spread(5, 9) == [0, 1, 2, 3, 4]
    text = "word " * 1000
    parts = bench.chunks(text, 2000)
    assert all(len(p) <= 2000 for p in parts) and " ".join(parts).split() == text.split()
    assert bench.chunks("   ", 2000) == []
    assert bench.parse_lme_date("2023/05/30 (Tue) 23:42").isoformat() == \
        "2023-05-30T23:42:00+00:00"
    assert bench.memorybank_qtype("6月3号那天我订了哪家酒店？") == "dated"
    assert bench.memorybank_qtype("Which hotel did I book on June 3rd?") == "dated"
    assert bench.memorybank_qtype("Which hotel do I usually book?") == "undated"


def test_the_labels_file_holds_ids_only():
    labels = json.loads((ROOT / "benchmarks" / "data" / "memorybank_labels.json")
                        .read_text(encoding="utf-8"))
    assert labels["version"] == 1 and set(labels) == {"version", "how", "cn", "en"}
    for lang in ("cn", "en"):
        for rows in labels[lang].values():
            for row in rows:
                assert set(row) <= {"q", "evidence", "answerable"}
                assert isinstance(row["q"], int)
                assert bool(row["evidence"]) == row.get("answerable", True)
                for date, index in row["evidence"]:
                    assert len(date) == 10 and isinstance(index, int) and index >= 0


def test_missing_data_exits_2(bench, tmp_path, capsys):
    assert bench.main(["--data", str(tmp_path / "nowhere"), "--only", "lexical"]) == 2
    assert "missing" in capsys.readouterr().err


def test_the_grid_holds_the_shipped_fusion_and_every_family(bench):
    grid = bench.fusion_grid()
    labels = {v.label for v in grid}
    assert bench.SHIPPED in labels
    assert {v.family for v in grid} == set(bench.FAMILIES)
    dense = [(f"d{i}", 1 - i / 100) for i in range(30)]
    lexical = [(f"x{i}", 30.0 - i) for i in range(30)]
    shipped = next(v for v in grid if v.label == bench.SHIPPED)
    # the pool: only the first 20 of each list take part
    fused = shipped.fuse(dense, lexical, "q")
    assert len(fused) == 40 and "d20" not in fused and "x20" not in fused


def test_lexical_cue(bench):
    assert bench.lexical_cue("How many days ago did I attend a networking event?") is False
    assert bench.lexical_cue("How often do I see Dr. Johnson?") is True
    assert bench.lexical_cue("Which book did I finish first, 'The Hate U Give' or the other?")
    assert bench.lexical_cue("What did I buy on May 3?") is True
    assert bench.lexical_cue("我最近在看什么书？") is False
    assert bench.lexical_cue("我5月2日去了哪里？") is True
    assert bench.lexical_cue("我读完《活着》了吗？") is True


def test_named_days_and_relative_windows(bench):
    from datetime import datetime, timezone

    assert bench.named_days("我曾经在5月2日提到过我去了博物馆") == {(5, 2)}
    assert bench.named_days("What did I say on May 2nd and June 13?") == {(5, 2), (6, 13)}
    assert bench.named_days("What did I say in May?") == set()
    now = datetime(2023, 4, 10, 13, 0, tzinfo=timezone.utc)  # a Monday
    lo, hi = bench.relative_window("What did I mention four weeks ago?", now)
    assert lo.date().isoformat() == "2023-03-09" and hi.date().isoformat() == "2023-03-17"
    lo, hi = bench.relative_window("the artist I started to listen to last Friday", now)
    assert lo.date().isoformat() == "2023-04-06" and hi.date().isoformat() == "2023-04-08"
    lo, hi = bench.relative_window("Where did I go last week?", now)
    # the calendar week before (Mon 3 - Sun 9 April), a day either side
    assert lo.date().isoformat() == "2023-04-02" and hi.date().isoformat() == "2023-04-11"
    assert bench.relative_window("How many days ago did I watch it?", now) is None
    assert bench.relative_window("four weeks ago", None) is None


def test_date_filter_and_recency(bench):
    from datetime import datetime, timezone

    def day(d):
        return datetime(2023, 5, d, tzinfo=timezone.utc)

    date_of = {"a": day(1), "b": day(2), "c": day(3)}
    assert bench.filter_first(["a", "b", "c"], lambda t: t == "c") == ["c", "a", "b"]
    assert bench.recency_rerank(["a", "b", "c"], date_of, 0.0) == ["a", "b", "c"]
    # c (newest) at rank 2 scores 1/2 * 2 = 1.0 with beta=1, ties a's 1.0: the order keeps a
    assert bench.recency_rerank(["a", "c", "b"], date_of, 1.0)[:2] == ["a", "c"]
    assert bench.recency_rerank(["a", "c"], date_of, 1.5) == ["c", "a"]
    assert bench.newest_first(["b", "a"], frozenset({"a", "b"}), date_of) is True
    assert bench.newest_first(["a", "b"], frozenset({"a", "b"}), date_of) is False
    assert bench.newest_first(["c"], frozenset({"a", "b"}), date_of) is None
    assert bench.newest_first(["a"], frozenset({"a"}), date_of) is None
    assert bench.date_label(day(2), True) == "2023年5月2日 星期二"
    assert bench.date_label(day(2), False) == "Tuesday, May 2, 2023"


def test_judged_questions_are_stable(bench):
    q = bench.Query("x", "t", "?", frozenset(), frozenset(), False, 0)
    assert bench.judged_question(q, 0) is True  # every unanswerable question
    picks = [bench.judged_question(bench.Query(f"q{i}", "t", "?", frozenset({"e"}),
                                               frozenset({"S"}), True, 0), 4) for i in range(200)]
    assert 20 < sum(picks) < 80
    assert not any(bench.judged_question(bench.Query(f"q{i}", "t", "?", frozenset({"e"}),
                                                     frozenset({"S"}), True, 0), 0)
                   for i in range(20))


def test_pooled_cv_chooses_one_setting_on_the_other_folds_of_every_data_set(bench):
    # two data sets, two variants: "a" is better everywhere except on fold 0 of set x
    def rows(qs, good):
        return {q: {"turn_r5": 1.0 if good(q) else 0.0, "turn_r10": 1.0, "session_r5": 1.0,
                    "mrr": 1.0} for q in qs}

    labels = [v.label for v in bench.fusion_grid() if v.family == "minmax"]
    a, b = labels[0], labels[1]
    results = {}
    for ds in ("x", "y"):
        qs = [f"{ds}{i}" for i in range(10)]
        folds = {q: i % 5 for i, q in enumerate(qs)}
        per_variant = {lb: rows(qs, lambda q: False) for lb in labels}
        per_variant[a] = rows(qs, lambda q, ds=ds, folds=folds: not (ds == "x" and folds[q] == 0))
        per_variant[b] = rows(qs, lambda q, ds=ds, folds=folds: ds == "x" and folds[q] == 0)
        results[ds] = {"_per_variant": per_variant, "_folds": folds}
    pooled = bench.pooled_cv(results)["minmax"]
    assert set(pooled["chosen"].values()) == {a}  # fold 0 too: chosen on folds 1-4
    assert pooled["by_dataset"]["x"]["turn_r5"] == 0.8
    assert pooled["by_dataset"]["y"]["turn_r5"] == 1.0
    assert bench.pooled_cv({"lme": {"overall": {}}}) == {}


def test_first_rank(bench):
    assert bench.first_rank(["a", "b", "c"], frozenset({"c", "b"})) == 2
    assert bench.first_rank(["a"], frozenset({"z"})) is None


def test_reply_aliases_point_replies_at_the_user_turn_before_them(bench):
    """--reply-vector user: an assistant turn (every piece of it) takes the dense vector of the
    user turn before it in the same session; one with no user turn before it keeps its own."""
    from datetime import datetime, timezone

    when = datetime(2023, 5, 1, tzinfo=timezone.utc)
    d = [bench.Doc("0:0", "s1", when, "ask", "assistant"), bench.Doc("0:1", "s1", when, "q1"),
         bench.Doc("0:2", "s1", when, "long reply", "assistant"), bench.Doc("1:0", "s2", when, "q2"),
         bench.Doc("1:1", "s2", when, "reply 2", "assistant")]
    memories = [(d[0], 0, "ask"), (d[1], 0, "q1"), (d[2], 0, "long"), (d[2], 1, "reply"),
                (d[3], 0, "q2"), (d[4], 0, "reply 2")]
    assert bench.reply_aliases(memories) == {"long": "q1", "reply": "q1", "reply 2": "q2"}


def test_the_unanswerable_file_holds_our_questions_and_kinds_only():
    """The project's own not-answerable MemoryBank questions: three per user (near, near_date,
    absent), nothing copied from the data set (a question and its kind, no notes)."""
    path = ROOT / "benchmarks" / "data" / "memorybank_unanswerable.json"
    if not path.exists():
        pytest.skip("no project-written unanswerable questions")
    extra = json.loads(path.read_text(encoding="utf-8"))
    assert set(extra) == {"version", "how", "cn", "en"}
    labels = json.loads((ROOT / "benchmarks" / "data" / "memorybank_labels.json")
                        .read_text(encoding="utf-8"))
    for lang in ("cn", "en"):
        assert set(extra[lang]) == set(labels[lang])  # the same users
        for rows in extra[lang].values():
            assert sorted(r["kind"] for r in rows) == ["absent", "near", "near_date"]
            for row in rows:
                assert set(row) == {"q", "kind"} and row["q"].strip()


def test_gate_numbers_count_false_hits_by_kind_of_unanswerable_question(bench):
    def answer(qid, qtype, returned, evidence=frozenset()):
        q = bench.Query(qid, qtype, "?", frozenset(evidence), frozenset(), bool(evidence), 0)
        return bench.Answer(q, {}, {}, {"hybrid": returned})

    answers = [answer("a", "not answerable: near", ["x"]),
               answer("b", "not answerable: near", []),
               answer("c", "not answerable: absent", []),
               answer("d", "dated", ["e1"], {"e1"})]
    gate = bench.gate_numbers(answers, {"hybrid": {"d": {"turn_r5": 1.0}}})["hybrid"]
    assert gate["false_hits"] == 1 and gate["unanswerable"] == 3
    assert gate["false_hits_by_type"] == {"not answerable: absent": [0, 1],
                                          "not answerable: near": [1, 2]}
    assert gate["gated_recall"] == 1.0 and gate["ungated_r5"] == 1.0


def test_the_cache_counts_a_repeated_text_once(bench, tmp_path):
    """A history repeats some turns word for word; ``cached()`` looks keys up 500 at a time,
    and a text in two batches once counted twice (the store never counted as cached)."""
    cache = bench.CachingEmbedder(tmp_path / "c.sqlite3", bench.HashEmbedder, "bench/hash-8", 8)
    texts = [f"turn {i}" for i in range(600)]
    cache.embed_documents(texts)
    assert cache.cached(texts + ["turn 1"], query=False)  # "turn 1" in both batches
    assert not cache.cached(texts + ["never seen"], query=False)
    assert cache.misses == 600


def test_the_cache_passes_on_the_models_latent_terms(bench, tmp_path):
    """``answer.terms.by_terms`` asks ``hasattr(embedder, "terms")``: the cache answers with
    its model's (else ``--acceptance``'s terms row silently repeats the dense one)."""
    class WithTerms(bench.HashEmbedder):
        def terms(self, texts):
            return [{len(t): 1.0} for t in texts]

    cache = bench.CachingEmbedder(tmp_path / "c.sqlite3", WithTerms, "bench/hash-8", 8)
    assert cache.terms(["ab", "abc"]) == [{2: 1.0}, {3: 1.0}]
    plain = bench.CachingEmbedder(tmp_path / "d.sqlite3", bench.HashEmbedder, "bench/hash-8", 8)
    assert not hasattr(plain, "terms")


# -- benchmarks/bench_draft_rank.py: ranking with a draft answer (issue 16) ----------------------
@pytest.fixture(scope="module")
def draft_bench():
    return load_bench("bench_draft_rank")


def test_draft_rank_report(draft_bench):
    row = {"lang": "en", "kind": "advice", "relevant": ["m3"], "ids": ["m1", "m2", "m3"],
           "q": [0.9, 0.8, 0.7], "dq": [0.9, 0.8, 0.7], "dp": [0.5, 0.6, 0.95]}
    assert draft_bench.rank_of_relevant(row["q"], row) == 3
    table = draft_bench.report([row])["en advice"]
    assert table["question (shipped)"] == (0, 1, 1, 1)
    assert table["draft as passage"] == (1, 1, 1, 1)
    assert table["mean(question, draft as passage)"] == (1, 1, 1, 1)  # 1.65 against 1.4 and 1.4
    assert draft_bench.report([row])["zh fact"]["question (shipped)"] == (0, 0, 0, 0)


def test_the_stored_draft_probe_holds_only_the_acceptance_sets_ids():
    rows = json.loads((ROOT / "benchmarks" / "results" / "draft_rank_tune.json").read_text("utf-8"))
    assert len(rows) == 48 and {r["lang"] for r in rows} == {"zh", "en"}
    for r in rows:
        assert len(r["ids"]) == len(r["q"]) == len(r["dq"]) == len(r["dp"])
        assert set(r["relevant"]) <= set(r["ids"])


# -- benchmarks/bench_pairwise.py: the candidates compared two at a time (issue 16) -------------
@pytest.fixture(scope="module")
def pairwise_bench():
    return load_bench("bench_pairwise")


def test_pairwise_order_averages_both_orders_and_blends_the_terms_place(pairwise_bench):
    # m3 wins its pairs in both orders; m1 and m2 each win only when shown first: a tie
    row = {"ids": ["m1", "m2", "m3"], "relevant": ["m3"],
           "pairs": {"m1|m2": [0.75, 0.75], "m1|m3": [0.25, 0.75], "m2|m3": [0.25, 0.75]}}
    assert pairwise_bench.order(row, 0.0) == ["m3", "m1", "m2"]  # m1 and m2 tie: terms order
    assert pairwise_bench.order(row, 5.0) == ["m1", "m2", "m3"]  # the terms place outweighs
    assert pairwise_bench.firsts([row], lambda r: pairwise_bench.order(r, 0.0)) == (1, 1, 1)
    assert pairwise_bench.firsts([row], lambda r: r["ids"]) == (0, 0, 1)
    assert pairwise_bench.pairwise_messages("问题？", "甲", "乙", True)[1]["content"].startswith("问题：")


def test_the_stored_pairwise_probe_holds_only_ids_and_probabilities():
    rows = json.loads((ROOT / "benchmarks" / "results" / "pairwise_tune.json").read_text("utf-8"))
    assert len(rows) == 48 and {r["lang"] for r in rows} == {"zh", "en"}
    for r in rows:
        assert set(r) == {"scenario", "lang", "ids", "relevant", "pairs"}
        assert len(r["pairs"]) == len(r["ids"]) * (len(r["ids"]) - 1) // 2
        assert all(0 <= p <= 1 for pair in r["pairs"].values() for p in pair)


# -- benchmarks/bench_answer_wording.py: another wording through the real gate (issue 16) -------
def test_every_wording_replaces_a_line_the_answer_prompt_has():
    from gya_memory.answer import context

    wording = load_bench("bench_answer_wording")
    for name, lines in wording.WORDINGS.items():
        for (lang, key), line in lines.items():
            assert key in context._TEXT[lang] and line != context._TEXT[lang][key], (name, key)
    assert wording.main(["no such wording"]) == 2


# -- benchmarks/bench_gate_blend.py: a learned blend of the gate's signals (issue 16) ----------
def test_gate_blend_replays_the_shipped_gate_and_scores_placements():
    blend = load_bench("bench_gate_blend")
    cand = lambda i, reader, judge, ok=True: {"id": i, "rank": 0, "cos": 0.85, "terms": 1.0,
                                              "top_terms": 2.0, "floor_ok": ok, "about_ok": True,
                                              "reader": reader, "judge": judge}
    fact = {"scenario": "s1", "lang": "en", "condition": "memory", "kind": "fact",
            "relevant": ["m2"], "cands": [cand("m1", 0.5, 0.9), cand("m2", 0.99, 0.1),
                                          cand("m3", 0.99, 0.9, ok=False)]}
    advice = {"scenario": "s1", "lang": "en", "condition": "no_hit", "kind": "advice",
              "relevant": [], "cands": [cand("m1", 0.5, 0.3), cand("m2", 0.99, 0.1)]}
    assert blend.shipped(fact) == ["m2"]  # the reader at 0.98; m3 is below the floor
    assert blend.shipped(advice) == ["m1"]  # the judge at 0.2
    assert blend.score([fact, advice], blend.shipped) == (1, 1, 0)
    assert len(blend.features(fact, fact["cands"][0])) == 9
    w = blend.fit([[1.0, 0.0], [1.0, 1.0]] * 10, [False, True] * 10)
    assert w[1] > 0  # the second feature predicts the label


def test_the_stored_gate_blend_probe_holds_only_ids_and_numbers():
    rows = json.loads((ROOT / "benchmarks" / "results" / "gate_blend_tune.json").read_text("utf-8"))
    assert len(rows) == 96 and {r["condition"] for r in rows} == {"memory", "no_hit"}
    for r in rows:
        assert set(r) == {"scenario", "lang", "condition", "kind", "relevant", "cands"}
        assert all(set(c) == {"id", "rank", "cos", "terms", "top_terms", "floor_ok",
                              "about_ok", "reader", "judge"} for c in r["cands"])


# -- benchmarks/bench_gate_replay.py: the gate replayed, also against neutral facts (issue 16) ---
@pytest.fixture(scope="module")
def gate_bench():
    return load_bench("bench_gate_replay")


def _replay_row(cond, kind, cands, neutral_judge, relevant=()):
    return {"scenario": "x", "lang": "en", "cond": cond, "kind": kind, "relevant": list(relevant),
            "cands": cands, "neutral": {"reader": [0.1, 0.1, 0.1], "judge": neutral_judge}}


def test_gate_replay_reads_bars_raw_or_against_the_neutral_fact(gate_bench):
    rel = {"id": "m1", "cos": 0.9, "drop": None, "reader": 0.5, "judge": 0.3, "judge_old": 0.3}
    look = {"id": "m2", "cos": 0.88, "drop": None, "reader": 0.5, "judge": 0.25, "judge_old": 0.2}
    rows = [_replay_row("answerable", "advice", [rel, look], [0.5, 0.6, 0.4], ["m1"]),
            _replay_row("general", "general", [dict(look, judge=0.95)], [0.1, 0.1, 0.1])]
    # raw bars: both advice candidates pass 0.2; the general question's 0.95 passes 0.9
    assert gate_bench.replay(rows)["en"] == (1, 1, 0, 1, 1)
    # against the neutral fact (0.6): 0.3 is logit -1.25 from it, 0.25 is -1.50; 0.95 vs 0.1 is +5.14
    assert gate_bench.replay(rows, normalised=True, judge_min=-1.3, general_min=6.0)["en"] == (1, 0, 0, 0, 1)


def test_the_stored_gate_probe_has_neutral_baselines_and_no_text():
    rows = json.loads((ROOT / "benchmarks" / "results" / "gate_probe_tune.json").read_text("utf-8"))
    assert len(rows) == 144
    for r in rows:
        assert set(r["neutral"]) == {"reader", "judge"}
        assert all(len(v) == 3 and all(0 <= p <= 1 for p in v) for v in r["neutral"].values())
        assert "question" not in r


# -- benchmarks/bench_judge_reason.py: a reason before the judge's verdict (issue 16) -----------
@pytest.fixture(scope="module")
def reason_bench():
    return load_bench("bench_judge_reason")


def test_judge_reason_reads_the_last_verdict_and_counts_alone(reason_bench):
    assert reason_bench.verdict("Reason: no, it does not matter here. Verdict: yes") == "yes"
    assert reason_bench.verdict("理由：不会改变建议。结论：no") == "no"
    assert reason_bench.verdict("理由：说不清。") is None
    rows = [{"lang": "en", "cond": "answerable", "kind": "advice", "relevant": ["m1"],
             "cands": [{"id": "m1", "judge": 0.3, "v": "yes"}, {"id": "m2", "judge": 0.5, "v": "no"}]},
            {"lang": "en", "cond": "general", "kind": "general", "relevant": [],
             "cands": [{"id": "m3", "judge": 0.5, "v": "yes"}]}]
    gates = reason_bench.report(rows)["en"]
    assert gates["shipped judge (P(yes) >= 0.2, general >= 0.9)"] == (1, 1, 0, 1, 0, 1)
    assert gates["reason, then its verdict"] == (1, 0, 1, 1, 1, 1)
    assert gates["both"] == (1, 0, 1, 1, 0, 1)


def test_the_stored_reason_probe_covers_the_tuning_advice_and_general_questions():
    rows = json.loads((ROOT / "benchmarks" / "results" / "judge_reason_tune.json").read_text("utf-8"))
    assert {r["cond"] for r in rows} == {"answerable", "general"}
    assert all(r["kind"] != "fact" and len(r["cands"]) <= 3 for r in rows)
    assert {r["lang"] for r in rows} == {"zh", "en"}


# -- benchmarks/bench_draft_judge.py: the draft as the judge's input (issue 16) ------------------
def test_draft_judge_report_ranks_each_signal():
    bench = load_bench("bench_draft_judge")
    rows = [{"lang": "en", "relevant": ["m2"],
             "cands": [{"id": "m1", "cos": 0.9, "judge": 0.5, "dj": 0.2},
                       {"id": "m2", "cos": 0.8, "judge": 0.5, "dj": 0.9},
                       {"id": "m3", "cos": 0.7, "judge": 0.1, "dj": 0.3}]},
            {"lang": "en", "relevant": ["m9"], "cands": [{"id": "m1", "cos": 0.9, "judge": 0.5, "dj": 0.2}]}]
    report = bench.report(rows)["en"]
    assert report["cos"] == (0.5, 0, 1, 1)  # the question without its relevant memory is left out
    assert report["judge"] == (0.75, 0, 1, 1)  # a tie counts half
    assert report["dj"] == (1.0, 1, 1, 1)
    assert report and bench.report(rows)["zh"]["dj"] == (None, 0, 0, 0)
    stored = json.loads((ROOT / "benchmarks" / "results" / "draft_judge_tune.json").read_text("utf-8"))
    assert {r["lang"] for r in stored} == {"zh", "en"} and all(r["cands"] for r in stored)
    assert bench.messages("zh", "问 题", "答", "事实")[1]["content"] == "问题：问 题 回答：答 事实：事实 ->"


def test_abstention_only_keeps_the_abs_questions(bench, tmp_path):
    """--abstention: only LongMemEval's abstention questions (a tiny folder in the data set's
    layout, with its own loader, written here: the tests never need the real data)."""
    (tmp_path / "load.py").write_text(
        "import json, os\n"
        "def load(d):\n"
        "    s = json.load(open(os.path.join(d, 'sessions.json')))\n"
        "    qs = json.load(open(os.path.join(d, 'longmemeval_s_tune.json')))\n"
        "    for q in qs:\n"
        "        q['haystack_sessions'] = [s[i] for i in q['haystack_session_ids']]\n"
        "    return qs\n", "utf-8")
    (tmp_path / "sessions.json").write_text(json.dumps(
        {"a": [{"role": "user", "content": "I play tennis on Sundays.", "has_answer": True}]}), "utf-8")
    question = {"haystack_session_ids": ["a"], "haystack_dates": ["2023/05/30 (Tue) 23:42"],
                "question_type": "single-session-user", "answer_session_ids": ["a"],
                "question_date": "2023/06/01 (Thu) 10:00"}
    (tmp_path / "longmemeval_s_tune.json").write_text(json.dumps([
        dict(question, question_id="q1", question="When do I play tennis?"),
        dict(question, question_id="q2_abs", question="When do I play table tennis?")]), "utf-8")
    every = bench.load_longmemeval(tmp_path)
    only = bench.load_longmemeval(tmp_path, abstention_only=True)
    assert [h.queries[0].answerable for h in every] == [True, False]
    assert [h.queries[0].qid for h in only] == ["q2_abs"] and not only[0].queries[0].evidence
    picked = bench.load_longmemeval(tmp_path, only=bench.question_ids("q2_abs, missing"))
    assert [(h.queries[0].qid, h.queries[0].fold) for h in picked] == [("q2_abs", 1)]
    (tmp_path / "ids.txt").write_text("q1\n\nq2_abs\n", "utf-8")
    assert bench.question_ids(f"@{tmp_path / 'ids.txt'}") == {"q1", "q2_abs"}
    assert bench.question_ids(None) is None


def test_merge_runs_takes_the_newer_numbers_and_leaves_cv_rows_out(bench, tmp_path):
    def run(per_query):
        return {"results": {"lme": {"per_query": per_query}}}
    row = {"turn_r5": 1.0, "turn_r10": 1.0, "session_r5": 1.0, "mrr": 0.5}
    older = run({"dense": {"q1": row, "q2": dict(row, turn_r5=0.0)}, "rrf (CV)": {"q1": row}})
    newer = run({"dense": {"q2": dict(row, turn_r5=0.5), "q3": row}, "rrf (CV)": {"q3": row},
                 "lexical": {"q3": row}})
    means, same = bench.merge_runs(older, newer)
    assert set(means) == {"dense"} and means["dense"]["n"] == 3
    assert means["dense"]["turn_r5"] == pytest.approx(2.5 / 3)  # q2 from the newer run
    assert same == {"dense": (0, 1)}
    for name, data in (("a.json", older), ("b.json", newer)):
        (tmp_path / name).write_text(json.dumps(data), "utf-8")
    assert bench.main(["--merge", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0


def test_gate_replay_lets_a_reader_near_miss_pass_when_the_judge_agrees(gate_bench):
    near = {"id": "m1", "cos": 0.9, "drop": None, "reader": 0.93, "judge": 0.8, "judge_old": 0.8}
    look = {"id": "m2", "cos": 0.88, "drop": None, "reader": 0.95, "judge": 0.9, "judge_old": 0.9}
    rows = [_replay_row("answerable", "fact", [near, look], [0.1, 0.1, 0.1], ["m1"]),
            _replay_row("no_hit", "fact", [dict(look, reader=0.85)], [0.1, 0.1, 0.1])]
    assert gate_bench.replay(rows)["en"] == (0, 0, 0, 0, 1)  # both under the reader's 0.98
    # only the first candidate may pass under the bar, and only with both signals high enough
    assert gate_bench.replay(rows, second=(0.9, 0.7))["en"] == (1, 0, 0, 0, 1)
    assert gate_bench.replay(rows, second=(0.8, 0.7))["en"] == (1, 0, 1, 0, 1)
    assert gate_bench.replay(rows, second=(0.9, 0.85))["en"] == (0, 0, 0, 0, 1)


# -- benchmarks/bench_gate_sizes.py: the gate at real sizes, replayed (issue 17) ----------------
@pytest.fixture(scope="module")
def sizes_bench():
    return load_bench("bench_gate_sizes")


def _cand(key, score, *, statement=False, free=None, reader=None, judge=None):
    free = free or {}
    return {"keys": [key], "score": score, "statement": statement,
            "free": {k: free.get(k) for k in ("fact", "advice", "general")},
            "reader": reader, "judge": judge}


def test_gate_sizes_replay_follows_the_gate(sizes_bench):
    row = {"cands": [_cand("t2", 0.02, reader=0.99, judge=0.1),
                     _cand("t1", 0.03, reader=0.9, judge=0.5, free={"fact": "asks for a time"}),
                     _cand("t3", 0.01, statement=True, reader=0.97, judge=0.95)]}
    # best first; the fact's free check drops t1; the exchange bar applies to t2 only
    assert sizes_bench.replay(row, "fact") == ["t2"]
    assert sizes_bench.replay(row, "fact", exchange_min=0.5) == ["t2"]
    assert sizes_bench.replay(row, "fact", fact_min=0.95) == ["t2", "t3"]
    assert sizes_bench.replay(row, "fact", fact_min=0.995, exchange_min=0.95) == ["t2"]
    assert sizes_bench.replay(row, "advice") == ["t1", "t3"]  # the judge at 0.2
    assert sizes_bench.replay(row, "general") == ["t3"]       # the judge at 0.9
    assert sizes_bench.replay(row, "advice", pool=1) == ["t1"]


def test_gate_sizes_replay_reads_an_exchange_from_the_signal_asked(sizes_bench):
    row = {"cands": [_cand("x", 0.03, reader=0.1, judge=0.3) | {"xreader": 0.96, "xyes": 0.4},
                     _cand("s", 0.02, statement=True, reader=0.99, judge=0.9)]}
    # a one-line statement always goes to the shipped reader; an exchange to the signal asked
    assert sizes_bench.replay(row, "fact") == ["s"]
    assert sizes_bench.replay(row, "fact", exchange_signal="xreader", exchange_min=0.95) == ["x", "s"]
    assert sizes_bench.replay(row, "fact", exchange_signal="xyes", exchange_min=0.5) == ["s"]
    # a probe without the signal passes no exchange
    assert sizes_bench.replay({"cands": [_cand("y", 0.1, reader=0.99)]}, "fact",
                              exchange_signal="xyes", exchange_min=0.0) == []
    assert sizes_bench.replay(row, "advice", exchange_signal="xyes") == ["x", "s"]  # judge


@pytest.fixture(scope="module")
def xreader_bench():
    load_bench("bench_recall")  # the script imports it by name
    return load_bench("bench_exchange_reader")


class _Scripted:
    """First-token probabilities by a rule on the prompt: an exchange that holds 'Lisbon'
    is known and says yes."""

    def __init__(self):
        self.prompts = []

    def next_token_probs(self, messages, *, top=10):
        self.prompts.append(messages)
        holds = "Lisbon" in messages[1]["content"] or "里斯本" in messages[1]["content"]
        return {"Lis": 0.9, "unknown": 0.1, "yes": 0.8, "no": 0.2} if holds else \
            {"unknown": 0.7, "Un": 0.2, "yes": 0.1, "no": 0.9}


def test_the_exchange_reader_asks_both_prompts_in_the_question_language(xreader_bench):
    rows = {"q": {"question": "Where did I fly in March?",
                  "cands": [_cand("u/a", 0.03, reader=0.2, judge=0.5),
                            _cand("u/b", 0.02, reader=0.1, judge=0.4),
                            _cand("u/c", 0.01, statement=True, reader=0.9, judge=0.9),
                            _cand("u/d", 0.005)]},
            "z": {"question": "我三月份飞去哪了？", "cands": [_cand("u/e", 0.03, reader=0.2)]}}
    texts = {"u/a": "I flew to Lisbon in March.\nHow was it?", "u/b": "I like tea.",
             "u/c": "Flew to Lisbon.", "u/d": "-", "u/e": "三月份去了里斯本。"}
    model = _Scripted()
    # a statement and a candidate the gate never asked about are left alone
    assert xreader_bench.reprobe(rows, texts, model) == 6
    a, b, c, d = rows["q"]["cands"]
    assert (a["xreader"], a["xyes"]) == (0.9, 0.8)
    assert (b["xreader"], b["xyes"]) == (pytest.approx(0.1), 0.1)
    assert "xreader" not in c and "xreader" not in d
    assert rows["z"]["cands"][0]["xreader"] == 0.9
    systems = [m[0]["content"] for m in model.prompts]
    assert systems[0] == xreader_bench.XREADER_SYSTEM and systems[2] == xreader_bench.XYES_SYSTEM
    assert systems[4] == xreader_bench.XREADER_SYSTEM_ZH and systems[5] == xreader_bench.XYES_SYSTEM_ZH
    assert model.prompts[4][1]["content"].startswith("之前的聊天：三月份去了里斯本。")


def test_the_exchange_reader_can_read_the_users_line_alone_or_with_roles(xreader_bench):
    """``ureader``: the shipped reader on the user's line of a stored exchange; ``rreader``:
    on the exchange with who said what written out, in the question's language."""
    rows = {"q": {"question": "Where did I fly in March?", "cands": [_cand("u/a", 0.03, reader=0.2)]},
            "z": {"question": "我三月份飞去哪了？", "cands": [_cand("u/e", 0.03, reader=0.2)]}}
    texts = {"u/a": "I flew to Lisbon in March.\nHow was it?", "u/e": "三月份去了里斯本。\n玩得开心吗？"}
    model = _Scripted()
    assert xreader_bench.reprobe(rows, texts, model, ["ureader", "rreader"]) == 4
    assert rows["q"]["cands"][0]["ureader"] == pytest.approx(0.9)
    from gya_memory.answer.judge import READER_SYSTEM
    (u, r, zu, zr) = [m[1]["content"] for m in model.prompts]
    assert model.prompts[0][0]["content"] == READER_SYSTEM
    assert u.startswith("Fact: I flew to Lisbon in March.\nQuestion:") and "How was it" not in u
    assert r.startswith("Fact: User said: I flew to Lisbon in March.") and "Assistant replied: How was it?" in r
    assert zu.startswith("事实：三月份去了里斯本。\n问题") and "用户说：三月份去了里斯本。" in zr and "助手回复：玩得开心吗？" in zr
    assert xreader_bench.main(["x.json", "--out", "y.json", "--signals", "nope"]) == 2


def test_the_exchange_reader_says_what_is_missing(xreader_bench, tmp_path, capsys):
    out = tmp_path / "out.json"
    assert xreader_bench.main([str(tmp_path / "none.json"), "--out", str(out)]) == 2
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"results": {"cn": {"overall": {}}}}), "utf-8")
    assert xreader_bench.main([str(plain), "--out", str(out)]) == 2
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps({"results": {"cn": {"gate_probe": {}}}}), "utf-8")
    assert xreader_bench.main([str(probe), "--out", str(out),
                               "--data", str(tmp_path / "no-data")]) == 2
    assert "--data" in capsys.readouterr().err and not out.exists()


def test_terms_recall_scores_rankings_and_says_what_is_missing(tmp_path, capsys):
    load_bench("bench_recall")  # the script imports it by name
    terms = load_bench("bench_terms_recall")
    assert terms.rrf([["a", "b"], ["b", "c"]]) == ["b", "a", "c"]
    # weighted: a ranking weighted 3x outvotes the other's first place
    assert terms.rrf([["a", "b"], ["b", "a"]], k=1, weights=[1, 3]) == ["b", "a"]
    grid = terms.weighted_grid()
    assert len(grid) == len(set(grid)) == 3 * 19  # 27 weightings, 8 of them a multiple of another
    assert (60.0, 1.0, 1.0, 1.0) not in grid and (60.0, 0.5, 0.5, 0.5) in grid
    assert terms.metrics(["x", "a", "y", "z", "w", "b"], frozenset({"a", "b"})) == (0.5, 1.0, 0.5)
    assert terms.main(["--data", str(tmp_path / "none")]) == 2
    assert "--data" in capsys.readouterr().err


def test_gate_sizes_scores_false_hits_and_evidence_recall(sizes_bench):
    rows = {"u": {"question": "我曾经告诉过你我的血型，是什么血型？", "kind": "advice",
                  "answerable": False, "evidence": [], "returned": ["a"],
                  "cands": [_cand("a", 0.03, reader=0.9, judge=0.6)]},
            "q": {"question": "What did I buy on May 2nd?", "kind": "fact", "answerable": True,
                  "evidence": ["b", "c"], "returned": ["b"],
                  "cands": [_cand("b", 0.03, reader=0.99, judge=0.6),
                            _cand("x", 0.02, reader=0.1, judge=0.6)]}}
    shipped = sizes_bench.KIND_RULES["shipped"]
    s = sizes_bench.score(rows, {"q": 1.0}, shipped)
    assert (s["false_hits"], s["unanswerable"], s["gated_recall"], s["ungated_r5"]) == (1, 1, 0.5, 1.0)
    cue = sizes_bench.score(rows, {"q": 1.0}, sizes_bench.KIND_RULES["recall cue"])
    assert (cue["false_hits"], cue["facts"]) == (0, 2)  # read as a fact: the reader says unknown
    assert sizes_bench.replay_matches_run(rows) == (2, 2)


def test_the_recall_cue_reads_questions_about_the_past_as_facts(sizes_bench):
    kind = sizes_bench.recall_kind
    for q in ("我曾经告诉过你我的血型，是什么血型？", "5月3日那天我练钢琴，弹的是哪首曲子？",
              "你给我推荐过哪些画家？", "I once told you my blood type. What is it?",
              "On May 4th, I went to a newly opened restaurant. What was the restaurant's name?",
              "Which movie did you recommend to me?", "I don't like warm weather, right?"):
        assert kind(q, "advice") == "fact", q
    for q in ("我今晚能喝杯拿铁吗？", "Should I rent a car for the trip?"):
        assert kind(q, "advice") == "advice", q


def test_the_recall_cue_leaves_every_acceptance_question_as_it_is(sizes_bench):
    from gya_memory.answer.questions import question_kind
    from gya_memory.lab.scenarios import load_acceptance

    for s in load_acceptance(None):
        for q in (s.question, s.no_hit_question, s.general_question):
            shipped = question_kind(q, known=[m.text for m in s.memories])
            assert sizes_bench.recall_kind(q, shipped) == shipped, (s.id, q)


def test_gate_sizes_levers_and_their_user_folds(sizes_bench):
    cue = {"question": "I once told you my blood type. What is it?", "kind": "advice",
           "answerable": False, "evidence": [], "cands": [_cand("a", 0.03, judge=0.45)]}
    plain = {"question": "Should I bring a coat?", "kind": "advice", "answerable": False,
             "evidence": [], "cands": [_cand("b", 0.03, judge=0.45)]}
    # the raised bar applies to the recall-cue question only
    assert sizes_bench.cue_judge(cue, 0.2) == ["a"] and sizes_bench.cue_judge(cue, 0.5) == []
    assert sizes_bench.cue_judge(plain, 0.5) == ["b"]
    fact = {"question": "What did I cook on May 2nd?", "kind": "fact", "answerable": True,
            "evidence": ["e"], "cands": [_cand("x", 0.03, reader=0.5), _cand("e", 0.02, reader=0.8)]}
    assert sizes_bench.reader_margin(fact, None) == []            # shipped: under 0.98
    assert sizes_bench.reader_margin(fact, (0.7, 0.2)) == ["e"]   # the reader's first, 0.3 ahead
    assert sizes_bench.reader_margin(fact, (0.7, 0.4)) == []      # not far enough ahead
    assert sizes_bench.reader_margin(fact, (0.9, 0.1)) == []      # too low
    data = {"en": ({"Ann#x0": cue, "Ann#1": fact, "Bob#x0": plain, "Cy#x0": dict(cue)}, {})}
    folds = sizes_bench.user_folds(data)
    assert folds[("en", "Ann#x0")] == folds[("en", "Ann#1")] == folds[("en", "Cy#x0")] == 0
    assert folds[("en", "Bob#x0")] == 1
    # fold 1 (Bob) cannot tell the bars apart and keeps 0.2 for fold 0; fold 0 (Ann, Cy)
    # prefers 0.5, which goes to fold 1, whose question has no cue: 3 false hits either way
    r = sizes_bench.cross_fit(data, sizes_bench.cue_judge, (0.2, 0.5))
    assert r["chosen"] == [0.2, 0.5]
    assert (r["shipped"]["false_hits"], r["false_hits"], r["unanswerable"]) == (3, 3, 3)
    assert r["gated_recall"] == 0.0 and r["answerable"] == 1


def test_gate_sizes_says_what_is_missing(sizes_bench, tmp_path, capsys):
    assert sizes_bench.main([str(tmp_path / "none.json")]) == 2
    empty = tmp_path / "plain.json"
    empty.write_text(json.dumps({"results": {"cn": {"overall": {}}}}), "utf-8")
    assert sizes_bench.main([str(empty)]) == 2
    assert "--gate-probe" in capsys.readouterr().err


def test_the_probe_replays_to_what_the_judged_retrieve_returns(bench, sizes_bench, tmp_path):
    """A real store and e5; a scripted probability model (a fact with 'coffee' is known and
    relevant), so the test needs no chat model: the shipped replay of the probe must give the
    keys that retrieve(mode="hybrid", judge=...) gives."""
    from gya_memory.answer.judge import READER_SYSTEM, READER_SYSTEM_ZH
    from gya_memory.semantic.embeddings.local import LocalE5Embedder
    from gya_memory.semantic.memory import SemanticMemory

    class Scripted:
        gives_probabilities = True

        def next_token_probs(self, messages, *, top=10):
            line = messages[-1]["content"]
            reader = messages[0]["content"] in (READER_SYSTEM, READER_SYSTEM_ZH)
            fact = line.split("Fact: ")[1].split("Question: ")[0].split(" ->")[0]
            hot = "coffee" in fact.lower()
            if reader:
                return {"unknown": 0.01 if hot else 0.9, "Yes": 0.99 if hot else 0.1}
            return {"yes": 0.8 if hot else 0.1, "no": 0.2 if hot else 0.9}

    mem = SemanticMemory(tmp_path / "q", user_id="u", embedder=LocalE5Embedder(), fallback=False)
    try:
        texts = ["I am cutting down on coffee these days.",
                 "I play tennis every Saturday morning.\nThat sounds like fun!",
                 "My sister lives in Lisbon.", "I bought a new coffee grinder last week."]
        mem.store_many(texts)
        docs_of = {h.id: [f"d{i}"] for i, h in enumerate(mem.candidates("coffee", top_k=4))}
        for question in ("Can I have a latte tonight?", "What did I tell you about coffee?"):
            probe = bench.probe_gate(mem, question, Scripted(), docs_of)
            returned = bench.expand([h.id for h in mem.retrieve(
                question, top_k=bench.GATE_TOP_K, mode="hybrid", judge=Scripted())], docs_of)
            assert sizes_bench.replay(probe, probe["kind"]) == returned
            assert all(set(c["free"]) == {"fact", "advice", "general"} for c in probe["cands"])
            assert {c["statement"] for c in probe["cands"]} == {True, False}
    finally:
        mem.close()


# -- benchmarks/bench_answer_retry.py: ask again when the answer ignored its memories (issue 16) --
@pytest.fixture(scope="module")
def retry_bench():
    return load_bench("bench_answer_retry")


def test_retry_fires_only_when_a_fact_or_advice_answer_ignored_its_memories(retry_bench):
    placed = ["Allergic to peanuts", "Lives in Leeds"]
    question = "Can I order the kung pao chicken?"
    assert retry_bench.ignored("Sure, go ahead and order it.", placed, question, "advice")
    assert retry_bench.ignored("I don't know.", placed, question, "fact")
    assert not retry_bench.ignored("Better not: it has peanuts.", placed, question, "advice")
    assert not retry_bench.ignored("Sure, go ahead and order it.", [], question, "advice")
    assert not retry_bench.ignored("Sure, go ahead and order it.", placed, question, "general")


def test_retry_messages_keep_the_prompt_and_change_one_thing(retry_bench):
    from gya_memory.answer.context import _TEXT, Policy, assemble

    hit = type("H", (), {"id": "m1", "score": 0.9, "text": "对花生过敏", "payload": {}})()
    messages = assemble("我能点宫保鸡丁吗？", [hit], Policy()).messages
    ways = retry_bench.retried(messages, "可以。", "zh", _TEXT["zh"]["after"])
    assert ways["follow"][:len(messages)] == messages
    assert [m["role"] for m in ways["follow"][-2:]] == ["assistant", "user"]
    assert ways["firm"][:-1] == messages[:-1]
    assert retry_bench.FIRM["zh"] in ways["firm"][-1]["content"]
    assert _TEXT["zh"]["after"] not in ways["firm"][-1]["content"]
    with pytest.raises(ValueError):
        retry_bench.retried(messages, "可以。", "zh", "no such line")


# -- benchmarks/bench_question_kinds.py: the kind rule on a hand-written tuning set (issue 16) ----
def test_question_kind_set_is_balanced_and_the_report_counts_facts():
    bench = load_bench("bench_question_kinds")
    rows = bench.hand_set()
    for lang in ("zh", "en"):
        kinds = [k for lg, _, k in rows if lg == lang]
        assert len(kinds) == 40 and set(kinds) == {"fact", "advice", "general"}
        assert kinds.count("fact") == 20
    toy = [("en", "a", "fact"), ("en", "b", "advice"), ("en", "c", "general")]
    assert bench.scores(toy, lambda q: "fact")["en"] == (1, 3, 1, 1, 2, 2)


# -- benchmarks/bench_answer_decoding.py: context-aware decoding of the answer (issue 16) -------
def test_the_contrast_prefers_what_the_memories_raise_among_plausible_tokens():
    decoding = load_bench("bench_answer_decoding")
    near = {1: -0.5, 2: -1.0, 3: -6.0}  # 3 is far below a tenth of the best: never picked
    far = {1: -0.2, 2: -3.0, 4: -1.0}  # the memories lower 1, raise 2; 3 unlisted here
    assert decoding.contrast(near, far, alpha=0.0, beta=0.1) == 1  # plain greedy
    assert decoding.contrast(near, far, alpha=0.5, beta=0.1) == 2  # -1.5+1.5 > -0.75+0.1
    assert decoding.contrast({3: -0.1, 5: -0.1}, far, alpha=0.5, beta=0.1) in (3, 5)
    # 5 gains most from the memories but is under half as likely as 3: the bar keeps it out
    assert decoding.contrast({3: -0.1, 5: -1.0}, {5: -5.0, 3: -0.1}, alpha=1.0, beta=0.5) == 3
    assert decoding.contrast({3: -0.1, 5: -1.0}, {5: -5.0, 3: -0.1}, alpha=1.0, beta=0.1) == 5
    with pytest.raises(ValueError):
        decoding.contrast({}, far, alpha=0.5, beta=0.1)


def test_without_memories_keeps_only_the_question_of_the_memory_message():
    from gya_memory.answer.context import Policy, assemble
    from gya_memory.semantic.values import Hit

    decoding = load_bench("bench_answer_decoding")
    hit = Hit(id="m1", score=0.9, text="对花生过敏", payload={})
    for question in ("今晚点宫保鸡丁吗？", "Should I order kung pao chicken?"):
        messages = assemble(question, [hit], Policy()).messages
        bare = decoding.without_memories(messages)
        assert bare[0] == messages[0]
        assert "对花生过敏" not in bare[1]["content"] and bare[1]["content"].endswith(question)
        assert bare[1]["content"] == messages[1]["content"].rsplit("\n\n", 1)[-1]


# -- benchmarks/bench_reader_examples.py: the reader with worked examples (issue 16) ------------
@pytest.fixture(scope="module")
def examples_bench():
    return load_bench("bench_reader_examples")


def test_reader_examples_are_turns_before_the_question_and_none_comes_from_a_data_set(examples_bench):
    from gya_memory.answer.judge import reader_messages

    for question, lang in (("我的车是什么牌子？", "zh"), ("What's my car?", "en")):
        messages = examples_bench.example_messages(question, "fact")
        shipped = reader_messages(question, "fact")
        assert messages[0] == shipped[0] and messages[-1] == shipped[1]  # only the turns between
        assert [m["role"] for m in messages[1:-1]] == ["user", "assistant"] * 6
        answers = [m["content"] for m in messages[2:-1:2]]
        assert answers.count("unknown") == 3, lang
    data = "".join(p.read_text("utf-8") for folder in ("acceptance", "writing")
                   for p in (ROOT / "gya_memory" / "data" / folder).glob("*.json"))
    data += "".join(p.read_text("utf-8") for p in (ROOT / "notebooks").glob("*.ipynb"))
    for lang, examples in examples_bench.EXAMPLES.items():
        for question, fact, _ in examples:
            assert question not in data and fact not in data, (lang, fact)


def test_reader_examples_replay_counts_passes_beside_and_false_hits(examples_bench):
    rows = [{"lang": "en", "cond": "answerable", "relevant": ["m1"],
             "cands": [{"id": "m1", "shipped": 0.99, "examples": 0.85},
                       {"id": "m2", "shipped": 0.5, "examples": 0.95}]},
            {"lang": "en", "cond": "no_hit", "relevant": [],
             "cands": [{"id": "m3", "shipped": 0.97, "examples": 0.2}]}]
    # (relevant passes, relevant reached, look-alike beside, answerable, false hits, no-hit)
    assert examples_bench.replay(rows, "shipped", 0.98, "en") == (1, 1, 0, 1, 0, 1)
    assert examples_bench.replay(rows, "shipped", 0.9, "en") == (1, 1, 0, 1, 1, 1)
    assert examples_bench.replay(rows, "examples", 0.9, "en") == (0, 1, 1, 1, 0, 1)
    assert examples_bench.replay(rows, "examples", 0.8, "zh") == (0, 0, 0, 0, 0, 0)


@pytest.mark.parametrize(("split", "langs"), [("tune", {"zh", "en"}), ("test", {"zh", "en"}),
                                              ("fresh_en", {"en"}), ("fresh2", {"zh", "en"})])
def test_the_stored_reader_examples_probe_holds_only_ids_and_probabilities(split, langs):
    path = ROOT / "benchmarks" / "results" / f"reader_examples_{split}.json"
    rows = json.loads(path.read_text("utf-8"))
    assert {r["cond"] for r in rows} == {"answerable", "no_hit"} and {r["lang"] for r in rows} == langs
    for r in rows:
        assert set(r) == {"scenario", "lang", "cond", "relevant", "cands"}
        assert all(set(c) == {"id", "shipped", "examples"} and 0 <= c["examples"] <= 1
                   for c in r["cands"])


# -- benchmarks/bench_outdated.py: a memory a later memory ended (issue 16) ---------------------
def test_a_later_memory_ends_an_earlier_one_about_the_same_thing_but_not_a_plan():
    from types import SimpleNamespace as M

    outdated = load_bench("bench_outdated")
    job = M(id="m1", text="在南京的设计院做结构工程师", about="user", created_at="2025-03-01")
    left = M(id="m2", text="年初从设计院辞职了", about="user", created_at="2026-01-10")
    plan = M(id="m3", text="打算明年从设计院辞职", about="user", created_at="2026-02-01")
    hers = M(id="m4", text="姐姐从设计院辞职了", about="user's sister", created_at="2026-02-02")
    assert [(m.id, keys) for m, keys in outdated.ended_by(job, [job, left, plan, hers])] \
        == [("m2", ["计院", "设计"])]
    assert outdated.ended_by(left, [job, left]) == []  # only a later memory ends one
    car = M(id="m1", text="Drives a 2015 Mazda 3", about="user", created_at="2025-01-01")
    sold = M(id="m2", text="Sold the Mazda to a neighbour", about="user", created_at="2025-09-01")
    other = M(id="m3", text="Stopped drinking coffee", about="user", created_at="2025-10-01")
    assert [m.id for m, _ in outdated.ended_by(car, [car, sold, other])] == ["m2"]
    s = M(memories=[car, sold, other], trap="m1", trap_kind="outdated", relevant=["m3"])
    assert outdated.count([s]) == {"outdated traps caught": 1}
    # rare=2: a key a third memory shares ("mazda") no longer counts
    third = M(id="m4", text="Bought winter tyres for the Mazda", about="user", created_at="2025-05-01")
    s = M(memories=[car, sold, other, third], trap="m1", trap_kind="outdated", relevant=["m3"])
    assert outdated.count([s], rare=3)["outdated traps caught"] == 1
    assert outdated.count([s], rare=2)["outdated traps missed"] == 1
