"""The board says why a bias-corrected mean has no interval, instead of a zero width.

The issue's case: every audited query scores 1.000 for people and the LLM alike, and the
leaderboard showed "PPI 1.000 (1.000–1.000)".
"""

from __future__ import annotations

import numpy as np
import pytest
from django.core.cache import cache
from django.urls import reverse

from judging import services
from judging.agreement.checks import audit_draws
from judging.models import Membership
from metrics.analysis import ppi as ppi_module
from metrics.engine import ppi as ppi_engine
from metrics.live.scoring import canonical_names
from metrics.pool import services as pool_services
from tests import factories
from tests.api_client import client_for
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
N_QUERIES, N_DOCS = 8, 4


@pytest.fixture
def board():
    """Every pair relevant: the LLM grades them all 1, people grade the audited ones 1."""
    cache.clear()
    coll = factories.collection("ppi-flat", measures=["P_3"])
    queries = [factories.query(coll, f"q{i}") for i in range(N_QUERIES)]
    docs = {
        q: [factories.document(coll, f"{q.external_id}-d{j}") for j in range(N_DOCS)]
        for q in queries
    }
    team = metrics_factories.team(coll, "t")
    metrics_factories.run(coll, team, "A", rankings={q: [d.pk for d in docs[q]] for q in queries})
    llm = factories.llm_judge()
    for q in queries:
        for d in docs[q]:
            services.judgment_record(judge=llm, query=q, document=d, grade=1)
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    ids = np.array([q.pk for q in queries])
    seed = next(
        s
        for s in range(10_000)
        if 3 <= (audit_draws(ids, np.zeros(N_QUERIES), seed=s) < 0.5).sum() <= 5
    )
    pool_services.pooling_policy_set(
        collection=coll, actor=cora, strategy="llm-check", audit_percent=50, seed=seed
    )
    draws = audit_draws(ids, np.zeros(N_QUERIES), seed=seed)
    human = factories.human_judge(factories.user("hana"))
    for q, x in zip(queries, draws, strict=True):
        if x < 0.5:
            for d in docs[q]:
                services.judgment_record(judge=human, query=q, document=d, grade=1)
    coll.refresh_from_db()
    return coll, cora


def test_rest_gives_no_interval_and_says_why(board):
    coll, cora = board
    body = client_for(cora).get(f"/api/v1/collections/{coll.slug}/leaderboard/").json()
    (measure,) = canonical_names(["P_3"])
    cell = body["rows"][0]["ppi"][measure]
    assert cell["estimate"] == pytest.approx(1.0)
    assert cell["low"] is None and cell["high"] is None
    note = ppi_module.INTERVAL_NOTES[ppi_engine.NO_SPREAD]
    assert cell["interval_note"] == note and cell["reason"] == note
    assert "do not vary" in note


def test_the_page_says_why_instead_of_a_zero_width(board, client):
    coll, cora = board
    client.force_login(cora)
    page = client.get(reverse("metrics:leaderboard", args=[coll.slug])).content.decode()
    assert "(1.000–1.000)" not in page
    assert "no interval: audit does not vary" in page
    assert ppi_module.INTERVAL_NOTES[ppi_engine.NO_SPREAD] in page  # the whole note, on hover
