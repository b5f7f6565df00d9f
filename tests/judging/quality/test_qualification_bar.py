"""A qualification bar shows what it leaves out before it is saved, and refuses to empty the list.

The issue's case: ``PUT gold/qualification {10, 0.8}`` on a collection with three gold
pairs made every judge "below", the imported reference judge too; the judgment list went
to 0 lines and the answer only echoed the bar back.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging import services
from judging.lists import services as lists
from judging.models import LiveGrade, Membership
from judging.quality import gold as rule
from judging.quality import selectors
from judging.quality import services as quality_services
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def campaign():
    """Three gold pairs; two judges in Graded, and an imported reference judge (no gold)."""
    coll = factories.collection("bar")
    boss = factories.user("boss")
    factories.member(coll, boss, Role.COORDINATOR)
    queries = [factories.query(coll, f"q{i}") for i in range(2)]
    docs = [factories.document(coll, f"d{i}") for i in range(6)]
    for d in docs[:3]:
        quality_services.gold_set(query=queries[0], document=d, grade=2, actor=boss)
    ann, ben = (factories.human_judge(factories.user(name)) for name in ("ann", "ben"))
    for judge in (ann, ben):
        factories.member(coll, judge.user, Role.JUDGE)
    for d in docs[:3]:  # ann answers every gold pair right
        services.judgment_record(judge=ann, query=queries[0], document=d, grade=2)
    for d in docs[3:]:  # ben judges ordinary pairs of q1
        services.judgment_record(judge=ben, query=queries[1], document=d, grade=1)
    reference = lists.judge_for_import(name="NIST assessor", collection=coll)
    for d in docs[3:]:  # the reference judge's imported labels of q0's ordinary pairs
        services.judgment_record(
            judge=reference, query=queries[0], document=d, grade=3, channel="import"
        )
    return coll, boss, ann, ben, reference


def test_the_imported_reference_judge_is_not_assessed_and_counts(campaign):
    coll, *_ = campaign
    effect = selectors.bar_effect(collection=coll, pairs=10, share=0.8)
    assert effect.gold_pairs == 3 and effect.judges == 3
    assert effect.standings == {rule.QUALIFYING: 2, rule.NOT_ASSESSED: 1}
    # ann and ben wait (3 and 0 of 10 gold pairs); the reference judge's labels count
    assert (effect.judges_left_out, effect.labels_left_out, effect.labels) == (2, 6, 9)
    assert (effect.lines_now, effect.lines_after) == (9, 3)  # q0/d3–d5 stay
    assert any("3 gold pairs" in w and "no judge can answer 10" in w for w in effect.warnings)
    assert effect.needs_confirm and "keeps 3 of the judgment list's 9 lines" in effect.reason


def test_a_bar_that_empties_the_list_is_refused_then_confirmed(campaign):
    coll, boss, *_, reference = campaign
    for judgment in list(reference.judgments.all()):  # no reference judge this time
        services.judgment_delete(judgment=judgment)
    before = LiveGrade.objects.filter(collection=coll).count()
    assert before == 6
    effect = selectors.bar_effect(collection=coll, pairs=10, share=0.8)
    assert (effect.lines_after, effect.judges_left_out) == (0, 2)
    assert "Every judge's labels would be left out." in effect.warnings
    api = client_for(boss)
    url = f"/api/v1/collections/{coll.slug}/gold/qualification/"
    preview = api.get(
        url + "preview/", {"qualification_pairs": 10, "qualification_share": 0.8}
    ).json()
    assert (preview["lines_now"], preview["lines_after"], preview["needs_confirm"]) == (6, 0, True)
    assert preview["judges_left_out"] == 2 and preview["labels_left_out"] == 6
    refused = api.put(url, {"qualification_pairs": 10, "qualification_share": 0.8}, format="json")
    assert refused.status_code == 400
    errors = errors_of(refused)
    assert {e["field"] for e in errors} == {"confirm"}
    assert "keeps 0 of the judgment list's 6 lines" in errors[0]["message"]
    coll.refresh_from_db()
    assert coll.qualification_pairs == 0 and LiveGrade.objects.filter(collection=coll).count() == 6
    done = api.put(
        url,
        {"qualification_pairs": 10, "qualification_share": 0.8, "confirm": True},
        format="json",
    )
    assert done.status_code == 200
    body = done.json()
    assert (body["qualification_pairs"], body["qualification_share"]) == (10, 0.8)
    # the answer reports the counts the preview gave: before 6 lines, now 0
    same = ("judges", "judges_left_out", "labels", "labels_left_out", "lines_now", "lines_after")
    assert {k: body["effect"][k] for k in same} == {k: preview[k] for k in same}
    assert LiveGrade.objects.filter(collection=coll).count() == 0
    # turning it off never needs confirming
    off = api.put(url, {"qualification_pairs": 0, "qualification_share": 0.8}, format="json")
    assert off.status_code == 200 and off.json()["effect"]["lines_after"] == 6


def test_a_mild_bar_needs_no_confirmation(campaign):
    coll, *_ = campaign
    effect = selectors.bar_effect(collection=coll, pairs=3, share=1.0)
    assert effect.standings == {rule.QUALIFIED: 1, rule.QUALIFYING: 1, rule.NOT_ASSESSED: 1}
    assert (effect.lines_now, effect.lines_after, effect.needs_confirm) == (9, 6, False)
    assert quality_services.qualification_set(collection=coll, pairs=3, share=1.0)
    assert LiveGrade.objects.filter(collection=coll).count() == 6


def test_the_preview_refuses_bad_bars(campaign):
    coll, boss, *_ = campaign
    api = client_for(boss)
    url = f"/api/v1/collections/{coll.slug}/gold/qualification/preview/"
    for params, field in (
        ({"qualification_share": 0.8}, "qualification_pairs"),
        ({"qualification_pairs": -1, "qualification_share": 0.8}, "qualification_pairs"),
        ({"qualification_pairs": 3, "qualification_share": 2}, "qualification_share"),
        ({"qualification_pairs": 3, "qualification_share": "nan"}, "qualification_share"),
    ):
        response = api.get(url, params)
        assert response.status_code == 400, params
        assert field in {e.get("field") for e in errors_of(response)}
    judge_api = client_for(Membership.objects.get(collection=coll, user__username="ann").user)
    assert (
        judge_api.get(url, {"qualification_pairs": 3, "qualification_share": 1}).status_code == 403
    )


def test_the_page_previews_then_needs_the_box_ticked(client, campaign):
    coll, boss, *_ = campaign
    client.force_login(boss)
    url = reverse("judging:gold_list", args=[coll.slug])
    bar = {"qualification_pairs": "10", "qualification_percent": "80"}
    shown = client.post(url, {**bar, "preview": "1"})
    assert shown.status_code == 200
    page = shown.content.decode()
    assert 'data-field="judges-left-out">2 of 3' in page
    assert 'data-field="lines-after">3 of 9' in page and 'data-field="needs-confirm"' in page
    assert "no judge can answer 10" in page
    coll.refresh_from_db()
    assert coll.qualification_pairs == 0  # a preview saves nothing
    refused = client.post(url, bar)
    assert refused.status_code == 400 and "keeps 3 of the judgment list" in refused.content.decode()
    saved = client.post(url, {**bar, "confirm": "on"}, follow=True)
    coll.refresh_from_db()
    assert coll.qualification_pairs == 10
    message = saved.content.decode()  # the saved answer reports the preview's counts
    assert "2 of 3 judges left out for now, 3 of 9 lines kept" in message
    assert "no judge can answer 10" in message  # the warning stays on the tab


def test_a_list_left_by_a_bar_saved_before_the_fix_is_found_and_rebuilt(campaign, capsys):
    """``rebuild_live_list`` finds and mends a list that does not follow its bar.

    As in a collection whose bar was set before the fix (or loaded around the services):
    the bar is stored but the list still counts every judge; and the bug's own state, an
    emptied list.
    """
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from judging.models import Collection

    coll, *_ = campaign
    lines = LiveGrade.objects.filter(collection=coll)
    assert lines.count() == 9
    call_command("rebuild_live_list", coll.slug, "--check")
    assert "agrees with a recomputation" in capsys.readouterr().out
    version = Collection.objects.get(pk=coll.pk).judgments_version
    Collection.objects.filter(pk=coll.pk).update(qualification_pairs=10, qualification_share=0.8)
    with pytest.raises(CommandError, match="differ from a recomputation"):
        call_command("rebuild_live_list", coll.slug, "--check")
    out = capsys.readouterr().out
    # ann's and ben's labels wait for qualification: the six lines only they make go
    assert out.count("no label counts for it") == 6 and "query 'q1', document 'd3'" in out
    assert lines.count() == 9  # the check changed nothing, the version neither
    assert Collection.objects.get(pk=coll.pk).judgments_version == version
    call_command("rebuild_live_list", coll.slug)
    assert "live judgment list rebuilt" in capsys.readouterr().out
    assert sorted(lines.values_list("query__external_id", "document__external_id", "grade")) == [
        ("q0", "d3", 3),
        ("q0", "d4", 3),
        ("q0", "d5", 3),
    ]
    assert Collection.objects.get(pk=coll.pk).judgments_version == version + 1
    lines.delete()  # the bug's own state: the bar emptied the list
    with pytest.raises(CommandError):
        call_command("rebuild_live_list", "--check")
    assert capsys.readouterr().out.count("missing, recomputed grade 3") == 3
    call_command("rebuild_live_list")
    assert lines.count() == 3
    call_command("rebuild_live_list", "--check")
    assert f"{coll.slug}: live judgment list agrees" in capsys.readouterr().out
