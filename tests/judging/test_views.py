"""Judging pages: the card, recording labels, going back, the judgment list and adding pairs."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from judging import services
from judging.models import Judgment, JudgmentEvent, Membership, PoolEntry
from judging.selectors import pair_pk, pair_ref
from tests import factories
from tests.html import page_text

pytestmark = pytest.mark.django_db
Status = Judgment.Status

GUIDELINES = "Grade **topical relevance** only.\n\n* Ignore the source's style."


@pytest.fixture
def setup(coll, judge_user, client):
    """Two queries with three documents each, all pooled; the judge is logged in."""
    coll.guidelines = GUIDELINES
    coll.grade_names = ["Nope", "Barely", "Okay", "Good", "Spot on"]
    coll.save()
    queries = [
        factories.query(
            coll,
            f"q{i}",
            text=f"solar panel efficiency {i}",
            description=f"Find studies on solar efficiency ({i}).",
            narrative=f"Relevant documents report measured efficiency ({i}).",
        )
        for i in (1, 2)
    ]
    docs = [
        factories.document(
            coll,
            f"d{i}",
            title=f"Solar report {i}",
            body=f"Panels convert light. Solar efficiency rose in year {i}.",
            url=f"https://example.org/d{i}",
            extra={"source": "journal", "year": 2000 + i},
        )
        for i in (1, 2, 3)
    ]
    entries = [factories.pool_entry(coll, q, d) for q in queries for d in docs]
    client.force_login(judge_user)
    return {"coll": coll, "queries": queries, "docs": docs, "entries": entries}


def entry_id(response) -> int:
    """Return the pool entry pk of the card shown (the page carries its opaque id)."""
    match = re.search(rb'data-entry-id="(\d+)"', response.content)
    assert match, response.content[:2000]
    pk = pair_pk(int(match.group(1)))
    assert pk is not None
    return pk


def next_url(coll) -> str:
    return reverse("judging:judge_next", args=[coll.slug])


def pair_url(coll, pk: int) -> str:
    return reverse("judging:judge_pair", args=[coll.slug, pair_ref(pk)])


def test_card_shows_query_guidelines_and_document(client, setup):
    coll = setup["coll"]
    response = client.get(next_url(coll))
    assert response.status_code == 200
    html = response.content.decode()
    entry = PoolEntry.objects.select_related("query", "document").get(pk=entry_id(response))
    assert entry.query.text in html
    assert entry.query.description in html
    assert entry.query.narrative in html
    assert "<strong>topical relevance</strong>" in html and "<details" in html
    assert entry.document.external_id in html
    assert "<mark>Solar</mark> report" in html
    assert f'href="{entry.document.url}"' in html
    assert 'rel="noopener noreferrer nofollow"' in html
    assert "<mark>efficiency</mark>" in html and "<mark>Solar</mark>" in html
    assert '<th scope="row">source</th><td>journal</td>' in html
    for grade, name in enumerate(coll.grade_names):
        assert f'name="grade" value="{grade}"' in html
        assert name in html
    assert 'value="cannot_judge"' in html and 'value="later"' in html
    assert "<textarea" in html and 'name="seconds"' in html
    assert "0 of 6" in html
    assert '<progress class="progress" id="judge-progress" value="0" max="6"' in html
    assert "csrfmiddlewaretoken" in html
    assert "judging/card.js" in html and "<script>" not in html
    assert " style=" not in html


def test_card_is_blind_to_other_judges(client, setup):
    coll = setup["coll"]
    other = factories.human_judge(factories.user("otto"))
    entry = setup["entries"][0]
    services.judgment_record(
        judge=other, query=entry.query, document=entry.document, grade=4, note="SECRET-NOTE"
    )
    response = client.get(pair_url(coll, entry.pk))
    html = page_text(response)
    assert "SECRET-NOTE" not in html and "otto" not in html
    assert "is-current" not in html and "Your label now" not in html


def test_post_grade_records_browser_judgment_and_advances(client, setup, judge_user):
    coll = setup["coll"]
    first = entry_id(client.get(next_url(coll)))
    response = client.post(pair_url(coll, first), {"grade": "3", "note": "", "seconds": "12.5"})
    assert response.status_code == 303
    assert response["Location"] == next_url(coll)
    judgment = Judgment.objects.get()
    entry = PoolEntry.objects.get(pk=first)
    assert (judgment.query_id, judgment.document_id) == (entry.query_id, entry.document_id)
    assert (judgment.grade, judgment.status, judgment.seconds) == (3, Status.GRADED, 12.5)
    event = JudgmentEvent.objects.get()
    assert event.channel == JudgmentEvent.Channel.BROWSER and event.actor == judge_user
    following = client.get(next_url(coll))
    second = entry_id(following)
    assert second != first
    # The judge stays with the query they are working on.
    assert PoolEntry.objects.get(pk=second).query_id == entry.query_id
    assert "1 of 6" in following.content.decode()


def test_regrade_through_judge_pair_keeps_history(client, setup):
    coll = setup["coll"]
    first = entry_id(client.get(next_url(coll)))
    client.post(pair_url(coll, first), {"grade": "0"})
    second = entry_id(client.get(next_url(coll)))
    html = client.get(next_url(coll)).content.decode()
    assert f'href="{pair_url(coll, first)}"' in html  # Back goes to the pair just judged
    page = client.get(pair_url(coll, first))
    assert page.status_code == 200
    assert 'class="grade-button grade-0 is-current"' in page.content.decode()
    assert "Your label now" in page.content.decode()
    response = client.post(pair_url(coll, first), {"grade": "4"})
    assert response.status_code == 303
    judgment = Judgment.objects.get()
    assert judgment.grade == 4
    events = list(JudgmentEvent.objects.order_by("pk").values_list("before", "after"))
    assert events[0][1]["grade"] == 0 and events[1][0]["grade"] == 0
    assert events[1][1]["grade"] == 4
    # After re-grading, the next card is the one that was waiting.
    assert entry_id(client.get(next_url(coll))) == second


def test_cannot_judge_with_reason(client, setup):
    coll = setup["coll"]
    first = entry_id(client.get(next_url(coll)))
    response = client.post(
        pair_url(coll, first), {"status": "cannot_judge", "note": "Page is in Finnish"}
    )
    assert response.status_code == 303
    judgment = Judgment.objects.get()
    assert (judgment.status, judgment.grade, judgment.note) == (
        Status.CANNOT_JUDGE,
        None,
        "Page is in Finnish",
    )
    assert entry_id(client.get(next_url(coll))) != first


def test_later_pushes_the_pair_to_the_end(client, setup):
    coll = setup["coll"]
    first = entry_id(client.get(next_url(coll)))
    assert client.post(pair_url(coll, first), {"status": "later"}).status_code == 303
    assert Judgment.objects.get().status == Status.LATER
    seen = []
    for _ in range(5):
        current = entry_id(client.get(next_url(coll)))
        seen.append(current)
        client.post(pair_url(coll, current), {"grade": "2"})
    assert first not in seen
    last = client.get(next_url(coll))
    assert entry_id(last) == first
    assert "Later" in last.content.decode() and "Your label now" in last.content.decode()
    client.post(pair_url(coll, first), {"grade": "1"})
    done = client.get(next_url(coll))
    assert b"All done" in done.content and b"data-entry-id" not in done.content
    assert b"6 of 6" in done.content


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"grade": "7"}, "Grade"),
        ({"grade": "high"}, "Grade"),
        ({}, "Grade"),
        ({"status": "bogus"}, "Status"),
        ({"grade": "2", "status": "later"}, "Status"),
        ({"grade": "2", "seconds": "-4"}, "Seconds"),
        ({"grade": "2", "seconds": "nan"}, "Seconds"),
        ({"grade": "2", "note": "x" * 6000}, "Note"),
    ],
)
def test_bad_post_rerenders_card_with_field_error(client, setup, data, field):
    coll = setup["coll"]
    first = entry_id(client.get(next_url(coll)))
    response = client.post(pair_url(coll, first), data)
    assert response.status_code == 400
    html = response.content.decode()
    assert 'role="alert"' in html
    assert re.search(rf"<strong>{field}:</strong>", html)
    assert f'data-entry-id="{pair_ref(first)}"' in html
    assert not Judgment.objects.exists()


def test_seconds_add_up_and_are_capped(client, setup, settings):
    coll = setup["coll"]
    first = entry_id(client.get(next_url(coll)))
    client.post(pair_url(coll, first), {"grade": "1", "seconds": "10"})
    client.post(pair_url(coll, first), {"grade": "2", "seconds": "5"})
    assert Judgment.objects.get().seconds == 15
    client.post(pair_url(coll, first), {"grade": "3", "seconds": "1e9"})
    assert Judgment.objects.get().seconds == settings.GRADED_MAX_SECONDS_PER_PAIR


def test_same_label_again_adds_no_history(client, setup):
    coll = setup["coll"]
    first = entry_id(client.get(next_url(coll)))
    client.post(pair_url(coll, first), {"grade": "2", "note": "ok", "seconds": "8"})
    client.post(pair_url(coll, first), {"grade": "2", "note": "ok", "seconds": "3"})
    assert JudgmentEvent.objects.count() == 1
    assert Judgment.objects.get().seconds == 8


def test_pair_without_content_or_from_other_collection_is_404(client, setup):
    coll = setup["coll"]
    hidden = factories.document(coll, "ghost", has_content=False)
    entry = factories.pool_entry(coll, setup["queries"][0], hidden)
    assert client.get(pair_url(coll, entry.pk)).status_code == 404
    assert client.post(pair_url(coll, entry.pk), {"grade": "1"}).status_code == 404
    assert client.get(pair_url(coll, 999999)).status_code == 404


def test_home_lists_collections_with_progress(client, setup):
    coll = setup["coll"]
    first = entry_id(client.get(next_url(coll)))
    client.post(pair_url(coll, first), {"grade": "2"})
    html = client.get(reverse("judging:home")).content.decode()
    assert coll.name in html
    assert '<progress class="progress" value="1" max="6"' in html
    assert "1 of 6 judged" in html


def test_collection_detail_for_judge_and_coordinator(client, setup, judge_user):
    coll = setup["coll"]
    url = reverse("judging:collection_detail", args=[coll.slug])
    html = client.get(url).content.decode()
    assert "<strong>topical relevance</strong>" in html
    assert "Start judging" in html and "0 of 6 judged" in html
    assert "Pool pairs" not in html and "Add pairs" not in html
    factories.member(coll, judge_user, Membership.Role.COORDINATOR)
    html = client.get(url).content.decode()
    assert "Pool pairs" in html and reverse("judging:poolentry_create", args=[coll.slug]) in html
    assert "<dt>Queries</dt><dd>2</dd>" in html and "<dt>Documents</dt><dd>3</dd>" in html
    assert "<dt>Pool pairs</dt><dd>6</dd>" in html and "<dt>Judgments</dt><dd>0</dd>" in html


@pytest.fixture
def graded(setup, judge_user):
    """The judge has labelled five pairs in a known order."""
    judge = factories.human_judge(judge_user)
    labels = [
        {"grade": 0},
        {"grade": 3},
        {"grade": 3, "note": "solid"},
        {"status": Status.CANNOT_JUDGE, "note": "broken"},
        {"status": Status.LATER},
    ]
    for entry, label in zip(setup["entries"], labels, strict=False):
        services.judgment_record(judge=judge, query=entry.query, document=entry.document, **label)
    other = factories.human_judge(factories.user("otto"))
    entry = setup["entries"][0]
    services.judgment_record(judge=other, query=entry.query, document=entry.document, grade=4)
    return judge


def list_rows(response) -> list[str]:
    return re.findall(r"judgments/(\d+)/edit/", response.content.decode())


def test_judgment_list_shows_own_judgments_newest_first(client, setup, graded):
    url = reverse("judging:judgment_list", args=[setup["coll"].slug])
    response = client.get(url)
    assert response.status_code == 200
    ids = [int(pk) for pk in list_rows(response)]
    newest_first = Judgment.objects.filter(judge=graded).order_by("-updated_at", "-pk")
    mine = list(newest_first.values_list("pk", flat=True))
    assert ids == mine and len(ids) == 5
    assert "label-graded grade-4" not in response.content.decode()  # not the other judge's 4


@pytest.mark.parametrize(
    ("params", "count"),
    [
        ({"status": "graded"}, 3),
        ({"status": "cannot_judge"}, 1),
        ({"grade": "3"}, 2),
        ({"grade": "0"}, 1),
        ({"query": "q1"}, 3),
        ({"query": "q2"}, 2),
        ({"query": "q2", "status": "later"}, 1),
        ({"query": "nope"}, 0),
    ],
)
def test_judgment_list_filters(client, setup, graded, params, count):
    url = reverse("judging:judgment_list", args=[setup["coll"].slug])
    response = client.get(url, params)
    assert response.status_code == 200
    assert len(list_rows(response)) == count


def test_judgment_list_paginates(client, setup, graded, monkeypatch):
    monkeypatch.setattr("judging.views.JUDGMENTS_PER_PAGE", 2)
    url = reverse("judging:judgment_list", args=[setup["coll"].slug])
    first = client.get(url, {"status": "graded"})
    assert len(list_rows(first)) == 2 and "Page 1 of 2" in first.content.decode()
    assert "?status=graded&amp;page=2" in first.content.decode()
    second = client.get(url, {"status": "graded", "page": "2"})
    assert len(list_rows(second)) == 1
    assert client.get(url, {"page": "zzz"}).status_code == 200


def test_edit_changes_judgment_and_lands_in_history(client, setup, graded, judge_user):
    coll = setup["coll"]
    judgment = Judgment.objects.get(judge=graded, grade=0)
    url = reverse("judging:judgment_update", args=[coll.slug, judgment.pk])
    page = client.get(url)
    assert page.status_code == 200 and b"Nope" in page.content
    response = client.post(url, {"status": "graded", "grade": "2", "note": "on reflection"})
    assert response.status_code == 303
    assert response["Location"] == reverse("judging:judgment_list", args=[coll.slug])
    judgment.refresh_from_db()
    assert (judgment.grade, judgment.note) == (2, "on reflection")
    event = JudgmentEvent.objects.filter(judgment=judgment).last()
    assert event.action == JudgmentEvent.Action.CHANGE
    assert event.before["grade"] == 0 and event.after["grade"] == 2
    assert event.channel == JudgmentEvent.Channel.BROWSER and event.actor == judge_user
    # Status other than graded drops the grade.
    client.post(url, {"status": "cannot_judge", "grade": "2", "note": "unreadable"})
    judgment.refresh_from_db()
    assert (judgment.status, judgment.grade) == (Status.CANNOT_JUDGE, None)


def test_edit_requires_grade_for_graded(client, setup, graded):
    coll = setup["coll"]
    judgment = Judgment.objects.get(judge=graded, status=Status.LATER)
    url = reverse("judging:judgment_update", args=[coll.slug, judgment.pk])
    response = client.post(url, {"status": "graded"})
    assert response.status_code == 400
    assert b"<strong>Grade:</strong>" in response.content
    judgment.refresh_from_db()
    assert judgment.status == Status.LATER


@pytest.fixture
def coordinator(client, coll, setup):
    usr = factories.user("cora")
    factories.member(coll, usr, Membership.Role.COORDINATOR)
    client.force_login(usr)
    return usr


def add_url(coll) -> str:
    return reverse("judging:poolentry_create", args=[coll.slug])


def test_add_pairs_form_adds_pairs(client, coll, coordinator):
    factories.document(coll, "d9")
    assert client.get(add_url(coll)).status_code == 200
    response = client.post(add_url(coll), {"pairs": "# new\nq1 d9\n\nq2\td9\nq1 d1\n"})
    assert response.status_code == 303
    assert PoolEntry.objects.filter(document__external_id="d9").count() == 2
    page = client.get(response["Location"])
    assert b"Added 2 new pairs to the pool (1 already pooled)." in page.content


def test_add_pairs_errors_name_lines_and_add_nothing(client, coll, coordinator):
    before = PoolEntry.objects.count()
    factories.document(coll, "d9")
    response = client.post(add_url(coll), {"pairs": "q1 d9\nq404 d1\nq2 nowhere\nq1 d1 extra\n"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "line 4: expected two fields" in html
    assert PoolEntry.objects.count() == before
    response = client.post(add_url(coll), {"pairs": "q1 d9\nq404 d1\nq2 nowhere\n"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "line 2: unknown query id &#x27;q404&#x27;" in html
    assert "line 3: unknown document id &#x27;nowhere&#x27;" in html
    assert "Nothing was added" in html
    assert PoolEntry.objects.count() == before


def test_add_pairs_from_file(client, coll, coordinator):
    factories.document(coll, "d9")
    upload = SimpleUploadedFile("pairs.txt", b"\xef\xbb\xbfq1 d9\nq2 d9\n", "text/plain")
    response = client.post(add_url(coll), {"file": upload})
    assert response.status_code == 303
    assert PoolEntry.objects.filter(document__external_id="d9").count() == 2
    bad = SimpleUploadedFile("pairs.txt", b"q1 d9\nq1 zzz\n", "text/plain")
    response = client.post(add_url(coll), {"file": bad})
    assert response.status_code == 400 and b"line 2: unknown document id" in response.content
    both = SimpleUploadedFile("pairs.txt", b"q1 d9\n", "text/plain")
    response = client.post(add_url(coll), {"file": both, "pairs": "q1 d1"})
    assert response.status_code == 400 and b"not both" in response.content
    binary = SimpleUploadedFile("pairs.bin", b"q1 d9\n\xff\x00bad", "application/octet-stream")
    response = client.post(add_url(coll), {"file": binary})
    assert (
        response.status_code == 400 and b"Line 2: the file is not valid UTF-8" in response.content
    )
    # A UTF-16 byte-order mark (FF FE) makes it UTF-16: read as such, its line is malformed.
    utf16 = SimpleUploadedFile("pairs.bin", b"\xff\xfe\x00bad", "application/octet-stream")
    response = client.post(add_url(coll), {"file": utf16})
    assert response.status_code == 400 and b"expected two fields" in response.content


def test_back_back_and_a_regrade_return_the_judge_where_they_were(client, setup):
    """Issue 20 item 4: re-grading an earlier query's pair does not move the judge there."""
    coll = setup["coll"]
    third = factories.query(coll, "q3", text="solar panel efficiency 3")
    for doc in setup["docs"]:  # a query the fallback order would pick first
        entry = factories.pool_entry(coll, third, doc)
        PoolEntry.objects.filter(pk=entry.pk).update(shuffle_key=0)
    done = []
    for _ in range(4):  # q1's three pairs, then the first of the next query
        pk = entry_id(client.get(next_url(coll)))
        client.post(pair_url(coll, pk), {"grade": "1"})
        done.append(pk)
    front = PoolEntry.objects.get(pk=done[-1]).query_id
    waiting = entry_id(client.get(next_url(coll)))
    assert PoolEntry.objects.get(pk=waiting).query_id == front
    # Back, Back: to the last pair of the query before, and re-grade it.
    assert f'href="{pair_url(coll, done[-1])}"' in client.get(next_url(coll)).content.decode()
    assert (
        f'href="{pair_url(coll, done[-2])}"'
        in client.get(pair_url(coll, done[-1])).content.decode()
    )
    client.post(pair_url(coll, done[-2]), {"grade": "3"})
    assert entry_id(client.get(next_url(coll))) == waiting


def test_edit_page_shows_the_narrative_and_the_document(client, setup):
    """Issue 20 item 4: a judge re-reads what they judged before changing the label."""
    coll = setup["coll"]
    first = entry_id(client.get(next_url(coll)))
    client.post(pair_url(coll, first), {"grade": "2"})
    judgment = Judgment.objects.get()
    html = client.get(
        reverse("judging:judgment_update", args=[coll.slug, judgment.pk])
    ).content.decode()
    assert judgment.query.description in html and judgment.query.narrative in html
    assert "convert light." in html and judgment.document.url in html
    assert "data-narrative" in html and "data-document" in html
