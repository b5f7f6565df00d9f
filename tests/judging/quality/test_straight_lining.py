"""Straight-lining: one grade whatever the document, where the others' grades vary."""

from __future__ import annotations

import math

import numpy as np
import pytest
from django.urls import reverse

from judging import services
from judging.models import Membership
from judging.quality import attention as pure
from judging.quality import selectors
from tests import factories
from tests.api_client import client_for

VARIED = [0.4, 0.2, 0.2, 0.1, 0.1]  # the others' grades of a query with relevant documents
NOTHING = [0.95, 0.03, 0.01, 0.005, 0.005]  # ... of a query nobody finds relevant


def test_forty_zeros_where_the_others_vary_are_flagged_by_hand():
    result = pure.straight_lining([0] * 40, [VARIED] * 40, [15.0] * 40)
    assert (result.compared, result.mode_grade, result.mode_share) == (40, 0.0, 1.0)
    assert result.expected_mode_share == pytest.approx(0.4)
    # Poisson-binomial sd: sqrt(40 * 0.4 * 0.6) / 40 = 0.0774597; z = 0.6 / that
    assert result.z == pytest.approx(0.6 / (math.sqrt(40 * 0.24) / 40))
    assert result.z == pytest.approx(7.745967, rel=1e-6)
    assert result.entropy == 0.0
    # H(0.4, 0.2, 0.2, 0.1, 0.1) = 0.4·1.32193 + 0.4·2.32193 + 0.2·3.32193 bits
    assert result.expected_entropy == pytest.approx(2.1219281, rel=1e-6)
    assert (result.run_grade, result.run_length) == (0.0, 40)
    assert result.run_log10_chance == pytest.approx(40 * math.log10(0.4))
    assert result.run_median_seconds == 15.0
    assert result.flagged


def test_a_careful_judge_of_a_query_nobody_finds_relevant_is_not_flagged():
    result = pure.straight_lining([0] * 40, [NOTHING] * 40, [60.0] * 40)
    # z = 0.05 / (sqrt(40 * 0.95 * 0.05) / 40) = 1.4510
    assert result.z == pytest.approx(1.4509525, rel=1e-6)
    # the run's chance: 0.95^40 = 10^-0.891, times 40 starts: well above 0.00135
    assert result.run_log10_chance == pytest.approx(40 * math.log10(0.95))
    assert not result.flagged


def test_a_judge_with_few_labels_is_not_flagged_on_noise():
    few = pure.straight_lining([0] * 10, [VARIED] * 10, [15.0] * 10)
    assert few.z > pure.Z_FLAG  # what would flag twenty labels
    assert few.compared < pure.MIN_LABELS and not few.flagged


def test_a_harsher_judge_whose_grades_still_vary_is_not_flagged():
    rng = np.random.default_rng(3)
    grades = rng.permutation([0] * 48 + [1] * 16 + [2] * 8 + [3] * 8)
    result = pure.straight_lining(grades, [VARIED] * 80)
    assert result.mode_share == 0.6 and result.z > pure.Z_FLAG  # 0 is over-represented
    assert result.entropy > pure.ENTROPY_SHARE * result.expected_entropy  # but grades vary
    assert not result.flagged


def test_one_long_improbable_run_is_flagged_though_the_rest_varies():
    rng = np.random.default_rng(5)
    varied = list(rng.choice(5, size=60, p=VARIED))
    grades = varied[:30] + [0] * 25 + varied[30:]
    result = pure.straight_lining(grades, [VARIED] * 85)
    assert result.entropy > pure.ENTROPY_SHARE * result.expected_entropy
    assert result.run_length >= 25 and result.run_grade == 0
    assert result.run_log10_chance + math.log10(85) < math.log10(pure.RUN_CHANCE)
    assert result.flagged


@pytest.mark.parametrize("n", [20, 40, 150])
def test_careful_judges_drawn_from_the_others_grades_are_rarely_flagged(n):
    """The false alarms: judges whose grades follow the others' exactly (H0)."""
    rng = np.random.default_rng(n)
    rows = [VARIED, NOTHING, [0.1, 0.2, 0.4, 0.2, 0.1], [0.6, 0.3, 0.1, 0.0, 0.0]]
    flagged = 0
    for _ in range(400):
        chances = np.array([rows[i] for i in rng.integers(0, len(rows), size=n)])
        grades = [int(rng.choice(5, p=row)) for row in chances]
        flagged += pure.straight_lining(grades, chances).flagged
    assert flagged / 400 <= 0.01


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="one row of chances"):
        pure.straight_lining([0, 1], [VARIED])
    with pytest.raises(ValueError, match="seconds"):
        pure.straight_lining([0, 1], [VARIED] * 2, [1.0])
    with pytest.raises(ValueError, match="whole grades"):
        pure.attention([0, 0], [pure.GRADED] * 2, [0.0, 7.0], [1.0, 1.0], [0, 0])
    empty = pure.straight_lining([], np.zeros((0, 5)))
    assert empty.compared == 0 and not empty.flagged and math.isnan(empty.z)


