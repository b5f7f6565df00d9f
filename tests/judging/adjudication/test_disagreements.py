"""Disagreement queue, adjudication pages and API: ordering, permissions, live scores."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from judging import services
from judging.models import Adjudication, Collection, JudgmentEvent, LiveGrade, Membership
from metrics import services as metrics_services
from tests import factories
from tests.api_client import client_for, errors_of
from tests.html import page_text

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def world(db):
    """Three queries; pairs with spreads 4, 1 (no majority), 2, 0 and a one-judge pair."""
    coll = factories.collection("dis", measures=["nDCG@10", "P@10"])
    users = {name: factories.user(name) for name in ("cora", "adam", "ann", "bob", "tim")}
    factories.member(coll, users["cora"], Role.COORDINATOR)
    factories.member(coll, users["adam"], Role.ADJUDICATOR)
    factories.member(coll, users["ann"], Role.JUDGE)
    factories.member(coll, users["bob"], Role.JUDGE)
    factories.member(coll, users["tim"], Role.TEAM)
    queries = {q: factories.query(coll, q, narrative=f"Narrative of {q}") for q in ("q1", "q2")}
    docs = {d: factories.document(coll, d) for d in ("d1", "d2", "d3", "d4", "d5")}
    ann, bob = (factories.human_judge(users[n]) for n in ("ann", "bob"))
    grades = {
        ("q1", "d1"): (0, 4),  # spread 4
        ("q1", "d2"): (1, 2),  # spread 1, no majority
        ("q2", "d3"): (1, 3),  # spread 2
        ("q2", "d4"): (2, 2),  # agreement
        ("q2", "d5"): (3, None),  # one judge
    }
    for (q, d), pair in grades.items():
        for judge, grade in zip((ann, bob), pair, strict=True):
            if grade is not None:
                services.judgment_record(
                    judge=judge, query=queries[q], document=docs[d], grade=grade, note=f"n{grade}"
                )
    team = metrics_services.team_create(collection=coll, name="T", members=[users["tim"]])
    return SimpleNamespace(coll=coll, users=users, queries=queries, docs=docs, team=team)


def _submit(world, tag, lines):
    content = "".join(f"{q} Q0 {d} {i} {10 - i} {tag}\n" for i, (q, d) in enumerate(lines))
    return metrics_services.run_submit(
        collection=world.coll,
        team=world.team,
        tag=tag,
        content=content.encode(),
        filename=f"{tag}.txt",
        user=None,
    )


def api(world, name):
    return client_for(world.users[name])


URL = "/api/v1/collections/dis/"


def test_queue_order_and_filters(world):
    body = api(world, "cora").get(URL + "disagreements/").json()
    pairs = [(r["query"], r["document"], r["spread"]) for r in body["results"]]
    # The collection's spread (2): spread 4, then spread 2. Two judges one grade apart
    # (q1/d2), agreement and a single judge are not disagreements.
    assert pairs == [("q1", "d1", 4), ("q2", "d3", 2)]
    assert body["count"] == 2
    first = body["results"][0]
    assert first["narrative"] == "Narrative of q1"
    assert {(label["judge"], label["grade"], label["note"]) for label in first["labels"]} == {
        ("ann", 0, "n0"),
        ("bob", 4, "n4"),
    }
    # Two different grades have no majority, but that is their spread, not a split.
    assert (first["majority"], first["no_majority"]) == (None, False)
    # Spread 1 lists the one-apart pair too; spread 3 lists only what spreads by 3.
    body = api(world, "cora").get(URL + "disagreements/?min_spread=1").json()
    assert [(r["query"], r["document"]) for r in body["results"]] == [
        ("q1", "d1"),
        ("q2", "d3"),
        ("q1", "d2"),
    ]
    body = api(world, "cora").get(URL + "disagreements/?min_spread=3").json()
    assert [(r["query"], r["document"], r["spread"]) for r in body["results"]] == [("q1", "d1", 4)]
    # A cut keeps the pairs judged on both sides of it: 1|2 splits (1, 2), (1, 3), (0, 4).
    body = api(world, "cora").get(URL + "disagreements/?min_spread=1&cut=2").json()
    assert {(r["query"], r["document"]) for r in body["results"]} == {
        ("q1", "d1"),
        ("q2", "d3"),
        ("q1", "d2"),
    }
    body = api(world, "cora").get(URL + "disagreements/?min_spread=1&cut=4").json()
    assert [(r["query"], r["document"]) for r in body["results"]] == [("q1", "d1")]
    body = api(world, "cora").get(URL + "disagreements/?min_spread=1&cut=1").json()
    assert [(r["query"], r["document"]) for r in body["results"]] == [("q1", "d1")]
    # A third and fourth judge: q1/d2 becomes (1, 2, 1, 2), a split without majority;
    # q2/d3 becomes (1, 3, 3), which has one.
    carl, dora = (factories.human_judge(factories.user(n)) for n in ("carl", "dora"))
    services.judgment_record(
        judge=carl, query=world.queries["q2"], document=world.docs["d3"], grade=3
    )
    for judge, grade in ((carl, 1), (dora, 2)):
        services.judgment_record(
            judge=judge, query=world.queries["q1"], document=world.docs["d2"], grade=grade
        )
    body = api(world, "cora").get(URL + "disagreements/?min_spread=1&no_majority=true").json()
    assert [(r["query"], r["document"], r["no_majority"]) for r in body["results"]] == [
        ("q1", "d2", True)
    ]
    body = api(world, "cora").get(URL + "disagreements/?min_spread=1").json()
    by_pair = {(r["query"], r["document"]): r for r in body["results"]}
    assert (by_pair["q2", "d3"]["majority"], by_pair["q2", "d3"]["no_majority"]) == (3, False)
    for bad in ("min_spread=9", "cut=0", "cut=5", "no_majority=maybe"):
        response = api(world, "cora").get(URL + "disagreements/?" + bad)
        assert response.status_code == 400, bad
        assert errors_of(response)[0]["field"] == bad.split("=")[0]


def test_queue_page_filters_say_what_they_do(world, client):
    client.force_login(world.users["cora"])
    rows = lambda html: re.findall(r'data-pair="([^"]+)"', html)  # noqa: E731
    html = client.get("/c/dis/disagreements/").content.decode()
    assert rows(html) == ["q1/d1", "q2/d3"]
    assert "spread by at least 2" in page_text(html)
    html = client.get("/c/dis/disagreements/?spread=3").content.decode()
    assert rows(html) == ["q1/d1"]
    assert "spread by at least 3" in page_text(html)
    html = client.get("/c/dis/disagreements/?spread=1&cut=4").content.decode()
    assert rows(html) == ["q1/d1"]
    # The cut's choices name the grades on either side.
    assert "Relevant | Highly relevant" in page_text(html)
    # A bad filter is reported, naming the field, and the rest still apply.
    html = client.get("/c/dis/disagreements/?spread=7&cut=4").content.decode()
    assert "Some filters were not applied." in page_text(html)
    assert "Spread at least:" in page_text(html)
    assert rows(html) == ["q1/d1"]


def test_pairs_in_many_runs_top_10_come_first(world):
    # q2/d3 is in the top 10 of both runs, q1/d1 of one: by impact q2/d3 leads.
    _submit(world, "a", [("q1", "d1"), ("q2", "d3")])
    _submit(world, "b", [("q2", "d3"), ("q2", "d4")])
    body = api(world, "cora").get(URL + "disagreements/?sort=impact&min_spread=1").json()
    assert [(r["query"], r["document"], r["runs_in_top"]) for r in body["results"]] == [
        ("q2", "d3", 2),
        ("q1", "d1", 1),
        ("q1", "d2", 0),
    ]
    # By spread first, impact breaks ties between equal spreads.
    body = api(world, "cora").get(URL + "disagreements/?min_spread=1").json()
    assert [r["runs_in_top"] for r in body["results"]] == [1, 2, 0]


def test_adjudicators_see_grades_without_names_and_judges_see_nothing(world, client):
    body = api(world, "adam").get(URL + "disagreements/").json()
    assert {label["judge"] for label in body["results"][0]["labels"]} == {"Judge 1", "Judge 2"}
    assert all(label["judge_id"] is None for label in body["results"][0]["labels"])
    for name in ("ann", "tim"):
        for path in (
            "disagreements/",
            "pair/?query=q1&document=d1",
            "adjudications/",
            "aggregation/",
            "agreement/judges/",
        ):
            assert api(world, name).get(URL + path).status_code == 403, (name, path)
        response = api(world, name).post(
            URL + "adjudications/",
            {"query": "q1", "document": "d1", "grade": 2, "reason": "x"},
            format="json",
        )
        assert response.status_code == 403
    outsider = factories.user("eve")
    assert client_for(outsider).get(URL + "disagreements/").status_code == 404
    # Pages: the same rules.
    for name, expected in (("cora", 200), ("adam", 200), ("ann", 403), ("tim", 403)):
        client.force_login(world.users[name])
        q, d = world.queries["q1"], world.docs["d1"]
        assert client.get("/c/dis/disagreements/").status_code == expected, name
        assert client.get(f"/c/dis/pairs/{q.pk}/{d.pk}/").status_code == expected, name
    client.force_login(world.users["adam"])
    html = client.get("/c/dis/disagreements/").content.decode()
    assert "Judge 1" in html and ">ann<" not in html
    client.force_login(world.users["cora"])
    html = client.get("/c/dis/disagreements/").content.decode()
    assert re.findall(r'<tr data-pair="([^"]+)"', html) == ["q1/d1", "q2/d3"]
    assert "<strong>ann</strong>" in html and "Narrative of q1" in html


def test_judges_card_never_shows_other_grades(world, client):
    client.force_login(world.users["bob"])
    html = page_text(client.get("/c/dis/judgments/"))
    notes = re.findall(r"<td data-label=\"Note\"[^>]*>(n\d)</td>", html)
    assert notes and "n0" not in notes  # ann's note on q1/d1 is hers alone
    assert "n0" not in html
    html = client.get("/c/dis/").content.decode()
    assert "Disagreement queue" not in html


def test_adjudication_over_the_api_moves_scores_live(world, django_capture_on_commit_callbacks):
    run = _submit(world, "live", [("q1", "d1"), ("q1", "d2")])
    before = run.scores
    assert LiveGrade.objects.get(query=world.queries["q1"], document=world.docs["d1"]).grade == 0
    with django_capture_on_commit_callbacks(execute=True):
        response = api(world, "adam").post(
            URL + "adjudications/",
            {"query": "q1", "document": "d1", "grade": 4, "reason": "Exactly on topic"},
            format="json",
        )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["grade"], body["in_force"], body["adjudicator"]) == (4, True, "adam")
    run.refresh_from_db()
    version = Collection.objects.get(pk=world.coll.pk).judgments_version
    assert run.scored_version == version
    assert run.scores != before
    pair = api(world, "cora").get(URL + "pair/?query=q1&document=d1").json()
    assert pair["live_grade"]["grade"] == 4.0
    assert pair["live_grade"]["adjudicated"] is True
    assert pair["live_grade"]["policy"] == "lower_median_human_then_llm"
    assert len(pair["live_grade"]["judge_ids"]) == 2
    assert pair["adjudication"]["reason"] == "Exactly on topic"
    # History: the pair's events include the adjudication, channel "adjudication".
    events = JudgmentEvent.objects.filter(channel="adjudication")
    assert events.count() == 1 and events.get().actor == world.users["adam"]
    # Settled: out of the queue, unless asked for.
    queue = api(world, "cora").get(URL + "disagreements/").json()
    assert ("q1", "d1") not in {(r["query"], r["document"]) for r in queue["results"]}
    queue = api(world, "cora").get(URL + "disagreements/?include_adjudicated=true").json()
    assert ("q1", "d1") in {(r["query"], r["document"]) for r in queue["results"]}
    # Revoke: back to the aggregate, scores back.
    pk = Adjudication.objects.get().pk
    with django_capture_on_commit_callbacks(execute=True):
        assert api(world, "adam").delete(URL + f"adjudications/{pk}/").status_code == 204
    run.refresh_from_db()
    assert run.scores == before
    assert api(world, "adam").delete(URL + f"adjudications/{pk}/").status_code == 400


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "q1", "document": "d1", "grade": 5, "reason": "x"}, "grade"),
        ({"query": "q1", "document": "d1", "grade": 2, "reason": ""}, "reason"),
        ({"query": "nope", "document": "d1", "grade": 2, "reason": "x"}, "query"),
        ({"query": "q1", "document": "nope", "grade": 2, "reason": "x"}, "document"),
        ({"query": "q1", "document": "d1", "grade": "2\x00", "reason": "x"}, "grade"),
    ],
)
def test_bad_adjudications_are_400(world, body, field):
    response = api(world, "cora").post(URL + "adjudications/", body, format="json")
    assert response.status_code == 400
    assert field in {e.get("field") for e in errors_of(response)}
    assert not Adjudication.objects.exists()


def test_adjudication_page_flow(world, client):
    client.force_login(world.users["cora"])
    q, d = world.queries["q1"], world.docs["d1"]
    url = f"/c/dis/pairs/{q.pk}/{d.pk}/"
    html = client.get(url).content.decode()
    assert "Narrative of q1" in html
    assert "policy “Lower median of the humans, LLMs fill the rest”" in html
    response = client.post(url, {"grade": "9", "reason": "x"})
    assert response.status_code == 400
    response = client.post(url, {"grade": "3", "reason": "Reviews count"})
    assert response.status_code == 303
    html = client.get(url).content.decode()
    assert 'data-field="adjudicated-grade">3<' in html and "Reviews count" in html
    response = client.post(url, {"revoke": "1"})
    assert response.status_code == 303
    assert Adjudication.objects.get().revoked_at is not None


def test_aggregation_settings_api(world, django_capture_on_commit_callbacks):
    run = _submit(world, "agg", [("q1", "d1"), ("q2", "d3")])
    body = api(world, "cora").get(URL + "aggregation/").json()
    assert body["aggregation_policy"] == "lower_median_human_then_llm"
    assert {p["name"] for p in body["policies"]} >= {"dawid_skene", "trimmed_mean_human_then_llm"}
    with django_capture_on_commit_callbacks(execute=True):
        response = api(world, "cora").patch(
            URL + "aggregation/",
            {"aggregation_policy": "mean_human_then_llm", "disagreement_spread": 3},
            format="json",
        )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["history"][0]["previous"] == "lower_median_human_then_llm"
    assert body["history"][0]["actor"] == "cora"
    run.refresh_from_db()
    assert run.scored_version == body["judgments_version"] == body["history"][0]["version"]
    response = api(world, "cora").patch(
        URL + "aggregation/", {"aggregation_policy": "nope"}, format="json"
    )
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "aggregation_policy"
    assert api(world, "adam").patch(URL + "aggregation/", {}, format="json").status_code == 403


def test_judge_figures_and_label_removal_api(world):
    body = api(world, "cora").get(URL + "agreement/judges/").json()
    rows = {r["judge"]["name"]: r for r in body["judges"]}
    # ann and bob share 4 pairs and agree on one (q2/d4).
    assert rows["ann"]["compared"] == 4 and rows["ann"]["agreement"] == pytest.approx(0.25)
    assert rows["ann"]["bias"] == pytest.approx((-4 - 1 - 2 + 0) / 4)
    assert [q["query"] for q in body["queries"]] == ["q1", "q2"]  # 0/2 before 1/2
    ann = factories.human_judge(world.users["ann"])
    response = api(world, "cora").delete(URL + f"judges/{ann.pk}/judgments/")
    assert response.json() == {"removed": 5}
    assert api(world, "cora").get(URL + "disagreements/").json()["count"] == 0
    assert api(world, "cora").delete(URL + "judges/999999/judgments/").status_code == 404
    response = api(world, "cora").put(URL + f"judges/{ann.pk}/quota/", {"quota": 3}, format="json")
    assert response.json() == {"quota": 3}


def test_run_count_does_not_change_query_counts(world, django_assert_num_queries):
    for i in range(3):
        _submit(world, f"r{i}", [("q1", "d1"), ("q2", "d3"), ("q1", "d2")])
    client = api(world, "cora")
    client.get(URL + "disagreements/")  # warm the token
    # token with user, collection, roles, judgments, adjudications, queries, documents,
    # live grades, rankings
    with django_assert_num_queries(9):
        response = client.get(URL + "disagreements/")
    assert response.json()["count"] == 2


@pytest.mark.parametrize(
    "params",
    ["", "?query=q1", "?query=q1%00&document=d1", "?query=" + "q" * 500 + "&document=d1"],
)
def test_bad_pair_lookups_are_400(world, params):
    response = api(world, "cora").get(URL + "pair/" + params)
    assert response.status_code == 400
    assert errors_of(response)


def test_hostile_queue_parameters_are_400(world):
    for params in ("?limit=abc", "?limit=0", "?offset=-1", "?sort=random", "?limit=99999"):
        response = api(world, "cora").get(URL + "disagreements/" + params)
        assert response.status_code == 400, params
