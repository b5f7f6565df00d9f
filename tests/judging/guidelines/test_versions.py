"""Versioned guidelines: every change of what judges read is a version each label records.

Covers the services (guidelines, a query's description and narrative, query imports, the
admin), every label write path (one label, a bulk import, its history), reconstructing
an older version's texts, agreement split by version (checked against the independent
``krippendorff`` package), the page and the REST API.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from judging import services
from judging.agreement import selectors as selectors_agreement
from judging.guidelines import selectors as selectors_guidelines
from judging.guidelines import services as guidelines_services
from judging.guidelines.models import GuidelineVersion
from judging.models import Collection, Judgment, JudgmentEvent, Membership, Query
from judging.services import JudgmentRow, QueryRow
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def setup():
    """A collection with two queries, four documents, a coordinator and two human judges."""
    coll = factories.collection("versions", guidelines="Grade by topic.")
    queries = [
        factories.query(coll, "q1", description="About cats.", narrative="Cats only."),
        factories.query(coll, "q2", description="About dogs.", narrative=""),
    ]
    docs = [factories.document(coll, f"d{i}") for i in range(4)]
    boss = factories.user("boss")
    factories.member(coll, boss, Role.COORDINATOR)
    judges = []
    for name in ("ann", "ben"):
        usr = factories.user(name)
        factories.member(coll, usr, Role.JUDGE)
        judges.append(factories.human_judge(usr))
    return coll, queries, docs, boss, judges


def _version(coll: Collection) -> int:
    return Collection.objects.values_list("guidelines_version", flat=True).get(pk=coll.pk)


def test_changing_the_guidelines_starts_a_version_and_unchanged_text_does_not(setup):
    coll, _queries, _docs, boss, _judges = setup
    assert _version(coll) == 1 and not GuidelineVersion.objects.exists()
    version = guidelines_services.guidelines_update(
        collection=coll, guidelines="Grade by topic and freshness.", note="Freshness", actor=boss
    )
    assert version.number == 2 and _version(coll) == 2
    assert version.changes == [
        {
            "field": "guidelines",
            "query": None,
            "before": "Grade by topic.",
            "after": "Grade by topic and freshness.",
        }
    ]
    assert (version.note, version.author) == ("Freshness", boss)
    assert (
        guidelines_services.guidelines_update(
            collection=coll, guidelines="Grade by topic and freshness."
        )
        is None
    )
    assert _version(coll) == 2 and GuidelineVersion.objects.count() == 1


@pytest.mark.parametrize(
    ("fields", "bad"),
    [
        ({"guidelines": "a\x00b"}, "guidelines"),
        ({"guidelines": "fine", "note": "n" * 501}, "note"),
        ({"guidelines": "x" * (guidelines_services.MAX_GUIDELINES_LENGTH + 1)}, "guidelines"),
    ],
)
def test_bad_text_names_its_field_and_writes_nothing(setup, fields, bad):
    coll = setup[0]
    with pytest.raises(ValidationError) as caught:
        guidelines_services.guidelines_update(collection=coll, **fields)
    assert set(caught.value.message_dict) == {bad}
    coll.refresh_from_db()
    assert (coll.guidelines, coll.guidelines_version) == ("Grade by topic.", 1)
    assert not GuidelineVersion.objects.exists()


def test_a_query_change_is_a_version_of_the_collection(setup):
    _coll, (q1, _q2), _docs, boss, _judges = setup
    version = guidelines_services.query_instructions_update(
        query=q1, description="About cats.", narrative="Cats and kittens.", actor=boss
    )
    assert version.number == 2
    assert version.changes == [
        {"field": "narrative", "query": "q1", "before": "Cats only.", "after": "Cats and kittens."}
    ]
    assert Query.objects.get(pk=q1.pk).narrative == "Cats and kittens."
    assert (
        guidelines_services.query_instructions_update(
            query=q1, description="About cats.", narrative="Cats and kittens."
        )
        is None
    )


def test_a_query_import_that_changes_instructions_is_one_version(setup):
    coll = setup[0]
    services.queries_import(
        collection=coll,
        rows=[
            QueryRow(1, "q1", "query q1", "About big cats.", "Cats only."),
            QueryRow(2, "q2", "query q2 reworded", "About dogs.", "Dogs, not wolves."),
            QueryRow(3, "q3", "new", "New one.", "Anything."),
        ],
    )
    (version,) = GuidelineVersion.objects.all()
    assert version.number == 2 and version.note == "Queries imported"
    assert {(c["query"], c["field"]) for c in version.changes} == {
        ("q1", "description"),
        ("q2", "narrative"),
    }
    # Only the query text changing (not what judges are told to look for): no version.
    services.queries_import(
        collection=coll, rows=[QueryRow(1, "q1", "query q1 again", "About big cats.", "Cats only.")]
    )
    assert _version(coll) == 2


def test_every_label_write_records_the_version_in_force(setup):
    coll, (q1, _q2), docs, _boss, (ann, ben) = setup
    first = services.judgment_record(judge=ann, query=q1, document=docs[0], grade=2)
    assert first.guidelines_version == 1
    guidelines_services.guidelines_update(collection=coll, guidelines="Clearer.")
    second = services.judgment_record(judge=ann, query=q1, document=docs[1], grade=1)
    assert second.guidelines_version == 2
    # Re-recording the same label writes nothing: it keeps the version it was given under.
    services.judgment_record(judge=ann, query=q1, document=docs[0], grade=2)
    assert Judgment.objects.get(pk=first.pk).guidelines_version == 1
    changed = services.judgment_record(judge=ann, query=q1, document=docs[0], grade=3)
    assert changed.guidelines_version == 2
    events = list(JudgmentEvent.objects.filter(judgment=first).order_by("id"))
    assert [e.after["guidelines_version"] for e in events] == [1, 2]
    # The bulk path: created and changed rows, and their history.
    guidelines_services.guidelines_update(collection=coll, guidelines="Clearest.")
    services.judgments_import(
        collection=coll,
        judge=ben,
        rows=[JudgmentRow(1, "q1", "d0", 0), JudgmentRow(2, "q2", "d1", 4)],
    )
    services.judgments_import(
        collection=coll,
        judge=ann,
        rows=[JudgmentRow(1, "q1", "d1", 1), JudgmentRow(2, "q2", "d2", 2)],  # d1 unchanged
    )
    got = {
        (j.judge_id, j.query.external_id, j.document.external_id): j.guidelines_version
        for j in Judgment.objects.select_related("query", "document")
    }
    assert got == {
        (ann.pk, "q1", "d0"): 2,
        (ann.pk, "q1", "d1"): 2,
        (ann.pk, "q2", "d2"): 3,
        (ben.pk, "q1", "d0"): 3,
        (ben.pk, "q2", "d1"): 3,
    }
    bulk_events = JudgmentEvent.objects.filter(channel="import").order_by("id")
    assert [e.after["guidelines_version"] for e in bulk_events] == [3, 3, 3]


def test_the_texts_of_an_older_version_are_rebuilt(setup):
    coll, (q1, _q2), _docs, _boss, _judges = setup
    guidelines_services.guidelines_update(collection=coll, guidelines="v2 guidelines")
    guidelines_services.query_instructions_update(
        query=q1, description="v3 description", narrative="Cats only."
    )
    guidelines_services.guidelines_update(collection=coll, guidelines="v4 guidelines")
    coll.refresh_from_db()
    at = selectors_guidelines.instructions_at
    assert at(collection=coll, number=4).guidelines == "v4 guidelines"
    assert at(collection=coll, number=4).queries == {}
    v2 = at(collection=coll, number=2)
    assert v2.guidelines == "v2 guidelines"
    assert v2.queries == {"q1": {"description": "About cats.", "narrative": "Cats only."}}
    v1 = at(collection=coll, number=1)
    assert v1.guidelines == "Grade by topic."
    assert v1.queries["q1"]["description"] == "About cats."
    with pytest.raises(ValueError, match="version 5 does not exist"):
        at(collection=coll, number=5)


def _alpha(grades: list[list[float]]) -> float:
    """Krippendorff's ordinal alpha from the independent ``krippendorff`` package."""
    return krippendorff.alpha(
        reliability_data=np.array(grades, dtype=float),
        level_of_measurement="ordinal",
        value_domain=[0, 1, 2, 3, 4],
    )


