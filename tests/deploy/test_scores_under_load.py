"""Stored scores stay equal to a full rescoring under concurrent writes of every kind.

gunicorn (3 workers x 4 threads) and one Celery worker run as real processes with the
production settings, PostgreSQL (this test's database) and Redis as broker and cache, as
the audit of issue 32 ran them. Over HTTP only, at once and in random order: batch
judgments (rescored by the Celery worker), single judgments (rescored in the request),
run submissions, run deletions and qrels imports. Once the worker is idle, every stored
score must equal a full rescoring and every run must be on the scoreboard. A second round
of single judgments then runs in the web workers, whose rankings are cached from the
first round, and the scores must again equal a rescoring: no cached ranking outlives the
runs it was read for.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import redis
from celery import Celery
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from judging.models import Collection, Membership
from metrics import services as metrics_services
from metrics.live import selectors as live_selectors
from metrics.live import store
from metrics.models import Run
from tests import factories, processes

QUERIES = [f"q{i}" for i in range(1, 7)]
DOCS = [f"d{i}" for i in range(1, 31)]
JUDGES = 4
BATCHES, SINGLES, SUBMISSIONS, DELETIONS, IMPORTS = 40, 40, 8, 2, 2


@pytest.fixture
def deployment(tmp_path: Path):
    """Start gunicorn (3 x 4) and one Celery worker on this test database; yield URL and env."""
    with processes.deployment(tmp_path, web_workers=3, threads=4, celery=1) as started:
        yield started


def _wait_idle(env: dict[str, str], timeout: float = 120.0) -> None:
    """Wait until the environment's queue is empty and its worker runs nothing, twice."""
    queue = env["CELERY_TASK_DEFAULT_QUEUE"]
    broker = redis.Redis.from_url(env["CELERY_BROKER_URL"])
    app = Celery("graded-test-idle", broker=env["CELERY_BROKER_URL"], set_as_current=False)
    deadline, quiet = time.monotonic() + timeout, 0
    try:
        while time.monotonic() < deadline:
            inspect = app.control.inspect(timeout=1.0)
            busy = [t for tasks in (inspect.active() or {}).values() for t in tasks]
            busy += [t for tasks in (inspect.reserved() or {}).values() for t in tasks]
            quiet = quiet + 1 if broker.llen(queue) == 0 and not busy else 0
            if quiet >= 2:
                return
            time.sleep(0.3)
    finally:
        app.close()
        broker.close()
    raise AssertionError(f"the Celery worker was still busy after {timeout:.0f} s")


def _run_file(rng: random.Random, tag: str) -> bytes:
    """Return a TREC run over a random subset of the queries (some left out, some ties)."""
    lines = []
    for qid in rng.sample(QUERIES, rng.randint(2, len(QUERIES))):
        docs = rng.sample(DOCS, rng.randint(1, 12))
        lines += [f"{qid} Q0 {d} {r} {round(10 - r / 2)} {tag}\n" for r, d in enumerate(docs, 1)]
    return "".join(lines).encode()


def _assert_scores_equal_a_rescoring(coll: Collection, base: str, coordinator) -> None:
    problems = live_selectors.scores_problems(collection=coll)
    assert problems == [], problems[:20]
    runs = set(Run.objects.filter(collection=coll).values_list("pk", flat=True))
    board = store.board_read(coll.pk)
    assert set(board.run_ids.tolist()) == runs, "every run is on the board, and only those"
    means = board.means()
    with _client(base, coordinator) as http:  # what the leaderboard serves
        body = http.get(f"/api/v1/collections/{coll.slug}/leaderboard/").json()
    shown = {row["run_id"]: row["scores"] for row in body["rows"]}
    assert set(shown) == runs
    for run_id, scores in shown.items():
        for name, value in scores.items():
            expected = means[run_id].get(name)
            if value is None or expected is None:
                assert value is None and expected is None, (run_id, name)
            else:
                assert math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-12), (run_id, name)


def _client(base: str, user) -> httpx.Client:
    """Return an HTTP client with ``user``'s token (read on first use by the main thread).

    The client threads must not touch the database: each would leave a connection open.
    """
    key = _tokens.get(user.pk)
    if key is None:
        key = _tokens[user.pk] = Token.objects.get_or_create(user=user)[0].key
    return httpx.Client(base_url=base, headers={"Authorization": f"Token {key}"}, timeout=60.0)


_tokens: dict[int, str] = {}