def test_attention_compares_with_the_others_on_the_same_queries():
    """The issue's case, hand-made: three careful judges, one who clicks 0 at 12–18 s."""
    rng = np.random.default_rng(11)
    truth = rng.choice(4, size=(4, 10), p=[0.4, 0.3, 0.2, 0.1])  # 4 queries × 10 documents
    judge, status, grade, seconds, query = [], [], [], [], []

    def label(j, q, g, s):
        judge.append(j), status.append(pure.GRADED), grade.append(g)
        seconds.append(s), query.append(q)

    for j in range(3):
        for q in range(4):
            for d in range(10):
                noisy = int(np.clip(truth[q, d] + rng.choice([-1, 0, 0, 0, 1]), 0, 4))
                label(j, q, noisy, float(rng.uniform(8, 120)))
    for q in range(4):
        for _d in range(10):
            label(3, q, 0, float(rng.uniform(12, 18)))
    for _d in range(40):  # judge 4: every document of query 4 is off-topic, as all agree
        label(4, 4, 0, float(rng.uniform(30, 90)))
    for j in range(3):
        for _d in range(10):
            label(j, 4, 0, float(rng.uniform(8, 120)))
    signals = pure.attention(judge, status, grade, seconds, query)
    liner, careful = signals[3], signals[4]
    assert "straight" in liner.flags and "runs" not in liner.flags and "fast" not in liner.flags
    assert liner.straight.run_length == 40 and 12 <= liner.straight.run_median_seconds <= 18
    assert "straight" not in careful.flags and careful.straight.compared == 40
    assert all("straight" not in s.flags for s in signals[:3])
    without = pure.attention(judge, status, grade, seconds)  # no queries: no test
    assert without[3].straight is None and "straight" not in without[3].flags


@pytest.mark.django_db
def test_the_judges_page_and_rest_show_it_with_the_speed(client):
    coll = factories.collection("straight")
    boss = factories.user("boss")
    factories.member(coll, boss, Membership.Role.COORDINATOR)
    queries = [factories.query(coll, f"q{i}") for i in range(4)]
    docs = [factories.document(coll, f"d{i}") for i in range(10)]
    rng = np.random.default_rng(2)
    truth = rng.choice(4, size=(4, 10), p=[0.4, 0.3, 0.2, 0.1])
    careful = [factories.human_judge(factories.user(f"c{i}")) for i in range(3)]
    for judge in careful:
        for qi, q in enumerate(queries):
            for di, d in enumerate(docs):
                g = int(np.clip(truth[qi, di] + rng.choice([-1, 0, 0, 1]), 0, 4))
                services.judgment_record(
                    judge=judge, query=q, document=d, grade=g, seconds=float(rng.uniform(8, 120))
                )
    liner = factories.human_judge(factories.user("liner"))
    for q in queries:
        for d in docs:
            services.judgment_record(
                judge=liner, query=q, document=d, grade=0, seconds=float(rng.uniform(12, 18))
            )
    rows = {r.name: r for r in selectors.judge_attention(collection=coll)}
    assert "straight" in rows["liner"].signals.flags
    body = client_for(boss).get(f"/api/v1/collections/{coll.slug}/judges/attention/").json()
    mine = next(r for r in body["results"] if r["name"] == "liner")
    assert "straight" in mine["flags"]
    assert mine["straight"]["run_length"] == 40 and mine["straight"]["run_grade"] == 0
    assert 12 <= mine["straight"]["run_median_seconds"] <= 18
    assert body["results"][0]["name"] == "liner"  # flagged first
    client.force_login(boss)
    page = client.get(reverse("judging:judge_list", args=[coll.slug])).content.decode()
    row = page.split(f'data-judge="{liner.pk}"')[1].split("</tr>")[0]
    assert "straight-lining" in row and "40 × grade 0 in a row" in row and " s each" in row
