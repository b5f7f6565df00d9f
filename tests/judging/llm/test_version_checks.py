"""LLM judge versions checked on gold pairs and a frozen human sample before they run."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from judging import services as judging_services
from judging.models import Judgment, LiveGrade, Membership
from judging.quality import selectors, services
from judging.quality.models import VersionCheck, VersionSamplePair
from tests import factories
from tests.api_client import client_for
from tests.judging.llm.fake_server import Reply

pytestmark = pytest.mark.django_db
Role = Membership.Role
NATIVE = {0: "0", 1: "1", 3: "2", 4: "3"}  # Graded grade -> the judge's native label


@pytest.fixture
def graded(coll, pooled):
    """Two humans grade every pooled pair alike (grades the 0–3 scale can express)."""
    truth = {}
    for i, entry in enumerate(pooled):
        truth[(entry.query.text, entry.document.title)] = [0, 1, 3, 4][i % 4]
    for name in ("ann", "ben"):
        usr = factories.user(name)
        factories.member(coll, usr, Role.JUDGE)
        judge = factories.human_judge(usr)
        for entry in pooled:
            judging_services.judgment_record(
                judge=judge,
                query=entry.query,
                document=entry.document,
                grade=truth[(entry.query.text, entry.document.title)],
            )
    boss = factories.user("boss")
    factories.member(coll, boss, Role.COORDINATOR)
    first = pooled[0]
    services.gold_set(query=first.query, document=first.document, grade=0, actor=boss)
    return truth, boss


@pytest.fixture
def check_now(django_capture_on_commit_callbacks):
    """Return a function that starts a version check, lets it run, and returns it ended."""

    def run(**kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            check = services.version_check_start(**kwargs)
        check.refresh_from_db()
        return check

    return run


def _faithful(truth):
    def script(body, n):
        text = body["messages"][-1]["content"]
        query = re.search(r"Query: (.*)", text).group(1)
        title = re.search(r"Title: (.*)", text).group(1)
        return Reply(content=f"##final score: {NATIVE[truth[(query, title)]]}")

    return script


def test_a_worse_version_is_flagged_against_the_one_before(
    coll, pooled, llm, fake, graded, check_now
):
    truth, boss = graded
    labels_before = (Judgment.objects.count(), LiveGrade.objects.count())
    fake.script = _faithful(truth)
    first = check_now(collection=coll, judge=llm, user=boss)
    assert first.status == VersionCheck.Status.DONE and first.prompt_tokens == 12 * 100
    assert first.results.count() == 12  # the 12 human-graded pairs (the gold one among them)
    assert VersionSamplePair.objects.filter(collection=coll).count() == 12
    llm.model = "fake-model-cheaper"
    llm.save()
    fake.script = lambda body, n: Reply(content="##final score: 0")
    second = check_now(collection=coll, judge=llm, user=boss)
    assert second.version != first.version
    assert labels_before == (Judgment.objects.count(), LiveGrade.objects.count())
    newest, oldest = selectors.version_report(collection=coll, judge=llm)
    assert oldest.vs_humans.kappa_quadratic == pytest.approx(1.0) and not oldest.flagged
    humans = [truth[k] for k in sorted(truth)]
    want = cohen_kappa_score([0] * 12, humans, weights="quadratic", labels=list(range(5)))
    assert newest.vs_humans.kappa_quadratic == pytest.approx(want, abs=1e-12)
    assert newest.flagged and newest.previous_version == first.version
    assert newest.vs_gold.n == 1 and newest.vs_gold.exact == 1.0  # gold grade 0
    assert newest.kappa_previous == pytest.approx(
        cohen_kappa_score([0] * 12, humans, weights="quadratic", labels=list(range(5)))
    )
    assert newest.mean_tokens == 107 and newest.median_latency_ms > 0


def test_page_and_rest(client, coll, pooled, llm, fake, graded, django_capture_on_commit_callbacks):
    truth, boss = graded
    fake.script = _faithful(truth)
    client.force_login(boss)
    url = reverse("judging:version_list", args=[coll.slug, llm.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url)
    check = VersionCheck.objects.get()
    status_page = reverse("judging:version_check_detail", args=[coll.slug, check.pk])
    assert response.status_code == 303 and response["Location"] == status_page
    shown = client.get(status_page).content.decode()
    assert 'data-status="done"' in shown and "hx-trigger" not in shown  # ended: no polling
    assert 'data-field="kappa_humans">1.000' in shown
    page = client.get(url).content.decode()
    assert f'data-check="{check.pk}"' in page and 'data-field="kappa_humans">1.000' in page
    api = client_for(boss)
    rest = f"/api/v1/collections/{coll.slug}/judges/{llm.pk}/versions/"
    with django_capture_on_commit_callbacks(execute=True):
        made = api.post(rest)
    assert made.status_code == 202 and made.json()["status"] == "queued"
    assert made.json()["row"] is None and made["Location"] == made.json()["url"]
    followed = api.get(made.json()["url"]).json()
    assert followed["status"] == "done" and followed["error"] == ""
    assert followed["row"]["kappa_previous"] is None  # same version
    listed = api.get(rest).json()["results"]
    assert [r["check_id"] for r in listed][1] == check.pk
    assert listed[0]["vs_humans"]["kappa_quadratic"] == pytest.approx(1.0)
    judge_user = factories.user("jo")
    factories.member(coll, judge_user, Role.JUDGE)
    assert client_for(judge_user).get(rest).status_code == 403


def test_nothing_to_check_is_a_clear_refusal(coll, pooled, llm, fake):
    boss = factories.user("boss")
    factories.member(coll, boss, Role.COORDINATOR)
    response = client_for(boss).post(f"/api/v1/collections/{coll.slug}/judges/{llm.pk}/versions/")
    assert response.status_code == 400 and "Nothing to check on" in response.content.decode()
    assert not fake.requests


def test_the_run_page_warns_about_an_unchecked_or_flagged_version(
    client, coll, pooled, llm, fake, graded, check_now
):
    truth, boss = graded
    client.force_login(boss)
    url = reverse("judging:llmjob_create", args=[coll.slug])
    assert 'data-version-warning="unchecked"' in client.get(url).content.decode()
    fake.script = _faithful(truth)
    check_now(collection=coll, judge=llm, user=boss)
    assert "data-version-warning" not in client.get(url).content.decode()
    llm.model = "fake-model-cheaper"
    llm.save()
    fake.script = lambda body, n: Reply(content="##final score: 0")
    check_now(collection=coll, judge=llm, user=boss)
    assert 'data-version-warning="flagged"' in client.get(url).content.decode()
