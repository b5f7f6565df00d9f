"""Smoke test of the benchmark workload generator on a miniature W1 (fast)."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from benchmarks.workload import W1, ensure, mini_spec, qrels_text, run_text

SPEC = mini_spec()


@pytest.fixture(scope="module")
def run_lines() -> list[list[str]]:
    return [line.split(" ") for line in run_text(SPEC, 0).splitlines()]


@pytest.fixture(scope="module")
def qrels_lines() -> list[list[str]]:
    return [line.split(" ") for line in qrels_text(SPEC).splitlines()]


def test_w1_shape():
    assert (W1.n_queries, W1.depth) == (1000, 1000)
    assert (W1.judged_min + W1.judged_max) / 2 * W1.n_queries == 200_000


def test_run_line_format(run_lines):
    assert len(run_lines) == SPEC.n_queries * SPEC.depth
    by_query: dict[str, list[list[str]]] = defaultdict(list)
    for fields in run_lines:
        assert len(fields) == 6
        qid, q0, docno, _rank, score, tag = fields
        assert q0 == "Q0"
        assert docno.startswith("D") and docno[1:].isdigit()
        assert tag == "mini-run-000"
        assert float(score) > 0
        by_query[qid].append(fields)
    assert len(by_query) == SPEC.n_queries
    for rows in by_query.values():
        assert [int(r[3]) for r in rows] == list(range(1, SPEC.depth + 1))
        assert len({r[2] for r in rows}) == SPEC.depth
        scores = [float(r[4]) for r in rows]
        assert scores == sorted(scores, reverse=True)


def test_scores_are_float32_exact(run_lines):
    scores = np.array([float(f[4]) for f in run_lines])
    assert np.array_equal(scores.astype(np.float32).astype(np.float64), scores)
    assert all(float(f"{float(f[4]):.4f}") == float(f[4]) for f in run_lines)


def test_ties_in_top_10_for_a_tenth_of_queries(run_lines):
    top: dict[str, list[str]] = defaultdict(list)
    for qid, _, _, rank, score, _ in run_lines:
        if int(rank) <= 10:
            top[qid].append(score)
    tied = [q for q, s in top.items() if len(set(s)) < len(s)]
    assert len(tied) == round(SPEC.tie_fraction * SPEC.n_queries) == 2


def test_qrels_format_and_label_skew(qrels_lines):
    per_query = Counter(f[0] for f in qrels_lines)
    assert len(per_query) == SPEC.n_queries
    assert all(SPEC.judged_min <= n <= SPEC.judged_max for n in per_query.values())
    assert all(len(f) == 4 and f[1] == "0" for f in qrels_lines)
    assert len({(f[0], f[2]) for f in qrels_lines}) == len(qrels_lines)
    grades = Counter(int(f[3]) for f in qrels_lines)
    assert set(grades) <= {0, 1, 2, 3, 4}
    assert grades[0] / len(qrels_lines) > 0.4
    assert grades[0] == max(grades.values())
    assert grades[1] > grades[4]


def test_runs_share_judged_documents(run_lines, qrels_lines):
    judged = {(f[0], f[2]) for f in qrels_lines}
    retrieved = {(f[0], f[2]) for f in run_lines}
    assert 0 < len(judged & retrieved) < len(judged)


def test_deterministic_and_runs_differ(tmp_path):
    assert run_text(SPEC, 0) == run_text(SPEC, 0)
    assert qrels_text(SPEC) == qrels_text(SPEC)
    assert run_text(SPEC, 0) != run_text(SPEC, 1)
    wl = ensure(2, SPEC, tmp_path)
    assert wl.qrels.read_text() == qrels_text(SPEC)
    assert wl.runs[1].read_text() == run_text(SPEC, 1)
    assert ensure(2, SPEC, tmp_path) == wl  # reused, not regenerated
