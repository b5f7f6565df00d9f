"""Who may open which judging page: members only, own judgments only, judges not teams."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from judging import services
from judging.models import Judgment, Membership, PoolEntry
from judging.selectors import pair_ref
from tests import factories

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def world(coll, judge_user):
    """Two collections, each with a pooled pair and a judgment by its own judge."""
    other = factories.collection("other")
    data = {"coll": coll, "other": other}
    for key, collection in (("coll", coll), ("other", other)):
        q = factories.query(collection, "q1")
        d = factories.document(collection, "d1")
        data[f"{key}_entry"] = factories.pool_entry(collection, q, d)
    stranger = factories.user("stranger")
    factories.member(other, stranger)
    judge = factories.human_judge(judge_user)
    entry = data["coll_entry"]
    data["own_judgment"] = services.judgment_record(
        judge=judge, query=entry.query, document=entry.document, grade=2
    )
    peer = factories.user("peer")
    factories.member(coll, peer)
    data["peer_judgment"] = services.judgment_record(
        judge=factories.human_judge(peer), query=entry.query, document=entry.document, grade=1
    )
    entry = data["other_entry"]
    data["stranger_judgment"] = services.judgment_record(
        judge=factories.human_judge(stranger),
        query=entry.query,
        document=entry.document,
        grade=3,
    )
    return data


def pages(slug: str, entry_id: int, judgment_id: int) -> list[str]:
    return [
        reverse("judging:collection_detail", args=[slug]),
        reverse("judging:judge_next", args=[slug]),
        reverse("judging:judge_pair", args=[slug, pair_ref(entry_id)]),
        reverse("judging:judgment_list", args=[slug]),
        reverse("judging:judgment_update", args=[slug, judgment_id]),
        reverse("judging:poolentry_create", args=[slug]),
    ]


def test_judge_cannot_open_another_collections_pages(client, judge_user, world):
    client.force_login(judge_user)
    other = world["other"]
    for url in pages(other.slug, world["other_entry"].pk, world["stranger_judgment"].pk):
        assert client.get(url).status_code == 404, url
    assert (
        client.post(
            reverse("judging:judge_pair", args=[other.slug, pair_ref(world["other_entry"].pk)]),
            {"grade": "1"},
        ).status_code
        == 404
    )
    assert (
        client.post(
            reverse("judging:poolentry_create", args=[other.slug]), {"pairs": "q1 d1"}
        ).status_code
        == 404
    )
    assert Judgment.objects.filter(collection=other).count() == 1


def test_judge_cannot_open_a_pair_of_another_collection_through_their_own(
    client, judge_user, world
):
    client.force_login(judge_user)
    url = reverse(
        "judging:judge_pair", args=[world["coll"].slug, pair_ref(world["other_entry"].pk)]
    )
    assert client.get(url).status_code == 404
    assert client.post(url, {"grade": "1"}).status_code == 404


def test_judge_cannot_edit_another_judges_judgment(client, judge_user, world):
    client.force_login(judge_user)
    slug = world["coll"].slug
    peer = world["peer_judgment"]
    url = reverse("judging:judgment_update", args=[slug, peer.pk])
    assert client.get(url).status_code == 404
    assert client.post(url, {"status": "graded", "grade": "4"}).status_code == 404
    peer.refresh_from_db()
    assert peer.grade == 1
    # Nor through their own collection's URL with another collection's judgment id.
    url = reverse("judging:judgment_update", args=[slug, world["stranger_judgment"].pk])
    assert client.get(url).status_code == 404
    # Their own judgment opens.
    own = reverse("judging:judgment_update", args=[slug, world["own_judgment"].pk])
    assert client.get(own).status_code == 200


def test_judgment_list_shows_only_own_judgments(client, judge_user, world):
    client.force_login(judge_user)
    response = client.get(reverse("judging:judgment_list", args=[world["coll"].slug]))
    html = response.content.decode()
    assert f"judgments/{world['own_judgment'].pk}/edit/" in html
    assert f"judgments/{world['peer_judgment'].pk}/edit/" not in html


def test_judge_cannot_add_pairs(client, judge_user, world):
    client.force_login(judge_user)
    url = reverse("judging:poolentry_create", args=[world["coll"].slug])
    assert client.get(url).status_code in {403, 404}
    factories.document(world["coll"], "d2")
    assert client.post(url, {"pairs": "q1 d2"}).status_code in {403, 404}
    assert PoolEntry.objects.filter(collection=world["coll"]).count() == 1


def test_team_member_gets_no_judging_cards(client, world):
    member = factories.user("teamie")
    coll = world["coll"]
    factories.member(coll, member, Role.TEAM)
    client.force_login(member)
    entry = world["coll_entry"]
    for url in [
        reverse("judging:judge_next", args=[coll.slug]),
        reverse("judging:judge_pair", args=[coll.slug, pair_ref(entry.pk)]),
        reverse("judging:judgment_list", args=[coll.slug]),
        reverse("judging:poolentry_create", args=[coll.slug]),
    ]:
        assert client.get(url).status_code in {403, 404}, url
    url = reverse("judging:judge_pair", args=[coll.slug, pair_ref(entry.pk)])
    assert client.post(url, {"grade": "4"}).status_code in {403, 404}
    assert not Judgment.objects.filter(judge__user=member).exists()
    # The collection page itself is open to members, without judging links.
    detail = client.get(reverse("judging:collection_detail", args=[coll.slug]))
    assert detail.status_code == 200
    assert b"Start judging" not in detail.content
    home = client.get(reverse("judging:home"))
    assert b"Team member" in home.content and b"Start judging" not in home.content


def test_coordinator_may_judge_and_add_pairs(client, world):
    boss = factories.user("boss")
    coll = world["coll"]
    factories.member(coll, boss, Role.COORDINATOR)
    client.force_login(boss)
    assert client.get(reverse("judging:judge_next", args=[coll.slug])).status_code == 200
    assert client.get(reverse("judging:poolentry_create", args=[coll.slug])).status_code == 200


def test_anonymous_users_are_sent_to_login(client, world):
    slug = world["coll"].slug
    urls = [
        reverse("judging:home"),
        *pages(slug, world["coll_entry"].pk, world["own_judgment"].pk),
    ]
    login = reverse(settings.LOGIN_URL)
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(f"{login}?next="), url
    response = client.post(
        reverse("judging:judge_pair", args=[slug, pair_ref(world["coll_entry"].pk)]), {"grade": "1"}
    )
    assert response.status_code == 302 and response["Location"].startswith(login)
    assert Judgment.objects.count() == 3


def test_forms_need_csrf(judge_user, world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(judge_user)
    url = reverse("judging:judge_pair", args=[world["coll"].slug, pair_ref(world["coll_entry"].pk)])
    assert client.post(url, {"grade": "4"}).status_code == 403
    assert Judgment.objects.get(pk=world["own_judgment"].pk).grade == 2


def test_login_page_renders_and_logs_in(client, judge_user):
    response = client.get(reverse("login"))
    assert response.status_code == 200 and b'name="username"' in response.content
    response = client.post(reverse("login"), {"username": "judy", "password": "pw"})
    assert response.status_code == 302
    assert response["Location"] == reverse("judging:home")


def test_login_form_is_a_real_post_redirect_get(client):
    """The form opts out of htmx boosting, so the browser follows the 302 itself."""
    response = client.get(reverse("login") + "?next=/collections/")
    body = response.content.decode()
    assert 'hx-boost="false"' in body.split('class="stacked-form"')[1].split(">")[0]
    assert 'name="next" value="/collections/"' in body


def test_login_redirects_to_a_same_site_next(client, judge_user):
    target = reverse("judging:home") + "?tab=mine"
    response = client.post(reverse("login"), {"username": "judy", "password": "pw", "next": target})
    assert response.status_code == 302
    assert response["Location"] == target


@pytest.mark.parametrize(
    "next_url", ["https://evil.example/", "//evil.example/x", "javascript:alert(1)"]
)
def test_login_ignores_an_off_site_next(client, judge_user, next_url):
    response = client.post(
        reverse("login"), {"username": "judy", "password": "pw", "next": next_url}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("judging:home")


def test_failed_login_stays_on_the_form(client, judge_user):
    response = client.post(reverse("login"), {"username": "judy", "password": "wrong"})
    assert response.status_code == 200
    assert b"form-errors" in response.content


def test_admin_lists_models_and_keeps_judgments_read_only(client, world):
    admin_user = factories.user("root", is_staff=True, is_superuser=True)
    client.force_login(admin_user)
    for name in [
        "collection",
        "membership",
        "query",
        "document",
        "judge",
        "poolentry",
        "judgment",
        "judgmentevent",
        "livegrade",
    ]:
        response = client.get(reverse(f"admin:judging_{name}_changelist"))
        assert response.status_code == 200, name
    response = client.get(reverse("admin:judging_judgment_changelist"))
    assert b"Read-only" in response.content
    assert client.get(reverse("admin:judging_judgment_add")).status_code == 403
    judgment = world["own_judgment"]
    url = reverse("admin:judging_judgment_change", args=[judgment.pk])
    assert client.get(url).status_code == 200
    client.post(url, {"grade": "0", "status": "graded"})
    judgment.refresh_from_db()
    assert judgment.grade == 2
    delete = reverse("admin:judging_judgment_delete", args=[judgment.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert Judgment.objects.filter(pk=judgment.pk).exists()
    coll = world["coll"]
    assert client.get(reverse("admin:judging_collection_change", args=[coll.pk])).status_code == 200
