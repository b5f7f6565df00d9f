"""The live judgment list follows every judgment change under the aggregation policy."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from judging import services
from judging.models import Collection, Judgment, JudgmentEvent, LiveGrade, PoolEntry, Query
from tests import factories

pytestmark = pytest.mark.django_db
Row = services.JudgmentRow


def _live(coll):
    return {
        (g.query.external_id, g.document.external_id): g.grade
        for g in LiveGrade.objects.filter(collection=coll).select_related("query", "document")
    }


@pytest.fixture
def setup(coll):
    q = factories.query(coll, "q1")
    docs = [factories.document(coll, f"d{i}") for i in range(3)]
    humans = [factories.human_judge(factories.user()) for _ in range(3)]
    llm = factories.llm_judge()
    return q, docs, humans, llm


def test_lower_median_of_humans(coll, setup):
    q, docs, humans, _ = setup
    for judge, grade in zip(humans[:2], [1, 3], strict=True):
        services.judgment_record(judge=judge, query=q, document=docs[0], grade=grade)
    assert _live(coll) == {("q1", "d0"): 1.0}
    services.judgment_record(judge=humans[2], query=q, document=docs[0], grade=4)
    assert _live(coll) == {("q1", "d0"): 3.0}
    live = LiveGrade.objects.get()
    assert (live.human_count, live.llm_count) == (3, 0)
    assert live.version == Collection.objects.get(pk=coll.pk).judgments_version


def test_llm_used_only_without_human_grade(coll, setup):
    q, docs, humans, llm = setup
    services.judgment_record(judge=llm, query=q, document=docs[1], grade=4)
    assert _live(coll) == {("q1", "d1"): 4.0}
    services.judgment_record(judge=humans[0], query=q, document=docs[1], grade=0)
    assert _live(coll) == {("q1", "d1"): 0.0}


def test_non_graded_statuses_are_excluded(coll, setup):
    q, docs, humans, llm = setup
    services.judgment_record(judge=humans[0], query=q, document=docs[0], grade=2)
    services.judgment_record(judge=llm, query=q, document=docs[0], grade=4)
    services.judgment_record(
        judge=humans[0], query=q, document=docs[0], status=Judgment.Status.CANNOT_JUDGE
    )
    assert _live(coll) == {("q1", "d0"): 4.0}
    services.judgment_record(judge=llm, query=q, document=docs[0], status=Judgment.Status.LATER)
    assert _live(coll) == {}


def test_delete_updates_live_list(coll, setup):
    q, docs, humans, _ = setup
    j = services.judgment_record(judge=humans[0], query=q, document=docs[2], grade=3)
    services.judgment_delete(judgment=j)
    assert _live(coll) == {}


def test_import_is_atomic_and_names_every_bad_line(coll, setup):
    _q, _docs, humans, _ = setup
    rows = [
        Row(1, "q1", "d0", grade=2),
        Row(2, "q9", "d0", grade=2),
        Row(3, "q1", "nope", grade=2),
        Row(4, "q1", "d1", grade=7),
        Row(5, "q1", "d0", grade=1),
        Row(6, "q1", "d2", grade=3, status="later"),
    ]
    with pytest.raises(ValidationError) as exc:
        services.judgments_import(collection=coll, judge=humans[0], rows=rows)
    messages = exc.value.messages
    assert [m.split(":")[0] for m in messages] == ["line 2", "line 3", "line 4", "line 5", "line 6"]
    assert "first on line 1" in messages[3]
    assert "grade" in messages[2]
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists()
    assert Collection.objects.get(pk=coll.pk).judgments_version == 0


def test_import_records_history_and_live_list(coll, setup):
    q, docs, _humans, llm = setup
    factories.pool_entry(coll, q, docs[0])
    services.judgment_record(judge=llm, query=q, document=docs[0], grade=1)
    summary = services.judgments_import(
        collection=coll,
        judge=llm,
        rows=[Row(1, "q1", "d0", grade=3), Row(2, "q1", "d1", grade=2, abstain_probability=0.25)],
        channel=JudgmentEvent.Channel.API,
    )
    assert (summary.created, summary.changed, summary.unchanged) == (1, 1, 0)
    assert _live(coll) == {("q1", "d0"): 3.0, ("q1", "d1"): 2.0}
    assert JudgmentEvent.objects.filter(channel="api").count() == 2
    change = JudgmentEvent.objects.get(channel="api", action="change")
    assert (change.before["grade"], change.after["grade"]) == (1, 3)
    assert PoolEntry.objects.get().graded_count == 1
    again = services.judgments_import(
        collection=coll, judge=llm, rows=[Row(1, "q1", "d0", grade=3)]
    )
    assert (again.created, again.changed, again.unchanged) == (0, 0, 1)
    assert JudgmentEvent.objects.count() == 3


def test_rebuild_applies_a_new_policy(coll, setup):
    q, docs, humans, _ = setup
    for judge, grade in zip(humans, [1, 2, 4], strict=True):
        services.judgment_record(judge=judge, query=q, document=docs[0], grade=grade)
    Collection.objects.filter(pk=coll.pk).update(aggregation_policy="mean_human_then_llm")
    coll.refresh_from_db()
    services.live_grades_rebuild(collection=coll)
    assert _live(coll) == {("q1", "d0"): pytest.approx(7 / 3)}


def test_changing_the_policy_in_the_admin_rebuilds_the_live_list(client, coll, setup):
    q, docs, humans, _ = setup
    for judge, grade in zip(humans, [1, 2, 4], strict=True):
        services.judgment_record(judge=judge, query=q, document=docs[0], grade=grade)
    client.force_login(factories.user("root", is_staff=True, is_superuser=True))
    url = f"/admin/judging/collection/{coll.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {
        name: value
        for name, value in form.initial.items()
        if name in form.fields and value is not None
    }
    data.update(
        {
            "aggregation_policy": "mean_human_then_llm",
            "grade_names": '["a", "b", "c", "d", "e"]',
            "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0",
        }
    )
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert _live(coll) == {("q1", "d0"): pytest.approx(7 / 3)}


@pytest.mark.parametrize("bulk_action", [False, True])
def test_the_admin_refuses_to_delete_a_judged_document(client, coll, setup, bulk_action):
    """Its judgments (history) are read-only there; services_progress.rows_delete is the way."""
    q, docs, humans, _ = setup
    services.judgment_record(judge=humans[0], query=q, document=docs[0], grade=3)
    version = Collection.objects.get(pk=coll.pk).judgments_version
    client.force_login(factories.user("root", is_staff=True, is_superuser=True))
    if bulk_action:
        response = client.post(
            "/admin/judging/document/",
            {"action": "delete_selected", "_selected_action": [docs[0].pk], "post": "yes"},
        )
        assert response.status_code in (200, 403)  # the confirmation page lists the refusal
    else:
        response = client.post(f"/admin/judging/document/{docs[0].pk}/delete/", {"post": "yes"})
        assert response.status_code == 403
    assert LiveGrade.objects.filter(document_id=docs[0].pk).exists()
    assert Collection.objects.get(pk=coll.pk).judgments_version == version


def test_admin_deletes_unjudged_queries_and_documents_keeping_the_counters(client, coll, setup):
    """Rows without judgments can go (one at a time or in bulk); the counters stay exact."""
    from judging.progress import selectors as selectors_progress

    q, docs, humans, _ = setup
    services.judgment_record(judge=humans[0], query=q, document=docs[0], grade=2)
    spare = [factories.query(coll, f"spare{i}") for i in range(3)]
    services.pool_add_ids(
        collection=coll,
        pairs=[(s.pk, d.pk) for s in spare for d in docs[1:3]] + [(q.pk, docs[2].pk)],
        source=PoolEntry.Source.MANUAL,
    )
    version = Collection.objects.get(pk=coll.pk).judgments_version
    client.force_login(factories.user("root", is_staff=True, is_superuser=True))
    url = f"/admin/judging/query/{spare[0].pk}/delete/"
    assert client.post(url, {"post": "yes"}).status_code == 302
    response = client.post(
        "/admin/judging/query/",
        {"action": "delete_selected", "_selected_action": [s.pk for s in spare[1:]], "post": "yes"},
    )
    assert response.status_code == 302
    url = f"/admin/judging/document/{docs[2].pk}/delete/"
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert not Query.objects.filter(pk__in=[s.pk for s in spare]).exists()
    assert selectors_progress.progress_problems(collection=coll) == []
    assert Collection.objects.get(pk=coll.pk).judgments_version == version  # no grade went
