"""Reading, renaming and deleting runs, and their per-query scores."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging import services as judging_services
from metrics.live import store
from metrics.models import Run, RunQuery
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db
NDCG = "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"


def run_list(world) -> str:
    return reverse("metrics-api:run-list", args=[world.coll.slug])


def run_detail(world, run) -> str:
    return reverse("metrics-api:run-detail", args=[world.coll.slug, run.pk])


def run_scores(world, run) -> str:
    return reverse("metrics-api:run-scores", args=[world.coll.slug, run.pk])


def publish_judgments(world) -> None:
    """Publish the judgment list: teams then see every score (metrics.visibility)."""
    world.coll.judgments_published = True
    world.coll.save(update_fields=["judgments_published"])


def test_list_shows_own_runs_with_counts_and_scores(world, api, runs):
    hidden = api("alice").get(run_list(world)).json()["results"][0]
    assert hidden["scores"] == {NDCG: None, "Judged@10": None}  # the default: hidden
    publish_judgments(world)
    response = api("alice").get(run_list(world))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 1
    (item,) = body["results"]
    assert item["id"] == runs["alpha"].pk
    assert item["tag"] == "alpha-bm25"
    assert item["team"] == {"id": world.alpha.pk, "name": "Alpha"}
    assert item["submitted_by"] == "alice"
    assert item["description"] == "BM25 baseline"
    assert item["status"] == "scored"
    assert item["query_count"] == 2
    assert item["scores"] == {NDCG: 0.8, "Judged@10": 0.5}
    assert item["scored_version"] == world.coll.judgments_version
    assert item["stale"] is False
    assert {"line_count", "unknown_document_count", "submitted_at", "scored_at"} <= set(item)


def test_coordinator_lists_every_run_newest_first(world, api, runs):
    body = api("cora").get(run_list(world)).json()
    assert [r["tag"] for r in body["results"]] == ["beta-dense", "alpha-bm25"]


def test_run_turns_stale_when_the_judgment_list_changes_in_bulk(world, api, runs):
    # Bulk changes are rescored in the background after commit (never, in this test).
    judging_services.judgments_import(
        collection=world.coll,
        judge=world.users["cora"].judge,
        rows=[judging_services.JudgmentRow(1, "q2", "d6", grade=4)],
    )
    item = api("alice").get(run_detail(world, runs["alpha"])).json()
    assert item["stale"] is True


def test_one_judgment_leaves_no_run_stale(world, api, runs):
    judge = world.users["cora"].judge
    judging_services.judgment_record(
        judge=judge, query=world.queries["q2"], document=world.docs["d6"], grade=4
    )
    item = api("alice").get(run_detail(world, runs["alpha"])).json()
    world.coll.refresh_from_db()
    assert item["stale"] is False
    assert item["scored_version"] == world.coll.judgments_version


def test_scores_per_query(world, api, runs):
    hidden = api("bob").get(run_scores(world, runs["beta"])).json()
    assert hidden["visibility"] == "none" and hidden["per_query"] == {}
    assert set(hidden["aggregate"].values()) == {None}
    publish_judgments(world)
    response = api("bob").get(run_scores(world, runs["beta"]))
    assert response.status_code == 200
    body = response.json()
    measures = body["measures"]
    assert measures[0] == NDCG and "Judged@10" in measures
    assert body["version"] == world.coll.judgments_version
    assert body["stale"] is False
    assert body["aggregate"][NDCG] == 0.6
    assert body["aggregate"]["P(rel=1)@10"] is None  # not stored: no value
    assert set(body["per_query"]) == {"q1", "q2"}
    assert body["per_query"]["q1"][NDCG] == 0.6
    assert body["per_query"]["q2"][NDCG] is None
    assert set(body["per_query"]["q1"]) == set(measures)


def test_scores_leave_out_queries_without_stored_scores(world, api, runs):
    q2 = world.queries["q2"]
    column = store.columns_read(world.coll.pk, [q2.pk])[q2.pk]
    board = store.board_read(world.coll.pk)
    store.columns_write(  # the query no longer scores alpha (as when its grades are gone)
        world.coll.pk, [store.apply(board, column, [runs["alpha"].pk], None)], version=0
    )
    assert api("cora").get(run_scores(world, runs["alpha"])).json()["per_query"].keys() == {"q1"}
    publish_judgments(world)
    body = api("alice").get(run_scores(world, runs["alpha"])).json()
    assert list(body["per_query"]) == ["q1"]


def test_owner_renames_and_describes(world, api, runs):
    response = api("amy").patch(
        run_detail(world, runs["alpha"]),
        {"tag": " alpha-v2 ", "description": "tuned"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json()["tag"] == "alpha-v2"
    runs["alpha"].refresh_from_db()
    assert (runs["alpha"].tag, runs["alpha"].description) == ("alpha-v2", "tuned")


def test_rename_to_a_used_tag_is_refused(world, api, runs):
    response = api("alice").patch(
        run_detail(world, runs["alpha"]), {"tag": "beta-dense"}, format="json"
    )
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "tag"
    runs["alpha"].refresh_from_db()
    assert runs["alpha"].tag == "alpha-bm25"


def test_blank_tag_is_refused(world, api, runs):
    response = api("alice").patch(run_detail(world, runs["alpha"]), {"tag": ""}, format="json")
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "tag"


def test_owner_deletes_a_run_and_its_rankings(world, api, runs):
    response = api("alice").delete(run_detail(world, runs["alpha"]))
    assert response.status_code == 204
    assert not Run.objects.filter(pk=runs["alpha"].pk).exists()
    assert not RunQuery.objects.filter(run_id=runs["alpha"].pk).exists()
    assert Run.objects.filter(pk=runs["beta"].pk).exists()


def test_unknown_run_is_404(world, api, runs):
    response = api("cora").get(reverse("metrics-api:run-detail", args=[world.coll.slug, 999999]))
    assert response.status_code == 404
    assert errors_of(response) == [{"message": "Not found."}]


def test_put_is_not_allowed(world, api, runs):
    response = api("alice").put(run_detail(world, runs["alpha"]), {"tag": "x"}, format="json")
    assert response.status_code == 405
    errors_of(response)