def test_agreement_is_split_by_version_and_matches_an_independent_library(setup):
    coll, (q1, q2), docs, _boss, (ann, ben) = setup
    record = services.judgment_record
    # Version 1: the judges disagree on the same four pairs.
    v1 = [(q1, docs[0], 0, 3), (q1, docs[1], 1, 4), (q2, docs[2], 4, 1), (q2, docs[3], 2, 0)]
    for q, d, a, b in v1:
        record(judge=ann, query=q, document=d, grade=a)
        record(judge=ben, query=q, document=d, grade=b)
    guidelines_services.guidelines_update(collection=coll, guidelines="Much clearer.")
    # Version 2: they regrade three pairs and nearly agree.
    v2 = [(q1, docs[0], 1, 1), (q1, docs[1], 3, 3), (q2, docs[2], 3, 2)]  # all changed
    for q, d, a, b in v2:
        record(judge=ann, query=q, document=d, grade=a)
        record(judge=ben, query=q, document=d, grade=b)
    rows = {
        r.version: r for r in selectors_agreement.agreement_by_guidelines_version(collection=coll)
    }
    assert set(rows) == {1, 2}
    assert rows[2].labels == 6 and rows[2].humans.pairs == 3
    assert rows[2].humans.alpha_ordinal.value == pytest.approx(
        _alpha([[a for *_, a, _b in v2], [b for *_, b in v2]]), abs=1e-12
    )
    # Under version 1 only the pair nobody regraded is left with two labels.
    assert rows[1].labels == 2 and rows[1].humans.pairs == 1
    report = selectors_agreement.agreement_report(collection=coll, guidelines_version=2)
    human = next(g for g in report.overall if g.group == "human")
    assert human.alpha_ordinal == rows[2].humans.alpha_ordinal
    assert sum(j.grades for j in report.judges) == 6


