"""The array-level core (evaluate_ranked) and the file-level policies built on it."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.engine import (
    EngineInputError,
    JudgedPool,
    Qrels,
    Run,
    evaluate,
    evaluate_many,
    evaluate_ranked,
    required_depth,
)

NAN = np.nan


def values(out: dict[str, np.ndarray]) -> list[list[float]]:
    return [v.tolist() for v in out.values()]


def test_evaluate_ranked_basic_measures():
    ranked = np.array(
        [
            [2, NAN, 0, 1, -1],
            [0, 0, NAN, 0, 0],
            [NAN, NAN, 3, 9, 9],  # padding beyond n_ret=3 is ignored
        ]
    )
    n_ret = [5, 5, 3]
    judged = [np.array([2, 0, 1, -1, 3]), np.array([0, 0, 0, 0]), np.array([3, 1])]
    out = evaluate_ranked(
        ranked,
        n_ret,
        judged,
        ["P.2", "recall.5", "recip_rank", "map", "Rprec", "bpref", "num_rel", "num_rel_ret"],
    )
    expected = np.array(
        [
            [0.5, 0.0, 0.0],
            [2 / 3, 0.0, 0.5],
            [1.0, 0.0, 1 / 3],
            [(1 + 2 / 4) / 3, 0.0, (1 / 3) / 2],
            [1 / 3, 0.0, 0.0],
            # q1: D(2) first -> 1; D(1) at rank 4 after one judged non-relevant: 1 - 1/min(1,3)
            [(1 + 0) / 3, 0.0, 1 / 2],
            [3, 0, 2],
            [2, 0, 1],
        ]
    )
    np.testing.assert_allclose(np.array(values(out)), expected, atol=1e-15)


def test_judged_at_k_and_err():
    ranked = np.array([[3, NAN, -1, 0, NAN], [NAN, NAN, NAN, NAN, NAN]])
    out = evaluate_ranked(
        ranked, [5, 2], [np.array([3, -1, 0]), np.array([])], ["Judged@4", "Judged@10", "ERR@3"]
    )
    judged4, judged10, err = values(out)
    assert judged4 == [3 / 4, 0.0]  # negative labels count as judged
    assert judged10 == [3 / 5, 0.0]  # denominator: min(k, n_ret)
    r1 = (2**3 - 1) / 16
    assert err == pytest.approx([r1, 0.0])


def gdeval_err(grades: list[float], k: int, top: float = 4) -> float:
    """ERR as gdeval.pl computes it (a plain loop, for reference)."""
    score, decay = 0.0, 1.0
    for i, g in enumerate(grades[:k]):
        r = (2 ** max(g, 0) - 1) / 2**top
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


def test_err_matches_reference_loop():
    rng = np.random.default_rng(1)
    ranked = rng.integers(-1, 5, size=(50, 30)).astype(float)
    ranked[rng.random(ranked.shape) < 0.3] = NAN
    n_ret = rng.integers(0, 31, 50)
    (err,) = evaluate_ranked(ranked, n_ret, [np.array([])] * 50, ["ERR@20"]).values()
    for i in range(50):
        grades = [0.0 if np.isnan(x) else x for x in ranked[i, : n_ret[i]]]
        assert err[i] == pytest.approx(gdeval_err(grades, 20), abs=1e-12)


def test_truncated_ranking_depth():
    # n_ret larger than the stored depth: counts use n_ret, measures see the stored part.
    ranked = np.array([[1, 0, 1]])
    out = evaluate_ranked(ranked, [100], [np.array([1, 1, 0, 1])], ["num_ret", "P.3", "Judged@10"])
    assert values(out) == [[100.0], [2 / 3], [3 / 10]]


def test_pool_object_and_take_share_one_query_across_runs():
    judged = np.array([3, 2, 2, 1, 0, 0, -1])
    pool = JudgedPool.from_sequences([judged]).take(np.zeros(100, int))
    rng = np.random.default_rng(0)
    ranked = rng.choice(judged, size=(100, 20)).astype(float)
    a = evaluate_ranked(ranked, np.full(100, 20), pool, ["nDCG@10", "P@5", "AP"])
    b = evaluate_ranked(ranked, np.full(100, 20), [judged] * 100, ["nDCG@10", "P@5", "AP"])
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert pool.take([-1, 0]).counts.tolist() == [0, 7]


def test_input_validation():
    with pytest.raises(ValueError, match="2-D"):
        evaluate_ranked(np.zeros(3), [3], [[1]], ["P@1"])
    with pytest.raises(ValueError, match="n_ret"):
        evaluate_ranked(np.zeros((2, 3)), [3], [[1], [1]], ["P@1"])
    with pytest.raises(ValueError, match="judged_labels"):
        evaluate_ranked(np.zeros((2, 3)), [3, 3], [[1]], ["P@1"])


def test_zero_width_and_zero_queries():
    out = evaluate_ranked(np.zeros((2, 0)), [0, 0], [[1], []], ["nDCG@10", "RR", "AP", "ERR@5"])
    assert all(v.tolist() == [0.0, 0.0] for v in out.values())
    out = evaluate_ranked(np.zeros((0, 5)), np.zeros(0, int), [], ["nDCG@10", "bpref"])
    assert all(len(v) == 0 for v in out.values())


# ----------------------------------------------------------------------------- policies
QRELS = Qrels.from_arrays(["a", "a", "b", "c"], ["d1", "d2", "d1", "d1"], [1, 0, 2, 1])
RUN = Run.from_arrays(["a", "a", "b", "z"], ["d1", "d2", "d9", "d1"], [2.0, 1.0, 1.0, 1.0])


def test_missing_and_extra_query_policies():
    res = evaluate(QRELS, RUN, ["P.1", "num_q", "num_rel", "nDCG(empty=one)@5"])
    assert res.qids == ["a", "b", "c"]
    assert res.missing_queries == ["c"] and res.ignored_queries == ["z"]
    assert res.value("P.1") == pytest.approx(1 / 3)
    assert res.value("num_q") == 3 and res.value("num_rel") == 3
    assert res.value("P.1", "c") == 0.0
    assert res.value("nDCG(empty=one)@5", "c") == 0.0  # absent from the run: 0
    shared = evaluate(QRELS, RUN, ["P.1", "num_q"], missing="ignore")
    assert shared.qids == ["a", "b"] and shared.value("P.1") == 0.5
    assert shared.missing_queries == ["c"]
    incl = evaluate(QRELS, RUN, ["P.1", "num_q", "nDCG(empty=one)@5"], extra="include")
    assert incl.qids == ["a", "b", "c", "z"] and incl.ignored_queries == []
    assert incl.value("num_q") == 4 and incl.value("nDCG(empty=one)@5", "z") == 1.0


def test_evaluation_accessors():
    res = evaluate(QRELS, RUN, ["ndcg_cut.10", "nDCG@10"])
    canonical = "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"
    assert set(res.means) >= {"ndcg_cut.10", "ndcg_cut_10", "nDCG@10", canonical}
    assert res["ndcg_cut.10"] == res[canonical] == res.aggregates[canonical]
    assert list(res.to_dict()) == ["ndcg_cut_10", canonical]
    assert res.to_dict()["ndcg_cut_10"]["a"] == 1.0
    rows = list(res.rows())
    assert rows[-1][1] == "all" and len(rows) == 2 * 3 + 2


def test_skewed_lengths_are_evaluated_in_blocks(monkeypatch):
    import metrics.engine.evaluation as ev

    monkeypatch.setattr(ev, "_CELL_BUDGET", 50)
    qids = ["long"] * 200 + [f"s{i}" for i in range(30)]
    docs = [f"d{i}" for i in range(200)] + ["d0"] * 30
    run = Run.from_arrays(qids, docs, np.arange(230, dtype=float))
    qrels = Qrels.from_arrays(qids, docs, np.arange(230) % 3)
    names = ["map", "ndcg", "bpref", "Rprec"]
    blocked = evaluate(qrels, run, names)
    monkeypatch.setattr(ev, "_CELL_BUDGET", 1 << 30)
    whole = evaluate(qrels, run, names)
    for key in whole.per_query:
        np.testing.assert_allclose(blocked.per_query[key], whole.per_query[key], atol=1e-12)


def test_evaluate_many_matches_evaluate(tmp_path):
    paths = []
    for i in range(3):
        p = tmp_path / f"run{i}.txt"
        p.write_text(
            "".join(
                f"{q} Q0 d{d} 0 {((d * (i + 3)) % 7) / 2} tag{i}\n" for q in "ab" for d in range(9)
            )
        )
        paths.append(p)
    qrels = Qrels.from_arrays(
        ["a"] * 9 + ["b"] * 9, [f"d{d}" for d in range(9)] * 2, [d % 3 for d in range(18)]
    )
    many = evaluate_many(qrels, paths, ["map", "ndcg_cut.5"], processes=2)
    assert [r.run_tag for r in many] == ["tag0", "tag1", "tag2"]
    for res, path in zip(many, paths, strict=True):
        one = evaluate(qrels, path, ["map", "ndcg_cut.5"])
        assert res.aggregates == one.aggregates
    serial = evaluate_many(qrels, paths, ["map"], processes=1)
    assert serial[2].value("map") == many[2].value("map")


def test_evaluate_many_never_forks_this_process(tmp_path, monkeypatch):
    """Workers come from a fork server: a fork of a threaded process can deadlock.

    A forked child inherits the locks other threads hold (pytest-xdist's channel, a web
    server's threads) and can wait on them forever; with ``os.fork`` refused here, the
    pool must still start and answer.
    """
    import os

    def refuse_fork() -> int:
        raise AssertionError("evaluate_many forked the calling process")

    paths = []
    for i in range(2):
        p = tmp_path / f"run{i}.txt"
        p.write_text("".join(f"a Q0 d{d} {d} {9 - d} tag{i}\n" for d in range(4 + i)))
        paths.append(p)
    monkeypatch.setattr(os, "fork", refuse_fork)
    many = evaluate_many(QRELS, paths, ["num_ret"], processes=2)
    assert [r.value("num_ret") for r in many] == [4, 5]


def test_evaluate_many_reports_errors_of_every_run(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("a Q0 d1 1 1 t\n")
    bad1 = tmp_path / "bad1.txt"
    bad1.write_text("a Q0 d1 1 x t\n")
    bad2 = tmp_path / "bad2.txt"
    bad2.write_text("a Q0 d1 1\n")

    with pytest.raises(EngineInputError) as exc:
        evaluate_many(QRELS, [good, bad1, bad2], ["map"], processes=2)
    assert [e.file for e in exc.value.errors] == [str(bad1), str(bad2)]


def test_required_depth_gives_exact_values_on_truncated_rankings():
    rng = np.random.default_rng(5)
    ranked = np.where(rng.random((40, 60)) < 0.6, rng.integers(-1, 5, (40, 60)), NAN)
    n_ret = np.full(40, 60)
    judged = [np.concatenate([r[~np.isnan(r)], [4, 3]]) for r in ranked]
    names = ["nDCG@10", "P@5", "RR@10", "AP@20", "Judged@10", "ERR@15", "nDCG(ideal=local)@10"]
    d = required_depth(names)
    assert d == 20
    full = evaluate_ranked(ranked, n_ret, judged, names)
    cut = evaluate_ranked(ranked[:, :d], n_ret, judged, names)
    for key in full:
        np.testing.assert_array_equal(full[key], cut[key])


def test_udcg_and_standardized_measures_are_wired_in():
    from metrics.engine.standardized import rndcg, sndcg
    from metrics.engine.udcg import udcg

    ranked = np.array([[2, NAN, 0, 1, -1], [0, 0, NAN, 0, 0]])
    judged = [np.array([2, 0, 1, -1, 3]), np.array([0, 0, 0, 0])]
    p0 = np.full((2, 5), 0.25)
    names = ["UDCG@3", "UDCG(w_irr=-1/2,rel=2)@4", "sNDCG@3", "sNDCG(gain=exp)", "RNDCG@3"]
    out = evaluate_ranked(ranked, [5, 3], judged, names, abstain=p0)
    assert list(out) == [
        "UDCG(rel=1,w_irr=-1/3)@3",
        "UDCG(rel=2,w_irr=-0.5)@4",
        "sNDCG(gain=linear)@3",
        "sNDCG(gain=exp)",
        "RNDCG(gain=linear)@3",
    ]
    got = list(out.values())
    np.testing.assert_array_equal(got[0], udcg(ranked >= 1, p0, [5, 3], 3))
    np.testing.assert_array_equal(got[1], udcg(ranked >= 2, p0, [5, 3], 4, w_irr=-0.5))
    np.testing.assert_array_equal(got[2], sndcg(ranked, [5, 3], judged, 3))
    np.testing.assert_array_equal(got[3], sndcg(ranked, [5, 3], judged, None, gain="exp"))
    np.testing.assert_array_equal(got[4], rndcg(judged, 3))
    assert required_depth(["UDCG@10", "sNDCG@5", "RNDCG@20"]) == 10
    # file level: undefined sNDCG (NaN) is left out of the mean
    qrels = Qrels.from_arrays(["a", "a", "b"], ["d1", "d2", "d1"], [2, 0, 1])
    run = Run.from_arrays(["a", "a", "b"], ["d2", "d1", "d1"], [2.0, 1.0, 1.0])
    res = evaluate(qrels, run, ["sNDCG@2"])
    assert np.isnan(res.value("sNDCG@2", "b"))
    assert res.value("sNDCG@2") == res.value("sNDCG@2", "a")


def test_hash_collisions_never_change_results(monkeypatch):
    """With every docno hashing alike, lookups and duplicate checks must still be exact."""
    from metrics.engine import _strings

    rng = np.random.default_rng(11)
    qids = np.repeat([f"q{i}" for i in range(12)], 40)
    docs = np.array([f"d{j}" for j in rng.integers(0, 90, size=len(qids))])
    keep = np.unique(np.char.add(np.char.add(qids, "|"), docs), return_index=True)[1]
    qids, docs = qids[keep], docs[keep]
    scores = rng.integers(0, 6, len(qids)).astype(float)
    labels = rng.integers(-1, 4, len(qids)).astype(float)
    judged = rng.random(len(qids)) < 0.6
    names = ["map", "ndcg", "ndcg_cut.5", "bpref", "P.5", "num_rel_ret"]

    def results():
        run = Run.from_arrays(qids, docs, scores)
        qrels = Qrels.from_arrays(qids[judged], docs[judged], labels[judged])
        deep = evaluate(qrels, run, names)
        shallow = evaluate(qrels, run, ["ndcg_cut.3", "P.2"])
        return deep.per_query, shallow.per_query

    normal = results()
    monkeypatch.setattr(_strings, "hash_words", lambda w: np.zeros(w.shape[0], np.uint64))
    collided = results()
    for a, b in zip(normal, collided, strict=True):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    with pytest.raises(EngineInputError):
        Run.from_arrays(["a", "a", "a"], ["x", "y", "x"], [1.0, 2.0, 3.0])
    with pytest.raises(EngineInputError):
        Qrels.from_arrays(["a", "a", "a"], ["x", "y", "x"], [1, 2, 3])


def test_padded_promise_gives_the_same_values_as_masking():
    rng = np.random.default_rng(7)
    n_ret = rng.integers(0, 30, size=40)
    labels = np.where(rng.random((40, 30)) < 0.5, rng.integers(0, 5, (40, 30)), np.nan)
    labels[np.arange(30)[None, :] >= n_ret[:, None]] = np.nan  # the promise holds
    pools = [rng.integers(0, 5, size=rng.integers(0, 20)).astype(float) for _ in range(40)]
    measures = ["nDCG@10", "nDCG(gain=exp)@10", "AP", "P@10", "RR", "R@20", "Judged@10", "bpref"]
    masked = evaluate_ranked(labels, n_ret, pools, measures)
    trusted = evaluate_ranked(labels, n_ret, pools, measures, padded=True)
    assert masked.keys() == trusted.keys()
    for name in masked:
        np.testing.assert_array_equal(masked[name], trusted[name])


# One name per family of the core (and flavours of nDCG that read the pool differently).
EVERY_FAMILY = [
    "nDCG@10",
    "nDCG(gain=exp,ideal=global)@5",
    "nDCG(ideal=recall)@5",
    "nDCG(ideal=local)",
    "nDCG(ideal=max)@3",
    "nDCG(gain=exp,discount=jk,empty=one)",
    "P@5",
    "R@10",
    "success.3",
    "RR",
    "AP",
    "map_cut.5",
    "Rprec",
    "bpref",
    "Judged@5",
    "ERR@5",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "gm_map",
    "gm_bpref",
    "IPrec@0.5",
    "11pt_avg",
    "set_P",
    "set_recall",
    "set_F",
    "set_map",
    "set_relative_P",
    "num_nonrel_judged_ret",
    "UDCG@5",
    "sNDCG@5",
    "RNDCG@5",
]


def test_shared_pool_gives_the_values_of_one_pool_per_row_for_every_family():
    """A SharedPool (statistics once per query, gathered per row) changes no value."""
    rng = np.random.default_rng(11)
    queries = [rng.integers(-1, 5, size=n).astype(float) for n in (7, 0, 1, 25)]
    rows = rng.integers(-1, len(queries), size=60)  # -1: a row without judgments
    rows[:4] = [-1, 0, 1, 3]
    n_ret = rng.integers(0, 30, size=60)
    labels = np.where(rng.random((60, 30)) < 0.5, rng.integers(-1, 5, (60, 30)), np.nan)
    abstain = rng.random((60, 30))
    per_row = [queries[r] if r >= 0 else np.zeros(0) for r in rows]
    shared = JudgedPool.from_sequences(queries).shared(rows)
    assert shared.n_queries == 60
    assert shared.num_rel(1).tolist() == [int((p >= 1).sum()) for p in per_row]
    expected = evaluate_ranked(labels, n_ret, per_row, EVERY_FAMILY, abstain=abstain)
    got = evaluate_ranked(labels, n_ret, shared, EVERY_FAMILY, abstain=abstain)
    assert expected.keys() == got.keys() and len(got) == len(EVERY_FAMILY)
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


def test_shared_pool_of_no_query_and_out_of_range_rows():
    empty = JudgedPool.empty(0).shared([-1, -1])
    out = evaluate_ranked(np.array([[1.0, NAN], [NAN, 2.0]]), [2, 2], empty, ["AP", "nDCG@2"])
    assert values(out) == [[0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(ValueError, match="out of range"):
        JudgedPool.from_sequences([np.array([1.0])]).shared([1])
