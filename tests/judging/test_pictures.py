"""Agreement and progress pictures: the numbers behind them, and their text alternatives."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from judging import selectors_pictures, services
from judging.agreement import selectors as selectors_agreement
from judging.models import Judgment, Membership
from tests import factories

pytestmark = pytest.mark.django_db

# (judge1 grade, judge2 grade) on six pairs; judge3 grades only the first two.
GRADES = [(0, 0), (1, 2), (2, 2), (3, 4), (4, 4), (2, 1)]


@pytest.fixture
def world():
    coll = factories.collection("pics", name="Pictures")
    q = factories.query(coll, "q1")
    docs = [factories.document(coll, f"d{i}") for i in range(len(GRADES))]
    for d in docs:
        factories.pool_entry(coll, q, d)
    judges = [factories.human_judge(factories.user(f"j{i}")) for i in (1, 2, 3)]
    for d, (g1, g2) in zip(docs, GRADES, strict=True):
        services.judgment_record(judge=judges[0], query=q, document=d, grade=g1)
        services.judgment_record(judge=judges[1], query=q, document=d, grade=g2)
    for d in docs[:2]:
        services.judgment_record(judge=judges[2], query=q, document=d, grade=3)
    coord = factories.user("cora")
    factories.member(coll, coord, role=Membership.Role.COORDINATOR)
    return {"coll": coll, "judges": judges, "coord": coord, "query": q, "docs": docs}


def test_confusion_counts_by_hand(world):
    j1, j2, _ = world["judges"]
    counts = selectors_pictures.confusion_counts(collection=world["coll"], a_id=j1.pk, b_id=j2.pk)
    expected = [[0] * 5 for _ in range(5)]
    for a, b in GRADES:
        expected[a][b] += 1
    assert counts == expected
    assert sum(counts[g][g] for g in range(5)) == 3


def test_heatmap_matrix_is_the_pairwise_quadratic_kappa(world):
    report = selectors_agreement.agreement_report(collection=world["coll"])
    judges, matrix = selectors_pictures.kappa_matrix(report)
    assert [m[i] for i, m in enumerate(matrix)] == [1.0] * 3
    for pair in report.pairwise:
        i = [j.judge_id for j in judges].index(pair.a.judge_id)
        j = [j.judge_id for j in judges].index(pair.b.judge_id)
        if pair.cohen_kappa_quadratic.defined:
            assert matrix[i][j] == matrix[j][i] == pytest.approx(pair.cohen_kappa_quadratic.value)


def test_progress_is_cumulative_per_day(world):
    j1 = world["judges"][0]
    day1 = timezone.now() - dt.timedelta(days=2)
    Judgment.objects.filter(judge=j1, document__in=world["docs"][:2]).update(created_at=day1)
    series = dict(selectors_pictures.progress_over_time(collection=world["coll"]))
    points = series[j1.name]
    assert [n for _d, n in points] == [2, 6]
    assert points[0][0] == day1.date()


def test_pages_carry_the_pictures_with_text(world, client):
    client.force_login(world["coord"])
    agreement = reverse("judging:collection_agreement", args=[world["coll"].slug])
    # Each picture beside the numbers it draws (issue 41): the grade mix on the Judges tab,
    # the heatmap and the confusion matrix of two judges on the Agreement tab.
    judges = client.get(agreement, {"tab": "judges"}).content.decode()
    both = client.get(agreement, {"tab": "agreement"}).content.decode()
    # the grade mix is drawn for a desk and a phone (chart_text.for_screens)
    assert judges.count('role="img"') == 2 and judges.count('class="chart-wide"') == 1
    assert "chart-grade-mix" in judges and "chart-heatmap" not in judges
    assert both.count('role="img"') == 2 and "chart-grade-mix" not in both
    assert "chart-heatmap" in both and "chart-confusion" in both
    assert both.index('id="pairwise-agreement"') < both.index("chart-heatmap")
    assert 'name="pic"' not in both + judges and 'aria-label="Pictures"' not in both + judges
    coverage = client.get(agreement, {"tab": "coverage"}).content.decode()
    assert 'role="img"' not in coverage
    # old links to the Pictures tab open the tab that now holds the picture
    old_mix = client.get(agreement, {"tab": "pictures", "pic": "mix"}).content.decode()
    assert "chart-grade-mix" in old_mix
    old_heatmap = client.get(agreement, {"tab": "pictures"}).content.decode()
    assert "chart-heatmap" in old_heatmap and "chart-confusion" in old_heatmap
    one, three = world["judges"][0], world["judges"][2]
    two = client.get(agreement, {"a": one.pk, "b": three.pk}).content.decode()
    assert f"Grades of {one.name} (rows) against {three.name} (columns)" in two
    html = judges + both
    assert "Quadratic-weighted Cohen&#x27;s κ, judge × judge" in html
    assert "<desc>6 pairs graded by both; 3 with the same grade." in html
    detail = client.get(  # the collection page's Progress tab
        reverse("judging:collection_detail", args=[world["coll"].slug]), {"tab": "progress"}
    )
    assert "Pairs judged over time, per judge" in detail.content.decode()
    assert "j1: 6 judged by" in detail.content.decode()