def test_page_shows_versions_and_saves_a_change(client, setup):
    coll, _queries, _docs, boss, (ann, _ben) = setup
    url = reverse("judging:guidelines_versions", args=[coll.slug])
    client.force_login(boss)
    response = client.post(
        url, {"change": "guidelines", "g-guidelines": "New text.", "g-note": "Clarified"}
    )
    assert response.status_code == 303
    assert _version(coll) == 2
    response = client.post(
        url,
        {
            "change": "query",
            "q-query": "q2",
            "q-description": "Dogs.",
            "q-narrative": "",
            "q-note": "",
        },
    )
    assert response.status_code == 303 and _version(coll) == 3
    page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-version="3"' in html and 'data-version="2"' in html and "Clarified" in html
    bad = client.post(url, {"change": "query", "q-query": "nope", "q-description": "x"})
    assert bad.status_code == 400 and "No query" in bad.content.decode()
    nul = client.post(url, {"change": "guidelines", "g-guidelines": "a\x00b"})
    assert nul.status_code == 400 and _version(coll) == 3
    client.force_login(ann.user)
    assert client.get(url).status_code == 403  # a judge here, not a coordinator


def test_agreement_page_filters_by_version_and_refuses_a_bad_one(client, setup):
    coll, _queries, _docs, boss, _judges = setup
    client.force_login(boss)
    url = reverse("judging:collection_agreement", args=[coll.slug])
    assert client.get(url, {"guidelines_version": "1"}).status_code == 200
    for bad in ("0", "2", "x", "9" * 30):
        response = client.get(url, {"guidelines_version": bad})
        assert response.status_code == 400
        assert "guidelines_version" in response.content.decode()


def test_rest_api(setup):
    coll, _queries, docs, boss, (ann, _ben) = setup
    url = f"/api/v1/collections/{coll.slug}/guidelines/"
    judge_client, boss_client = client_for(ann.user), client_for(boss)
    assert judge_client.get(url).json() == {"version": 1, "guidelines": "Grade by topic."}
    assert judge_client.put(url, {"guidelines": "x"}, format="json").status_code == 403
    response = boss_client.put(url, {"guidelines": "New.", "note": "Why"}, format="json")
    assert response.status_code == 200 and response.json() == {"version": 2, "guidelines": "New."}
    bad = boss_client.put(url, {"guidelines": "a\x00b"}, format="json")
    assert bad.status_code == 400 and _version(coll) == 2
    assert any(e.get("field") == "guidelines" for e in errors_of(bad))
    services.judgment_record(judge=ann, query=setup[1][0], document=docs[0], grade=2)
    listed = boss_client.get(url + "versions/")
    assert listed.status_code == 200
    results = listed.json()["results"]
    assert [v["number"] for v in results] == [2, 1]
    assert results[0]["current"] and results[0]["labels"] == 1 and results[0]["note"] == "Why"
    assert results[0]["changes"][0]["after"] == "New."
    assert judge_client.get(url + "versions/").status_code == 403
    agreement = f"/api/v1/collections/{coll.slug}/agreement/"
    assert boss_client.get(agreement, {"guidelines_version": 2}).json()["guidelines_version"] == 2
    refused = boss_client.get(agreement, {"guidelines_version": 3})
    assert refused.status_code == 400
    assert errors_of(refused)[0]["field"] == "guidelines_version"


def test_admin_changes_are_versions_too(client, setup):
    coll, (q1, _q2), _docs, _boss, _judges = setup
    admin = factories.user("root", is_staff=True, is_superuser=True)
    client.force_login(admin)
    change = reverse("admin:judging_query_change", args=[q1.pk])
    page = client.get(change)
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {name: form.initial.get(name) or "" for name in form.fields}
    data.update(collection=coll.pk, external_id="q1", text="query q1", narrative="Cats, lions too.")
    response = client.post(change, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    (version,) = GuidelineVersion.objects.all()
    assert version.author == admin and version.changes[0]["after"] == "Cats, lions too."
    assert Query.objects.get(pk=q1.pk).narrative == "Cats, lions too."
