"""Bulk rescoring through a real Celery worker and the Redis broker (PostgreSQL only)."""

from __future__ import annotations

import os
import time
import uuid

import pytest
from celery import Celery
from celery.contrib.testing.worker import start_worker
from celery.signals import before_task_publish, task_success

from config.celery import app as celery_app
from judging import services as judging_services
from judging.models import Collection
from metrics import services
from tests import factories, processes
from tests.metrics.live.test_scores import trec

REDIS_URL = os.environ.get("GRADED_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture
def redis_worker(settings):
    """Run the project's Celery app against Redis with an embedded worker thread."""
    processes.require_services()  # the worker thread writes while the test reads
    # A fresh app, not the project's: an app caches its broker connection and queues on
    # first use, and earlier tests used the project's app in eager mode.
    app = Celery("graded-test")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(
        # A queue of its own, so that no other test process's worker takes our messages.
        task_default_queue=f"graded-test-{uuid.uuid4().hex}",
        broker_url=REDIS_URL,
        result_backend=REDIS_URL,
        task_always_eager=False,
        broker_connection_retry_on_startup=False,
    )
    app.autodiscover_tasks(["metrics"])
    app.set_current()
    app.set_default()
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING"):
            yield
    finally:
        celery_app.set_current()
        celery_app.set_default()


@pytest.mark.django_db(transaction=True)
def test_bulk_import_is_rescored_by_the_worker(redis_worker):
    coll = factories.collection("celery")
    factories.query(coll, "q1")
    for i in range(4):
        factories.document(coll, f"d{i}")
    team = services.team_create(collection=coll, name="T")
    run = services.run_submit(
        collection=coll,
        team=team,
        tag="r",
        content=trec([("q1", f"d{i}", 4.0 - i) for i in range(4)]),
        filename="r.txt",
        user=None,
    )
    published: list[str] = []
    succeeded: list[str] = []

    def on_publish(sender=None, **_):
        published.append(sender)

    def on_success(sender=None, **_):
        succeeded.append(sender.name)

    before_task_publish.connect(on_publish, weak=False)
    task_success.connect(on_success, weak=False)
    rows = [
        judging_services.JudgmentRow(i + 1, "q1", f"d{i}", grade=g) for i, g in enumerate([0, 4])
    ]
    try:
        judging_services.judgments_import(collection=coll, judge=factories.llm_judge(), rows=rows)
        version = Collection.objects.get(pk=coll.pk).judgments_version
        deadline = time.monotonic() + 20
        # The worker commits the scores, then reports success: wait for both.
        while time.monotonic() < deadline and (run.scored_version != version or not succeeded):
            time.sleep(0.1)
            run.refresh_from_db()
    finally:
        before_task_publish.disconnect(on_publish)
        task_success.disconnect(on_success)
    assert published == ["metrics.rescore_queries"], "the task went through the broker"
    assert succeeded == ["metrics.rescore_queries"], "and the embedded worker ran it"
    assert run.scored_version == version
    assert run.scores["P(rel=1)@10"] == pytest.approx(0.1)
