"""The stop rule watches significance in the app: snapshots, REST, the page.

Three runs over six queries, P@3. In each query the three runs share one document (all
rank it in their top 3, so grading it moves every run alike: no difference, no τ, no
test changes) and each ranks two documents of its own. Every run's own documents are
judged through the real services (relevant ones first), which leaves the shared ones
open. The relevant documents per run and query (of its own two) are ``COUNTS``:

    A 1 2 2 2 2 2   (mean P@3 11/18)
    B 1 2 2 2 2 0   (10/18, or 11/18 with B's first own document of q6 relevant)
    C 0 1 1 2 0 0   (4/18)

Paired t-test over the six queries, Holm over the three pairs: A-B 0.363, A-C 0.038,
B-C 0.084 → only A > C. With B's q6 document relevant: A-B 0.363, A-C 0.035, B-C 0.035
→ A > C and B > C. The ranking A > B > C holds either way (τ = 1).
"""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from judging import services as judging_services
from judging.models import Membership
from metrics import services as metrics_services
from metrics.pool.models import RankingSnapshot
from tests import factories
from tests.api_client import client_for
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
COUNTS = {"A": [1, 2, 2, 2, 2, 2], "B": [1, 2, 2, 2, 2, 0], "C": [0, 1, 1, 2, 0, 0]}
STEP = 6  # the last six judgments (31–36) against the snapshot at 30


@pytest.fixture
def campaign(db):
    coll = factories.collection("sigstop", pool_depth=3, judges_per_pair=1, measures=["P_3"])
    queries = [factories.query(coll, f"q{i}") for i in range(1, 7)]
    team = metrics_factories.team(coll)
    shared = [factories.document(coll, f"s{qi}") for qi in range(len(queries))]
    own = {
        (tag, qi): [factories.document(coll, f"{tag}{qi}-{k}") for k in (0, 1)]
        for tag in COUNTS
        for qi in range(len(queries))
    }
    for tag in COUNTS:
        rankings = {
            q: [shared[qi].pk, *(d.pk for d in own[tag, qi])] for qi, q in enumerate(queries)
        }
        run = metrics_factories.run(coll, team, tag, rankings=rankings)
        metrics_services.pool_from_run(run=run, depth=coll.pool_depth)
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    user = factories.user("jay")
    factories.member(coll, user, Membership.Role.JUDGE)
    coll.refresh_from_db()
    return coll, queries, own, cora, factories.human_judge(user)


def _judge_all(campaign, capture, *, last_grade):
    """Judge every run's own documents, B's first of q6 last (graded ``last_grade``)."""
    coll, queries, own, _cora, judge = campaign
    relevant, other = [], []
    for (tag, qi), docs in own.items():
        for k, doc in enumerate(docs):
            if (tag, qi, k) == ("B", 5, 0):
                continue
            (relevant if k < COUNTS[tag][qi] else other).append((queries[qi], doc))
    labels = [(q, d, 2) for q, d in relevant] + [(q, d, 0) for q, d in other]
    labels.append((queries[5], own["B", 5][0], last_grade))
    assert len(labels) == 36 and len(relevant) == 24  # all relevant ones by the snapshot
    for query, doc, grade in labels:
        with capture(execute=True):
            judging_services.judgment_record(judge=judge, query=query, document=doc, grade=grade)
    coll.refresh_from_db()


def _holm_decisions(matrix):
    """Return the significant (winner, loser) rows by scipy's t-test and Holm by hand."""
    pairs = [(0, 1), (0, 2), (1, 2)]
    raw = [stats.ttest_rel(matrix[i], matrix[j]).pvalue for i, j in pairs]
    order = np.argsort(raw)
    adjusted, running = {}, 0.0
    for rank, k in enumerate(order.tolist()):
        running = max(running, min(1.0, (3 - rank) * raw[k]))
        adjusted[pairs[k]] = running
    return {(i, j) if matrix[i].mean() > matrix[j].mean() else (j, i)
            for (i, j), a in adjusted.items() if a <= 0.05}  # fmt: skip


