"""Live scores after any order of submissions, judgments and deletions equal a rescoring.

Each live path (a submission's scoring, one judgment's rescoring, a deletion) moves the
stored scores and the scoreboard incrementally. Whatever order they come in, the result
must equal scoring every run from nothing. Random sequences over a small collection find
the orders no hand-written test thought of (a run submitted before any judgment was
once left off the scoreboard and never scored).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from judging import services
from judging.adjudication import services as adjudication_services
from judging.models import Adjudication, Judgment, Membership
from metrics import services as metrics_services
from metrics.live import store
from metrics.models import Run
from tests import factories
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db

QUERIES = ("q1", "q2", "q3")
DOCS = ("d1", "d2", "d3", "d4")


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def _means(collection_id: int) -> dict[int, dict[str, float | None]]:
    return store.board_read(collection_id).means()


def _assert_equal_to_rescoring(coll) -> None:
    runs = list(Run.objects.filter(collection=coll))
    stored, means = metrics_factories.stored_scores(runs), _means(coll.pk)
    metrics_services.runs_score(collection=coll)
    fresh, fresh_means = metrics_factories.stored_scores(runs), _means(coll.pk)
    assert stored.keys() == fresh.keys()
    for key, scores in fresh.items():
        assert scores.keys() == stored[key].keys(), key
        assert all(_same(stored[key][n], v) for n, v in scores.items()), (key, stored[key])
    assert means.keys() == fresh_means.keys() == {r.pk for r in runs}
    for run_id, values in fresh_means.items():
        assert all(_same(means[run_id][n], v) for n, v in values.items()), run_id


def test_a_run_submitted_before_any_judgment_is_scored_by_later_judgments():
    coll = factories.collection("early")
    q1 = factories.query(coll, "q1")
    d1 = factories.document(coll, "d1")
    user = factories.user("j")
    factories.member(coll, user, Membership.Role.JUDGE)
    team = metrics_services.team_create(collection=coll, name="t", members=[user])
    for tag in ("a", "b"):
        metrics_services.run_submit(
            collection=coll, team=team, tag=tag, content=b"q1 Q0 d1 1 1.0 x\n",
            filename="r.txt", user=user,
        )  # fmt: skip
    services.judgment_record(judge=factories.human_judge(user), query=q1, document=d1, grade=3)
    means = _means(coll.pk)
    assert len(means) == 2
    assert {m["P(rel=1)@10"] for m in means.values()} == {0.1}
    _assert_equal_to_rescoring(coll)


ACTIONS = [
    "submit",
    "submit",
    "judge",
    "judge",
    "judge",
    "unjudge",
    "delete",
    "import",
    "measures",
    "adjudicate",
    "revoke",
    "policy",
]
POLICIES = ("lower_median_human_then_llm", "mean_human_then_llm", "dawid_skene")
MEASURE_SETS = (None, ["P@2", "ndcg_cut.3", "map"])


@pytest.mark.parametrize("seed", range(40))
def test_any_order_of_changes_scores_like_a_rescoring(seed, django_capture_on_commit_callbacks):
    rng = np.random.default_rng(seed)
    coll, users = factories.judged_collection(
        f"mix{seed}", queries=QUERIES, documents=DOCS, judges=[f"j{seed}-{i}" for i in range(2)]
    )
    judges = [factories.human_judge(u) for u in users] + [factories.llm_judge(f"llm-{seed}")]
    world = _World(coll, judges, users, rng)
    changed = 0
    for step in range(12):
        with django_capture_on_commit_callbacks(execute=True):  # background rescoring
            changed += world.step(str(rng.choice(ACTIONS)), step)
    assert changed, "the sequence changed nothing"
    _assert_equal_to_rescoring(coll)


class _World:
    """A small collection and the random changes a sequence applies to it."""

    def __init__(self, coll, judges, users, rng) -> None:
        self.coll, self.judges, self.users, self.rng = coll, judges, users, rng
        self.team = metrics_services.team_create(collection=coll, name="t", members=users)
        self.queries = list(coll.queries.order_by("external_id"))
        self.docs = list(coll.documents.order_by("external_id"))
        self.default_measures = list(coll.measures)

    def step(self, action: str, step: int) -> bool:
        """Apply one random change of kind ``action``; return whether there was one."""
        rng, coll = self.rng, self.coll
        coll.refresh_from_db()  # as each request reads it afresh
        if action == "submit":
            lines = "".join(
                f"{q} Q0 {d} {r + 1} {10 - r} x\n"
                for q in QUERIES
                if rng.random() < 0.6
                for r, d in enumerate(rng.permutation(DOCS)[: rng.integers(1, 5)])
            )
            if not lines:
                return False
            metrics_services.run_submit(
                collection=coll, team=self.team, tag=f"r{step}", content=lines.encode(),
                filename="r.txt", user=self.users[0],
            )  # fmt: skip
        elif action == "judge":
            services.judgment_record(
                judge=self.judges[rng.integers(2)],
                query=self.queries[rng.integers(3)],
                document=self.docs[rng.integers(4)],
                grade=int(rng.integers(5)),
            )
        elif action == "import":  # the bulk path: rescored by the background task
            rows = [
                services.JudgmentRow(n + 1, q, d, int(rng.integers(5)))
                for n, (q, d) in enumerate(
                    (q, d) for q in QUERIES for d in DOCS if rng.random() < 0.3
                )
            ]
            if not rows:
                return False
            services.judgments_import(  # a human's or the LLM judge's labels
                collection=coll, judge=self.judges[rng.integers(3)], rows=rows
            )
        elif action == "unjudge":
            present = list(Judgment.objects.filter(collection=coll).order_by("pk"))
            if not present:
                return False
            services.judgment_delete(judgment=present[rng.integers(len(present))])
        elif action == "delete":
            present = list(Run.objects.filter(collection=coll).order_by("pk"))
            if not present:
                return False
            metrics_services.run_delete(run=present[rng.integers(len(present))])
        elif action == "adjudicate":
            adjudication_services.adjudication_record(
                query=self.queries[rng.integers(3)],
                document=self.docs[rng.integers(4)],
                grade=int(rng.integers(5)),
                reason="settled",
                actor=self.users[0],
            )
        elif action == "revoke":
            present = list(Adjudication.objects.filter(collection=coll, revoked_at__isnull=True))
            if not present:
                return False
            adjudication_services.adjudication_revoke(
                adjudication=present[rng.integers(len(present))], actor=self.users[0]
            )
        elif action == "policy":
            adjudication_services.aggregation_settings_update(
                collection=coll,
                actor=self.users[0],
                aggregation_policy=POLICIES[rng.integers(len(POLICIES))],
            )
        else:
            measures = MEASURE_SETS[rng.integers(2)] or self.default_measures
            metrics_services.collection_settings_update(collection=coll, measures=measures)
        return True
