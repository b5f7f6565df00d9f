"""Gold pairs: accuracy by hand and against scikit-learn; the page and REST."""

from __future__ import annotations

import math

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from judging import services as judging_services
from judging.models import Membership
from judging.quality import services
from judging.quality.gold import gold_accuracy
from judging.quality.models import GoldPair
from tests import factories
from tests.api_client import client_for, errors_of

Role = Membership.Role


def test_accuracy_by_hand():
    a = gold_accuracy([0, 1, 2, 4, 3], [0, 2, 2, 2, 3], last=2)
    assert a.n == 5
    assert a.exact == pytest.approx(3 / 5)
    assert a.within_one == pytest.approx(4 / 5)
    assert a.mean_signed_deviation == pytest.approx((0 - 1 + 0 + 2 + 0) / 5)
    assert a.confusion[2] == (0, 1, 1, 0, 1)  # gold 2: judged 1, 2 and 4
    assert (a.last_n, a.last_exact) == (2, 0.5)  # (4 vs 2), (3 vs 3)


def test_accuracy_agrees_with_scikit_learn():
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 5, 400)
    judge = np.clip(gold + rng.integers(-1, 2, 400), 0, 4)
    a = gold_accuracy(judge, gold)
    want = cohen_kappa_score(judge, gold, weights="quadratic", labels=list(range(5)))
    assert a.kappa_quadratic == pytest.approx(want, abs=1e-12)
    assert np.array_equal(np.array(a.confusion), confusion_matrix(gold, judge, labels=range(5)))


def test_edge_cases():
    empty = gold_accuracy([], [])
    assert empty.n == 0 and math.isnan(empty.exact) and empty.kappa_reason
    same = gold_accuracy([2, 2], [2, 2])
    assert same.exact == 1.0 and math.isnan(same.kappa_quadratic) and same.kappa_reason
    for bad in (([1, 2], [1]), ([5], [1]), ([1.5], [1])):
        with pytest.raises(ValueError):
            gold_accuracy(*bad)
    with pytest.raises(ValueError, match="last"):
        gold_accuracy([1], [1], last=0)


@pytest.fixture
def setup(db):
    """Six gold pairs; 'ann' grades them all right, 'ben' one grade high on each."""
    coll = factories.collection("gold", agreement_alert_threshold=0.5)
    queries = [factories.query(coll, f"q{i}") for i in range(2)]
    docs = [factories.document(coll, f"d{i}") for i in range(3)]
    boss = factories.user("boss")
    factories.member(coll, boss, Role.COORDINATOR)
    judges = {}
    for name in ("ann", "ben"):
        usr = factories.user(name)
        factories.member(coll, usr, Role.JUDGE)
        judges[name] = factories.human_judge(usr)
    grades = {}
    for i, (q, d) in enumerate((q, d) for q in queries for d in docs):
        grades[(q.pk, d.pk)] = i % 4
        services.gold_set(query=q, document=d, grade=i % 4, reason="r", actor=boss)
        judging_services.judgment_record(judge=judges["ann"], query=q, document=d, grade=i % 4)
        judging_services.judgment_record(judge=judges["ben"], query=q, document=d, grade=i % 4 + 1)
    return coll, boss, judges, queries, docs


@pytest.mark.django_db
def test_services_refuse_bad_input_and_update_in_place(setup):
    coll, boss, _judges, queries, docs = setup
    other = factories.collection("other")
    stranger = factories.document(other, "x")
    for kwargs, field in (
        ({"grade": 5}, "grade"),
        ({"grade": 1, "reason": "a\x00"}, "reason"),
        ({"grade": 1, "document": stranger}, "document"),
    ):
        args = {"query": queries[0], "document": docs[0], **kwargs}
        with pytest.raises(ValidationError) as caught:
            services.gold_set(**args)
        assert field in caught.value.message_dict
    services.gold_set(query=queries[0], document=docs[0], grade=4, reason="changed")
    gold = GoldPair.objects.get(query=queries[0], document=docs[0])
    assert (gold.grade, gold.reason, gold.created_by) == (4, "changed", boss)
    assert GoldPair.objects.filter(collection=coll).count() == 6


@pytest.mark.django_db
def test_rest_gold_pairs_and_accuracy(setup):
    coll, boss, judges, _queries, _docs = setup
    api = client_for(boss)
    base = f"/api/v1/collections/{coll.slug}/"
    listed = api.get(base + "gold/").json()["results"]
    assert len(listed) == 6 and {"qid", "docno", "grade", "reason"} <= set(listed[0])
    new = api.post(base + "gold/", {"qid": "q1", "docno": "d2", "grade": 3}, format="json")
    assert new.status_code == 200  # it was gold already: changed
    bad = api.post(base + "gold/", {"qid": "nope", "docno": "d9", "grade": 7}, format="json")
    assert bad.status_code == 400
    assert {e.get("field") for e in errors_of(bad)} >= {"grade"}
    unknown = api.post(base + "gold/", {"qid": "nope", "docno": "d9", "grade": 1}, format="json")
    assert {e.get("field") for e in errors_of(unknown)} == {"qid", "docno"}
    accuracy = {r["name"]: r for r in api.get(base + "judges/gold/").json()["results"]}
    assert accuracy["ben"]["exact"] == pytest.approx(0.0) and accuracy["ben"]["alert"]
    assert accuracy["ben"]["mean_signed_deviation"] > 0
    # q1/d2 is now gold 3; ann graded it 1 (5 % 4), so she has 5 of 6 right.
    assert accuracy["ann"]["exact"] == pytest.approx(5 / 6) and not accuracy["ann"]["alert"]
    assert sum(map(sum, accuracy["ann"]["confusion"])) == 6
    gold_id = listed[0]["id"]
    assert api.delete(base + f"gold/{gold_id}/").status_code == 204
    assert not GoldPair.objects.filter(pk=gold_id).exists()
    judge_api = client_for(judges["ann"].user)
    for url in ("gold/", "judges/gold/", f"gold/{listed[1]['id']}/"):
        response = judge_api.get(url if url.startswith("/") else base + url)
        assert response.status_code in (403, 405)
    assert judge_api.delete(base + f"gold/{listed[1]['id']}/").status_code == 403


@pytest.mark.django_db
def test_page_marks_a_pair_and_shows_accuracy(client, setup):
    coll, boss, judges, _queries, _docs = setup
    client.force_login(boss)
    url = reverse("judging:gold_list", args=[coll.slug])
    page = client.get(url)
    html = page.content.decode()
    assert page.status_code == 200 and 'data-field="gold_pairs">6<' in html
    ben = html.split(f'data-judge="{judges["ben"].pk}"')[1].split("</details>")[0]
    assert "below threshold" in ben
    added = client.post(url, {"qid": "q0", "docno": "d1", "grade": "0", "reason": "off topic"})
    assert added.status_code == 303
    assert GoldPair.objects.get(query__external_id="q0", document__external_id="d1").grade == 0
    refused = client.post(url, {"qid": "q9", "docno": "d1", "grade": "0"})
    assert refused.status_code == 400 and "No query" in refused.content.decode()
    client.force_login(judges["ann"].user)
    assert client.get(url).status_code == 403
