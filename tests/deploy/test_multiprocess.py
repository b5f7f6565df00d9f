"""Graded as deployed on one machine with several processes, exercised only through HTTP.

gunicorn (2 workers × 2 threads) and two Celery workers run as real processes with the
production settings, PostgreSQL (this test's database) and Redis as broker and cache, as
docs/deployment.md describes. A judge grades, a team submits a run, the coordinator runs
an LLM judge against a local fake provider, and the leaderboard must show the run scored
against the live judgment list, equal to the engine's score of the qrels Graded exports.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from judging.models import Membership
from metrics import engine
from metrics import services as metrics_services
from tests import factories, processes
from tests.judging.llm.conftest import KEY, KEY_ENV
from tests.judging.llm.fake_server import FakeLLM, Reply

NDCG10 = "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"


@pytest.fixture
def deployment(tmp_path: Path):
    """Start gunicorn and two Celery workers on this test database; yield the base URL."""
    extra = {"GRADED_LLM_CHUNK_PAIRS": "5", "GRADED_LLM_JOB_WORKERS": "2", KEY_ENV: KEY}
    with processes.deployment(tmp_path, celery=2, **extra) as (url, _):
        yield url


def _client(base: str, user) -> httpx.Client:
    token, _ = Token.objects.get_or_create(user=user)
    return httpx.Client(
        base_url=base, headers={"Authorization": f"Token {token.key}"}, timeout=30.0
    )


def _wait(what: str, check, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.django_db(transaction=True)
def test_judge_submit_llm_job_and_leaderboard_over_http(
    deployment, monkeypatch, settings, tmp_path
):
    monkeypatch.setenv(KEY_ENV, KEY)  # this process checks the key when the job is created
    # passwords hashed as the production server checks them (the tests' MD5 is not there)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    fake = FakeLLM(lambda body, n: Reply(content=f"##final score: {n % 4}", delay=0.02))
    try:
        coll = factories.collection("deploy")
        queries = [factories.query(coll, f"q{i}") for i in range(1, 4)]
        docs = [
            factories.document(coll, f"d{i}", body=f"passage {i} about the sky")
            for i in range(1, 7)
        ]
        pairs = [(q.pk, d.pk) for q in queries for d in docs]
        from judging import services as judging_services
        from judging.models import PoolEntry

        judging_services.pool_add_ids(collection=coll, pairs=pairs, source=PoolEntry.Source.MANUAL)
        users = get_user_model().objects
        cora, judy, alice = (users.create_user(n, password="x") for n in ("cora", "judy", "alice"))
        factories.member(coll, cora, Membership.Role.COORDINATOR)
        factories.member(coll, judy, Membership.Role.JUDGE)
        metrics_services.team_create(collection=coll, name="Alpha", members=[alice])
        llm = factories.umbrela_judge(coll, fake.url, api_key_env=KEY_ENV, max_attempts=2)
        base = deployment
        api = f"/api/v1/collections/{coll.slug}/"
        # Every part answers: the production processes' own health check says so.
        health = httpx.get(base + "/healthz", headers={"Host": "127.0.0.1"}, timeout=30.0)
        assert health.status_code == 200, health.text
        assert health.json() == {
            "status": "ok",
            "checks": {"database": "ok", "cache": "ok", "broker": "ok"},
        }

        with _client(base, judy) as judge_http:  # a human judge grades three pairs
            for qid, docno, grade in [("q1", "d1", 4), ("q1", "d2", 0), ("q2", "d3", 2)]:
                response = judge_http.post(
                    api + "judgments/", json={"query": qid, "document": docno, "grade": grade}
                )
                assert response.status_code == 201, response.text

        run = "".join(
            f"{q} Q0 d{d} {rank} {10 - rank} alpha-bm25\n"
            for q in ("q1", "q2", "q3")
            for rank, d in enumerate((3, 1, 5, 2, 6, 4), start=1)
        )
        with _client(base, alice) as team_http:  # the team submits a run
            response = team_http.post(
                api + "runs/",
                data={"tag": "alpha-bm25"},
                files={"file": ("run.txt", run.encode(), "text/plain")},
            )
            assert response.status_code == 201, response.text
            run_id = response.json()["id"]

        with _client(base, cora) as coordinator:  # the coordinator runs the LLM judge
            response = coordinator.post(api + "llm-jobs/", json={"judge": llm.pk, "concurrency": 3})
            assert response.status_code == 202, response.text  # accepted: a worker runs it
            job_url = f"{api}llm-jobs/{response.json()['id']}/"
            job = _wait(
                "the LLM job",
                lambda: (
                    (body := coordinator.get(job_url).json())["status"] in ("done", "failed")
                    and body
                ),
            )
            assert (job["status"], job["total"], job["done"], job["failed"]) == (
                "done",
                18,
                18,
                0,
            ), job
            assert len(fake.requests) == 18

            qrels = coordinator.get(api + "qrels/")
            assert qrels.status_code == 200, qrels.text
            expected = engine.evaluate(qrels.content, run.encode(), [NDCG10])[NDCG10]

            def scored() -> dict | None:
                body = coordinator.get(api + "leaderboard/").json()
                rows = [r for r in body["rows"] if r["run_id"] == run_id and not r["stale"]]
                score = rows[0]["scores"].get(NDCG10) if rows else None
                if score is not None and abs(score - expected) < 1e-9:
                    return rows[0]
                return None

            row = _wait("the leaderboard to show the live score", scored)
            assert 0 < row["scores"][NDCG10] <= 1
        with httpx.Client(base_url=base, timeout=30.0) as browser:  # the page, signed in
            form = browser.get("/accounts/login/")
            csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
            signed_in = browser.post(
                "/accounts/login/",
                data={"username": "cora", "password": "x", "csrfmiddlewaretoken": csrf},
                headers={"Referer": f"{base}/accounts/login/"},
            )
            errors = re.findall(r'role="alert">\s*<p>(.*?)</p>', signed_in.text)
            assert signed_in.status_code == 302, errors
            page = browser.get(f"/c/{coll.slug}/leaderboard/")
            assert page.status_code == 200 and "alpha-bm25" in page.text
            assert f"{row['scores'][NDCG10]:.4f}"[:5] in page.text
        logs = "\n".join(processes.log_tail(p) for p in tmp_path.glob("*.log"))
        assert " 500 " not in (tmp_path / "gunicorn.log").read_text(), logs
    finally:
        fake.close()
