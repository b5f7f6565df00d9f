"""The README's demo story, end to end: a team submits, pools fill, judges grade, scores move."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token

from judging.demo.loader import DEMO_SLUG, demo_load
from judging.models import Collection, Judgment, PoolEntry
from judging.selectors import pair_ref
from metrics.models import Run, Team
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
RUNS = Path(__file__).resolve().parents[2] / "demo" / "runs"


def test_submit_pool_judge_and_watch_the_leaderboard_move(
    client, settings, tmp_path, django_capture_on_commit_callbacks, django_user_model
):
    settings.MEDIA_ROOT = tmp_path
    demo_load()
    call_command("load_demo_team", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert Team.objects.get(collection__slug=DEMO_SLUG).members.filter(username="team1").exists()
    pool_before = PoolEntry.objects.filter(collection__slug=DEMO_SLUG).count()

    team1 = django_user_model.objects.get(username="team1")
    token = Token.objects.create(user=team1)
    api = f"/api/v1/collections/{DEMO_SLUG}"
    with (RUNS / "bm25-baseline.txt").open("rb") as handle:
        response = client.post(
            f"{api}/runs/",
            {"file": handle, "tag": "bm25-baseline"},
            HTTP_AUTHORIZATION=f"Token {token.key}",
        )
    assert response.status_code == 201, response.content
    pooled = PoolEntry.objects.filter(collection__slug=DEMO_SLUG, source="run")
    assert pooled.count() > 0
    assert PoolEntry.objects.filter(collection__slug=DEMO_SLUG).count() > pool_before

    # The demo is an internal evaluation: the team sees its live scores before anything
    # is published, and watches them move as judges grade, as the coordinator does.
    assert Collection.objects.get(slug=DEMO_SLUG).purpose == "internal"
    coordinator = Token.objects.create(user=django_user_model.objects.get(username="coordinator"))

    def board(key: str = coordinator.key):
        data = client.get(f"{api}/leaderboard/", HTTP_AUTHORIZATION=f"Token {key}").json()
        (row,) = data["rows"]
        return data["version"], row

    version, row = board()
    assert not row["stale"]
    _, team_row_before = board(token.key)
    assert team_row_before["run"] == "bm25-baseline"
    assert team_row_before["scores"] == row["scores"]

    # judge1 grades the first few pairs of the queue in the browser.
    client.force_login(django_user_model.objects.get(username="judge1"))
    for grade in (4, 3, 4):
        card = client.get(reverse("judging:judge_next", args=[DEMO_SLUG]))
        entry_id = card.context["entry"].pk
        with django_capture_on_commit_callbacks(execute=True):
            posted = client.post(
                reverse("judging:judge_pair", args=[DEMO_SLUG, pair_ref(entry_id)]),
                {"grade": grade},
            )
        assert posted.status_code in (302, 303)
    assert Judgment.objects.filter(judge__user__username="judge1").count() == 3

    client.logout()
    new_version, new_row = board()
    assert new_version > version and not new_row["stale"]
    assert new_row["scores"] != row["scores"]
    _, team_row = board(token.key)
    assert team_row["scores"] == new_row["scores"] != team_row_before["scores"]
    assert any(value is not None for value in team_row["scores"].values())
    assert metrics_factories.current(Run.objects.get()).scored_version == new_version
