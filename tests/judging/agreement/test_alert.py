"""The collection page warns about judges who disagree; new coefficients match references."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judging import services
from judging.adjudication import services as adj
from judging.agreement import selectors as selectors_agreement
from judging.agreement.selectors import actionable_agreement
from judging.models import Membership
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def graded(coll):
    boss = factories.user("boss")
    factories.member(coll, boss, Membership.Role.COORDINATOR)
    docs = [factories.document(coll, f"d{i}") for i in range(6)]
    q = factories.query(coll, "q1")
    judges = {n: factories.human_judge(factories.user(n)) for n in ("ann", "bob", "cid")}
    grades = {
        "ann": [0, 1, 2, 3, 4, 2],
        "bob": [0, 1, 2, 3, 4, 3],
        "cid": [4, 3, 0, 1, 2, 0],  # disagrees with everyone
    }
    for name, row in grades.items():
        for d, g in zip(docs, row, strict=True):
            services.judgment_record(judge=judges[name], query=q, document=d, grade=g, seconds=g)
    return boss, q, docs, judges, grades


def test_alert_on_the_collection_page(client, coll, graded):
    boss = graded[0]
    # ann and bob agree with the others on 5/12 (cid drags them down), cid on 0.
    coll.agreement_alert_threshold = 0.3
    coll.save()
    client.force_login(boss)
    html = client.get(f"/c/{coll.slug}/").content.decode()
    assert 'id="agreement-alert"' in html
    assert "<strong>cid</strong>" in html and "<strong>ann</strong>" not in html
    coll.agreement_alert_threshold = 0.0
    coll.save()
    assert 'id="agreement-alert"' not in client.get(f"/c/{coll.slug}/").content.decode()


def test_figures_against_adjudicated_grades(coll, graded):
    boss, q, docs, _judges, _grades = graded
    adj.adjudication_record(query=q, document=docs[5], grade=3, reason="r", actor=boss)
    report = actionable_agreement(collection=coll)
    rows = {r.judge.name: r for r in report.judges}
    assert rows["bob"].adjudicated == 1 and rows["bob"].agreement_adjudicated == 1.0
    assert rows["ann"].bias_adjudicated == -1.0
    assert rows["cid"].bias_adjudicated == -3.0
    # ann vs bob agree on 5 of 6, vs cid on 0 of 6: 5/12.
    assert rows["ann"].agreement == pytest.approx(5 / 12)
    assert rows["ann"].median_seconds == 2.0
    assert [r.judge.name for r in report.alerts] == ["ann", "bob", "cid"]  # threshold 0.5
    assert rows["cid"].reliability < rows["ann"].reliability


def test_new_coefficients_equal_reference_implementations(coll, graded):
    grades = graded[4]
    report = selectors_agreement.agreement_report(collection=coll)
    pair = next(p for p in report.pairwise if {p.a.name, p.b.name} == {"ann", "bob"})
    assert pair.cohen_kappa_linear.value == pytest.approx(
        cohen_kappa_score(grades["ann"], grades["bob"], weights="linear", labels=range(5))
    )
    humans = next(g for g in report.overall if g.group == "human")
    matrix = np.array([grades["ann"], grades["bob"], grades["cid"]], dtype=float)
    for level, value in (("nominal", humans.alpha_nominal), ("ratio", humans.alpha_ratio)):
        expected = krippendorff.alpha(
            reliability_data=matrix, level_of_measurement=level, value_domain=range(5)
        )
        assert value.value == pytest.approx(expected)
