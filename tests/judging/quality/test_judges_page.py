"""The Judges page and REST list: the selector's signals are the pure function's."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from judging import services
from judging.models import Judgment, Membership
from judging.quality import attention
from tests import factories
from tests.api_client import client_for

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def setup():
    """Four human judges label the same 30 pairs; 'dash' takes a second a label."""
    coll = factories.collection("attention")
    queries = [factories.query(coll, f"q{i}") for i in range(3)]
    docs = [factories.document(coll, f"d{i}") for i in range(10)]
    boss = factories.user("boss")
    factories.member(coll, boss, Role.COORDINATOR)
    rng = np.random.default_rng(5)
    judges = {}
    for name, scale in (("ann", 25.0), ("ben", 30.0), ("cat", 20.0), ("dash", 1.0)):
        usr = factories.user(name)
        factories.member(coll, usr, Role.JUDGE)
        judge = judges[name] = factories.human_judge(usr)
        for q in queries:
            for d in docs:
                cannot = name == "cat" and (q.external_id, d.external_id) == ("q0", "d9")
                status = "cannot_judge" if cannot else "graded"
                services.judgment_record(
                    judge=judge,
                    query=q,
                    document=d,
                    grade=int(rng.integers(0, 5)) if status == "graded" else None,
                    status=status,
                    seconds=float(rng.lognormal(np.log(scale), 0.3)),
                )
    return coll, boss, judges


def _expected(coll):
    """Run the pure function on the labels as read straight from the table."""
    rows = list(
        Judgment.objects.filter(collection=coll)
        .order_by("judge_id", "created_at", "id")
        .values_list("judge_id", "status", "grade", "seconds")
    )
    ids = sorted({r[0] for r in rows})
    codes = {"graded": attention.GRADED, "cannot_judge": attention.CANNOT_JUDGE, "later": 2}
    result = attention.attention(
        [ids.index(r[0]) for r in rows],
        [codes[r[1]] for r in rows],
        [np.nan if r[2] is None else r[2] for r in rows],
        [r[3] for r in rows],
    )
    return dict(zip(ids, result, strict=True))


def test_rest_list_equals_the_pure_function_and_puts_flagged_judges_first(setup):
    coll, boss, judges = setup
    response = client_for(boss).get(f"/api/v1/collections/{coll.slug}/judges/attention/")
    assert response.status_code == 200
    results = response.json()["results"]
    assert results[0]["name"] == "dash"
    expected = _expected(coll)
    for row in results:
        want = expected[row["judge_id"]]
        assert row["flags"] == list(want.flags)
        assert row["median_seconds"] == pytest.approx(want.median_seconds)
        assert row["labels"] == want.labels == 30
        assert row["cannot_judge_share"] == pytest.approx(want.cannot_judge_share)
    assert results[0]["flags"] == ["fast"]
    assert {r["name"]: r["flags"] for r in results[1:]} == {"ann": [], "ben": [], "cat": []}
    judge = judges["ann"].user
    assert (
        client_for(judge).get(f"/api/v1/collections/{coll.slug}/judges/attention/").status_code
        == 403
    )


def test_page_shows_the_flag_with_its_numbers(client, setup):
    coll, boss, judges = setup
    client.force_login(boss)
    response = client.get(reverse("judging:judge_list", args=[coll.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>Judges – Attention · Graded</title>" in html  # the page's blocks are its own
    assert html.count('id="canaries-title"') == 1
    assert 'data-field="flagged">1<' in html
    dash = html.split(f'data-judge="{judges["dash"].pk}"')[1].split("</tr>")[0]
    assert "fast" in dash and "row-flagged" in html
    cat = html.split(f'data-judge="{judges["cat"].pk}"')[1].split("</tr>")[0]
    assert "3%" in cat and "none" in cat  # 1 of 30 "can't judge" against 0 of 90: no flag
    client.force_login(judges["ann"].user)
    assert client.get(reverse("judging:judge_list", args=[coll.slug])).status_code == 403


def test_query_count_does_not_grow_with_judges(client, setup, django_assert_max_num_queries):
    coll, boss, _judges = setup
    client.force_login(boss)
    with django_assert_max_num_queries(12):
        assert client.get(reverse("judging:judge_list", args=[coll.slug])).status_code == 200