@pytest.mark.django_db(transaction=True)
def test_scores_equal_a_rescoring_after_a_concurrent_mix_of_writes(deployment, tmp_path):
    base, env = deployment
    rng = random.Random(32)
    coll = factories.collection("under-load")
    for qid in QUERIES:
        factories.query(coll, qid)
    for docno in DOCS:
        factories.document(coll, docno)
    users = get_user_model().objects
    coordinator = users.create_user("cora", password="x")
    factories.member(coll, coordinator, Membership.Role.COORDINATOR)
    judges = [users.create_user(f"judge{i}", password="x") for i in range(JUDGES)]
    for judge in judges:
        factories.member(coll, judge, Membership.Role.JUDGE)
    submitters = [users.create_user(f"team{i}", password="x") for i in range(4)]
    teams = [
        metrics_services.team_create(collection=coll, name=f"T{i}", members=[user])
        for i, user in enumerate(submitters)
    ]
    doomed = [
        metrics_services.run_submit(
            collection=coll,
            team=teams[i],
            tag=f"early{i}",
            content=_run_file(rng, f"early{i}"),
            filename="early.txt",
            user=submitters[i],
        )
        for i in range(DELETIONS + 1)
    ]
    api = f"/api/v1/collections/{coll.slug}/"
    import_judge = factories.llm_judge("imported")
    import_judge.collections.add(coll)

    def pair() -> dict:
        return {"query": rng.choice(QUERIES), "document": rng.choice(DOCS)}

    def post_batch(user) -> int:
        pairs = rng.sample([(q, d) for q in QUERIES for d in DOCS], 3)  # a batch repeats none
        body = {
            "judgments": [{"query": q, "document": d, "grade": rng.randint(0, 4)} for q, d in pairs]
        }
        with _client(base, user) as http:
            return http.post(api + "judgments/", json=body).status_code

    def post_single(user) -> int:
        with _client(base, user) as http:
            return http.post(
                api + "judgments/", json={**pair(), "grade": rng.randint(0, 4)}
            ).status_code

    def submit(i: int) -> int:
        tag = f"run{i}"
        with _client(base, submitters[i % len(submitters)]) as http:
            files = {"file": (f"{tag}.txt", _run_file(rng, tag), "text/plain")}
            return http.post(api + "runs/", data={"tag": tag}, files=files).status_code

    def delete(run: Run) -> int:
        with _client(base, coordinator) as http:
            return http.delete(f"{api}runs/{run.pk}/").status_code

    def import_qrels(i: int) -> int:
        qrels = "".join(
            f"{q} 0 {d} {rng.randint(0, 4)}\n" for q in QUERIES for d in rng.sample(DOCS, 8)
        )
        with _client(base, coordinator) as http:
            files = {"file": (f"import{i}.qrels", qrels.encode(), "text/plain")}
            return http.post(
                api + "judgments/", data={"judge": import_judge.pk}, files=files
            ).status_code

    _tokens.clear()  # a new test database: new users, new tokens
    for user in [coordinator, *judges, *submitters]:
        _client(base, user).close()
    work: list[tuple[str, Callable[[], int]]] = []
    work += [("batch", lambda u=judges[i % JUDGES]: post_batch(u)) for i in range(BATCHES)]
    work += [("single", lambda u=judges[i % JUDGES]: post_single(u)) for i in range(SINGLES)]
    work += [("submit", lambda i=i: submit(i)) for i in range(SUBMISSIONS)]
    work += [("delete", lambda r=run: delete(r)) for run in doomed[:DELETIONS]]
    work += [("import", lambda i=i: import_qrels(i)) for i in range(IMPORTS)]
    rng.shuffle(work)
    with ThreadPoolExecutor(max_workers=16) as pool:
        futures = [(kind, pool.submit(job)) for kind, job in work]
        statuses = [(kind, future.result()) for kind, future in futures]
    logs = "\n".join(processes.log_tail(p) for p in sorted(tmp_path.glob("*.log")))
    allowed = {
        "batch": {200, 201, 202},
        "single": {200, 201},
        "submit": {201},
        "delete": {204},
        "import": {200, 201, 202},
    }
    wrong = [(kind, code) for kind, code in statuses if code not in allowed[kind]]
    assert not wrong, (wrong, logs)
    _wait_idle(env)
    coll.refresh_from_db()
    assert Run.objects.filter(collection=coll).count() == 1 + SUBMISSIONS
    _assert_scores_equal_a_rescoring(coll, base, coordinator)

    # Second round: the web workers' cached rankings predate the submissions and
    # deletions of the first; judgments of every query must still score every run right.
    second = [lambda u=judges[i % JUDGES]: post_single(u) for i in range(3 * len(QUERIES))]
    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = [f.result() for f in [pool.submit(job) for job in second]]
    assert set(codes) <= {200, 201}, codes
    _wait_idle(env)
    _assert_scores_equal_a_rescoring(coll, base, coordinator)
    assert " 500 " not in (tmp_path / "gunicorn.log").read_text(), logs