def test_the_hand_worked_figures():
    before = np.array(list(COUNTS.values()), dtype=float) / 3
    after = before.copy()
    after[1, 5] = 1 / 3
    assert _holm_decisions(before) == {(0, 2)}
    assert _holm_decisions(after) == {(0, 2), (1, 2)}


def _stability(coll, cora):
    url = f"/api/v1/collections/{coll.slug}/pooling/stability/"
    return client_for(cora).get(url, {"step": STEP}).json()


def test_tau_holds_but_a_decision_flips_so_judging_still_pays(
    campaign, django_capture_on_commit_callbacks, client
):
    coll, *_, cora, _judge = campaign
    _judge_all(campaign, django_capture_on_commit_callbacks, last_grade=2)
    runs = {r.tag: str(r.pk) for r in coll.runs.all()}
    snapshot = RankingSnapshot.objects.get(collection=coll, judged=30)
    assert snapshot.significance == {
        "runs": sorted(runs.values(), key=int),
        "queries": 6,
        "better": [[runs["A"], runs["C"]]],
    }
    body = _stability(coll, cora)
    assert body["judged"] == 36 and body["open_pairs"] == 6  # the shared documents
    assert body["looking_back"]["tau"] == 1.0 and body["looking_back"]["then"] == 30
    assert body["ahead"]["mean"] == 1.0  # the open pairs move every run alike
    sig = body["significance"]
    assert {k: sig[k] for k in ("pairs", "tested", "queries", "then", "changed", "compared")} == {
        "pairs": 2, "tested": 3, "queries": 6, "then": 30, "changed": 1, "compared": 3
    }  # fmt: skip
    assert sig["ahead"] == {"change": 0.0, "flips": 0.0, "pairs": 6, "draws": 50}
    assert body["state"] == "moving"
    assert "1 significance decision between runs changed" in body["sentence"]
    assert sig["summary"].startswith(
        "significant pairs: 2 of 3, 1 changed over the last 6 judgments; 0% chance one flips"
    )
    client.force_login(cora)
    page = client.get(reverse("metrics:stability", args=[coll.slug]), {"step": STEP})
    text = page.content.decode()
    assert 'data-state="moving"' in text
    assert "Significant pairs: 2 of 3, 1 changed over the last 6 judgments" in text


def test_tau_and_every_decision_hold_so_judging_stops_paying(
    campaign, django_capture_on_commit_callbacks, client
):
    coll, *_, cora, _judge = campaign
    _judge_all(campaign, django_capture_on_commit_callbacks, last_grade=0)
    body = _stability(coll, cora)
    assert body["looking_back"]["tau"] == 1.0 and body["ahead"]["mean"] == 1.0
    sig = body["significance"]
    assert (sig["pairs"], sig["tested"], sig["changed"], sig["ahead"]["change"]) == (1, 3, 0, 0.0)
    assert body["state"] == "stops-paying"
    assert sig["summary"] == (
        "significant pairs: 1 of 3, unchanged over the last 6 judgments; "
        "0% chance one flips in the next 6 (expected flips 0.00)"
    )
    client.force_login(cora)
    panel = client.get(
        reverse("metrics:stability", args=[coll.slug]),
        {"step": STEP},
        headers={"HX-Request": "true"},
    ).content.decode()
    assert 'data-state="stops-paying"' in panel
    assert "Significant pairs: 1 of 3, unchanged over the last 6 judgments" in panel


def test_a_snapshot_from_before_the_record_keeps_the_verdict_from_stopping(
    campaign, django_capture_on_commit_callbacks
):
    coll, *_, cora, _judge = campaign
    _judge_all(campaign, django_capture_on_commit_callbacks, last_grade=0)
    RankingSnapshot.objects.filter(collection=coll).update(significance=None)
    body = _stability(coll, cora)
    assert body["significance"]["changed"] is None and body["significance"]["then"] == 30
    assert body["state"] == "unknown" and "no record yet" in body["sentence"]


def test_the_rule_is_for_coordinators_only(campaign):
    coll, *_rest = campaign
    judge_user = Membership.objects.get(collection=coll, role=Membership.Role.JUDGE).user
    url = f"/api/v1/collections/{coll.slug}/pooling/stability/"
    assert client_for(judge_user).get(url).status_code == 403
