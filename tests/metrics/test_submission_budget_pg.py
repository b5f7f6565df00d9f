"""The submission budget holds under concurrent submissions (PostgreSQL, real threads).

Twelve submissions of one team race, through the REST endpoint, each in its own thread
and database connection, against a budget of four runs a day: exactly four are accepted,
the rest get 429 naming when the next is allowed, and no request fails with a 5xx. The
team's row lock (taken first by ``run_submit``) is what serialises the count and the
record; without it every thread would count the same committed submissions.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from metrics.models import Run
from metrics.visibility.models import Submission
from metrics.visibility.services import score_visibility_update
from tests import factories
from tests.api_client import client_for
from tests.metrics import factories as metrics_factories
from tests.pg_threads import in_thread

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
BUDGET = 4
SUBMISSIONS = 12


@pytest.fixture(autouse=True)
def _needs_postgres(needs_postgres):
    """Skip unless on PostgreSQL (see tests.pg_threads)."""


def test_concurrent_submissions_never_exceed_the_budget(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection("race-budget")
    for qid in ("q1", "q2"):
        factories.query(coll, qid)
    for i in range(SUBMISSIONS):  # known documents: no id-only document is created
        factories.document(coll, f"d{i}")
    members = [factories.user(f"m{i}") for i in range(3)]
    team = metrics_factories.team(coll, "racers", members)
    other = metrics_factories.team(coll, "others", [factories.user("o")])
    score_visibility_update(collection=coll, runs_per_day=BUDGET)

    def submit(i: int) -> tuple[int, dict]:
        tag = f"r{i}"
        upload = SimpleUploadedFile(
            "r.txt", f"q1 Q0 d{i} 1 2.0 {tag}\nq2 Q0 d1 1 1.0 {tag}\n".encode()
        )
        response = client_for(members[i % len(members)]).post(
            f"/api/v1/collections/{coll.slug}/runs/",
            {"tag": tag, "file": upload},
            format="multipart",
        )
        return response.status_code, response.json()

    with ThreadPoolExecutor(max_workers=SUBMISSIONS) as pool:
        results = list(pool.map(in_thread(submit), range(SUBMISSIONS)))

    codes = sorted(code for code, _ in results)
    assert codes == [201] * BUDGET + [429] * (SUBMISSIONS - BUDGET), results
    for code, body in results:
        if code == 429:
            (error,) = body["errors"]
            assert error["field"] == "budget" and error["next_allowed"]
    assert Run.objects.filter(team=team).count() == BUDGET
    assert Submission.objects.filter(team=team, counted=True).count() == BUDGET
    # The other team's budget is untouched.
    assert (
        client_for(other.members.get())
        .post(
            f"/api/v1/collections/{coll.slug}/runs/",
            {"tag": "other", "file": SimpleUploadedFile("r.txt", b"q1 Q0 d1 1 1.0 x\n")},
            format="multipart",
        )
        .status_code
        == 201
    )


def test_concurrent_runs_of_several_teams_may_name_the_same_unknown_document(settings, tmp_path):
    # Each team's submissions queue on its own row lock; different teams' run at once and
    # may create the same id-only document: neither may fail (it once was a 500).
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection("race-docs")
    factories.query(coll, "q1")
    teams = [metrics_factories.team(coll, f"t{i}", [factories.user(f"u{i}")]) for i in range(6)]

    def submit(i: int) -> int:
        upload = SimpleUploadedFile("r.txt", f"q1 Q0 brand-new 1 2.0 r{i}\n".encode())
        return (
            client_for(teams[i].members.get())
            .post(
                f"/api/v1/collections/{coll.slug}/runs/",
                {"tag": f"r{i}", "file": upload},
                format="multipart",
            )
            .status_code
        )

    with ThreadPoolExecutor(max_workers=len(teams)) as pool:
        codes = list(pool.map(in_thread(submit), range(len(teams))))

    assert codes == [201] * len(teams)
    assert coll.documents.filter(external_id="brand-new").count() == 1
    assert Run.objects.filter(collection=coll).count() == len(teams)
