"""Schedules and alerts over REST and on the pages: the same verdicts, refused input by field."""

from __future__ import annotations

import pytest
from django.test import Client

from metrics.schedules.models import AlertWebhook, SearchSchedule
from tests import factories
from tests.api_client import client_for, errors_of
from tests.metrics.schedules.conftest import alerted

pytestmark = pytest.mark.django_db


def _base(coll):
    return f"/api/v1/collections/{coll.slug}"


def test_a_schedule_is_set_shown_and_removed_over_rest(watched):
    coll, boss, configuration = watched
    api = client_for(boss)
    url = f"{_base(coll)}/search-configurations/{configuration.pk}/schedule/"
    assert api.get(url).status_code == 404
    put = api.put(url, {"frequency": "cron", "cron": "30 2 * * 1-5", "alpha": 0.01}, format="json")
    assert put.status_code == 200, put.json()
    body = api.get(url).json()
    assert body["frequency"] == "cron" and body["cron"] == "30 2 * * 1-5"
    assert body["alpha"] == 0.01 and body["active"] and body["webhook"] is None
    assert body["next_run_at"] == SearchSchedule.objects.get().next_run_at.isoformat().replace(
        "+00:00", "Z"
    )
    for payload, field in (
        ({"frequency": "cron", "cron": "* * * * *"}, "cron"),
        ({"frequency": "yearly"}, "frequency"),
        ({"frequency": "daily", "webhook": "nowhere"}, "webhook"),
        ({"frequency": "daily", "baseline": 424242}, "baseline"),
        ({"frequency": "daily", "alpha": 2}, "alpha"),
        ({"frequency": "daily", "measure": "P_5"}, "measure"),
        ({"frequency": "daily", "cron": "\x00"}, "cron"),
        ({"frequency": "daily", "colour": "red"}, "colour"),
    ):
        refused = api.put(url, payload, format="json")
        assert refused.status_code == 400, (payload, refused.json())
        assert field in str(errors_of(refused)), (payload, refused.json())
    assert SearchSchedule.objects.get().cron == "30 2 * * 1-5"  # nothing half-written
    assert api.delete(url).status_code == 204
    assert not SearchSchedule.objects.exists()
    judge = factories.user("judy2")
    factories.member(coll, judge)
    assert client_for(judge).get(url).status_code == 403


def test_only_a_webhook_the_operator_opened_to_the_collection_can_be_picked(watched):
    coll, boss, configuration = watched
    api = client_for(boss)
    url = f"{_base(coll)}/search-configurations/{configuration.pk}/schedule/"
    hook = AlertWebhook.objects.create(
        name="ops", url="https://hooks.example.org/graded", secret_env="GRADED_WEBHOOK_SECRET_OPS"
    )
    assert api.put(url, {"frequency": "daily", "webhook": "ops"}, format="json").status_code == 400
    hook.allowed_collections.add(coll)
    assert (
        api.put(url, {"frequency": "daily", "webhook": "ops"}, format="json").json()["webhook"]
        == "ops"
    )


def test_rest_and_the_pages_show_the_alert_with_the_checks_numbers(watched, monkeypatch):
    coll, boss, configuration = watched
    alert = alerted(watched, monkeypatch)
    api = client_for(boss)
    checks = api.get(f"{_base(coll)}/search-checks/").json()
    assert len(checks) == 2 and checks[0]["id"] == alert.pk
    fired = api.get(f"{_base(coll)}/search-checks/", {"fired": "true"}).json()
    assert [c["id"] for c in fired] == [alert.pk]
    assert fired[0]["mean_change"] == alert.mean_change and fired[0]["p_value"] == alert.p_value
    assert fired[0]["email"] == "sent"
    assert api.get(f"{_base(coll)}/search-checks/", {"fired": "yes"}).status_code == 400
    page = Client()
    page.force_login(boss)
    html = page.get(f"/c/{coll.slug}/search/alerts/").content.decode()
    assert f'data-check="{alert.pk}" data-fired="true"' in html and alert.reason in html
    assert f"?a={alert.baseline_id}&amp;b={alert.snapshot_id}" in html
    panel = page.get(f"/c/{coll.slug}/search/alerts/", headers={"HX-Request": "true"})
    assert "Search alerts" in panel.content.decode() and "<html" not in panel.content.decode()
    schedule_page = page.get(f"/c/{coll.slug}/search/{configuration.pk}/schedule/")
    assert schedule_page.status_code == 200
    assert "Runs daily; next" in schedule_page.content.decode()
    assert f'data-check="{alert.pk}"' in schedule_page.content.decode()


def test_the_schedule_page_saves_refuses_by_field_and_removes(watched):
    coll, boss, configuration = watched
    page = Client()
    page.force_login(boss)
    url = f"/c/{coll.slug}/search/{configuration.pk}/schedule/"
    refused = page.post(
        url,
        {
            "action": "save",
            "frequency": "cron",
            "cron": "*/2 * * * *",
            "alpha": "0.05",
            "direction": "drop",
        },
    )
    assert refused.status_code == 400
    assert "more often than every 10 minutes" in refused.content.decode()
    assert not SearchSchedule.objects.exists()
    saved = page.post(
        url,
        {
            "action": "save",
            "frequency": "weekly",
            "alpha": "0.05",
            "direction": "either",
            "email": "on",
            "active": "on",
        },
    )
    assert saved.status_code == 302
    schedule = SearchSchedule.objects.get()
    assert (schedule.frequency, schedule.direction, schedule.email) == ("weekly", "either", True)
    detail = page.get(f"/c/{coll.slug}/search/{configuration.pk}/").content.decode()
    assert "Scheduled weekly" in detail
    paused = page.post(
        url, {"action": "save", "frequency": "weekly", "alpha": "0.05", "direction": "drop"}
    )
    assert paused.status_code == 302
    schedule.refresh_from_db()
    assert not schedule.active and schedule.paused_reason == "Paused by a coordinator."
    assert (
        "Schedule paused" in page.get(f"/c/{coll.slug}/search/{configuration.pk}/").content.decode()
    )
    page.post(url, {"action": "remove"})
    assert not SearchSchedule.objects.exists()
    judge = factories.user("judy3")
    factories.member(coll, judge)
    other = Client()
    other.force_login(judge)
    assert other.get(url).status_code in (403, 404)
