"""Concurrent writers on PostgreSQL: judgment writes and same-tag run submissions.

Several threads (each with its own database connection) write at once through the API.
No request may get a 5xx; duplicate tags get the sequential 400; the history holds every
change; the live list and every run's scores equal a fresh rebuild from the judgments.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from judging import services
from judging.models import Judgment, JudgmentEvent, LiveGrade, Membership
from metrics import services as metrics_services
from metrics.live import store
from metrics.models import Run
from tests import factories
from tests.api_client import client_for
from tests.metrics import factories as metrics_factories
from tests.pg_threads import in_thread

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
Role = Membership.Role
QUERIES = ("q1", "q2", "q3")
DOCS = tuple(f"d{i}" for i in range(6))
WRITES_PER_JUDGE = 15
SAME_TAG_SUBMISSIONS = 6


@pytest.fixture(autouse=True)
def _needs_postgres(needs_postgres):
    """Skip unless on PostgreSQL (see tests.pg_threads)."""


def test_concurrent_judgments_and_same_tag_submissions():
    coll, judges = factories.judged_collection(
        "race", queries=QUERIES, documents=DOCS, judges=[f"j{i}" for i in range(3)]
    )
    submitter = factories.user("sub")
    team = metrics_services.team_create(collection=coll, name="t", members=[submitter])
    lines = "".join(
        f"{q} Q0 {d} {r + 1} {10 - r} base\n" for q in QUERIES for r, d in enumerate(DOCS)
    )
    metrics_services.run_submit(
        collection=coll, team=team, tag="base", content=lines.encode(), filename="b.txt",
        user=submitter,
    )  # fmt: skip
    url = f"/api/v1/collections/{coll.slug}/judgments/"

    def judge_writes(user) -> list[int]:
        client = client_for(user)
        statuses = []
        for i in range(WRITES_PER_JUDGE):  # each write changes the label of its pair
            q, d = QUERIES[i % 3], DOCS[(i // 3) % len(DOCS)]
            body = {"query": q, "document": d, "grade": (i + user.pk) % 5}
            statuses.append(client.post(url, body, format="json").status_code)
        return statuses

    def submit(_: int) -> tuple[int, dict]:
        upload = SimpleUploadedFile("r.txt", b"q1 Q0 d1 1 2.0 x\nq2 Q0 d2 1 1.0 x\n")
        response = client_for(submitter).post(
            f"/api/v1/collections/{coll.slug}/runs/",
            {"tag": "same", "file": upload},
            format="multipart",
        )
        return response.status_code, response.json()

    with ThreadPoolExecutor(max_workers=len(judges) + SAME_TAG_SUBMISSIONS) as pool:
        writes = [pool.submit(in_thread(judge_writes), u) for u in judges]
        submissions = [pool.submit(in_thread(submit), i) for i in range(SAME_TAG_SUBMISSIONS)]
        write_statuses = [s for f in writes for s in f.result()]
        submitted = [f.result() for f in submissions]

    assert all(s < 500 for s in write_statuses), write_statuses
    assert set(write_statuses) <= {200, 201}
    codes = sorted(code for code, _ in submitted)
    assert codes == [201] + [400] * (SAME_TAG_SUBMISSIONS - 1), submitted
    refused = [body for code, body in submitted if code == 400]
    expected = {"field": "tag", "message": "Tag 'same' is already used in this collection."}
    assert all(body == {"errors": [expected]} for body in refused), refused
    assert Run.objects.filter(collection=coll, tag="same").count() == 1

    # History: one event per write (each changed its pair), the last one equal to the label.
    assert JudgmentEvent.objects.filter(collection=coll).count() == len(write_statuses)
    for judgment in Judgment.objects.filter(collection=coll):
        last = (
            JudgmentEvent.objects.filter(
                judge=judgment.judge, query=judgment.query, document=judgment.document
            )
            .order_by("-pk")
            .first()
        )
        assert last is not None and last.after["grade"] == judgment.grade

    # The live list and the scores equal a rebuild from scratch.
    live = sorted(
        LiveGrade.objects.filter(collection=coll).values_list("query", "document", "grade")
    )
    runs = list(Run.objects.filter(collection=coll))
    stored = metrics_factories.stored_scores(runs)
    means = store.board_read(coll.pk).means()
    services.live_grades_rebuild(collection=coll)
    metrics_services.runs_score(collection=coll)
    assert live == sorted(
        LiveGrade.objects.filter(collection=coll).values_list("query", "document", "grade")
    )
    fresh = metrics_factories.stored_scores(runs)
    assert stored.keys() == fresh.keys()
    for key, scores in fresh.items():
        for name, value in scores.items():
            old = stored[key][name]
            assert (old is None and value is None) or math.isclose(old, value, abs_tol=1e-12)
    for pk, scores in store.board_read(coll.pk).means().items():
        for name, value in scores.items():
            old = means[pk][name]
            assert (old is None and value is None) or math.isclose(old, value, abs_tol=1e-12)
