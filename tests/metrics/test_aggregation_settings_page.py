"""The collection settings page changes the aggregation policy and assignment (no admin)."""

from __future__ import annotations

import re

import pytest

from judging import services
from judging.models import Collection, LiveGrade, Membership, PolicyChange
from metrics.models import Run
from tests import factories
from tests.metrics import factories as metrics_factories
from tests.metrics.test_collection_settings import scored  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

FORM = {
    "action": "aggregation",
    "aggregation_policy": "mean_human_then_llm",
    "judges_per_pair": "2",
    "max_judges_per_pair": "3",
    "disagreement_spread": "2",
    "agreement_alert_threshold": "0.6",
}


def test_coordinator_changes_policy_on_the_settings_page(
    client,
    coll,
    scored,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    boss = factories.user("boss")
    factories.member(coll, boss, Membership.Role.COORDINATOR)
    other = factories.human_judge(factories.user())
    q, d = scored.rankings.first().query, LiveGrade.objects.first().document
    services.judgment_record(judge=other, query=q, document=d, grade=0)
    client.force_login(boss)
    url = f"/c/{coll.slug}/settings/"
    html = client.get(url + "?tab=aggregation").content.decode()
    assert 'id="aggregation-settings"' in html and "dawid_skene" in html
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, FORM)
    assert response.status_code == 303 and response["Location"] == url + "?tab=aggregation"
    coll = Collection.objects.get(pk=coll.pk)
    assert (coll.aggregation_policy, coll.judges_per_pair, coll.max_judges_per_pair) == (
        "mean_human_then_llm",
        2,
        3,
    )
    assert coll.agreement_alert_threshold == 0.6
    change = PolicyChange.objects.get()
    assert change.actor == boss and change.version == coll.judgments_version
    assert (
        metrics_factories.current(Run.objects.get(pk=scored.pk)).scored_version
        == coll.judgments_version
    )
    assert LiveGrade.objects.get(query=q, document=d).policy == "mean_human_then_llm"
    html = client.get(url + "?tab=aggregation").content.decode()
    assert 'id="policy-history"' in html
    # The menu and the history name policies for people; the ids appear only in the help.
    options = re.findall(r'<option value="([a-z_]+)"[^>]*>([^<]+)</option>', html)
    assert ("dawid_skene", "Dawid–Skene model of every judge") in options
    assert all(value != label for value, label in options)
    history = html[html.index('id="policy-history"') :]
    assert "Lower median of the humans, LLMs fill the rest → Mean of the humans" in history
    assert '<code class="canonical">mean_human_then_llm</code></dt><dd>Mean of the human' in html
    assert 'data-current="1" data-total="1"' in html
    response = client.post(url, {**FORM, "aggregation_policy": "median", "judges_per_pair": "0"})
    assert response.status_code == 400
    assert 'id="aggregation-settings"' in response.content.decode()  # its own tab
    assert Collection.objects.get(pk=coll.pk).judges_per_pair == 2


def test_judges_cannot_change_settings(client, coll, judge_user):
    client.force_login(judge_user)
    assert client.post(f"/c/{coll.slug}/settings/", FORM).status_code == 403
    assert Collection.objects.get(pk=coll.pk).aggregation_policy == "lower_median_human_then_llm"


def test_quotas_on_the_settings_page(client, coll, judge_user):
    boss = factories.user("boss")
    factories.member(coll, boss, Membership.Role.COORDINATOR)
    membership = Membership.objects.get(user=judge_user, role=Membership.Role.JUDGE)
    client.force_login(boss)
    url = f"/c/{coll.slug}/settings/"
    assert f'name="quota-{membership.pk}"' in client.get(url + "?tab=quotas").content.decode()
    response = client.post(url, {"action": "quota", f"quota-{membership.pk}": "12"})
    assert response.status_code == 303 and response["Location"] == url + "?tab=quotas"
    membership.refresh_from_db()
    assert membership.quota == 12
    client.post(url, {"action": "quota", f"quota-{membership.pk}": "-3"})
    membership.refresh_from_db()
    assert membership.quota == 12  # refused, unchanged
    refused = client.post(url, {"action": "quota", f"quota-{membership.pk}": "1²"})
    assert refused.status_code == 303  # refused like "-3" ('²' is a digit to isdigit only)
    membership.refresh_from_db()
    assert membership.quota == 12
    client.post(url, {"action": "quota", f"quota-{membership.pk}": ""})
    membership.refresh_from_db()
    assert membership.quota is None
