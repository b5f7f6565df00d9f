"""Issue 34, REST completeness: unknown parameters, filters, names, members, teams, settings.

The unknown-parameter fuzz walks every GET route of the URL conf (through
:func:`tests.security.test_route_matrix.api_routes`, so a new route is covered without
editing this file).
"""

from __future__ import annotations

import random
import re
import string

import pytest

from config import query_params
from judging import services
from judging.models import JudgmentEvent, Membership
from metrics.models import Run, Team
from tests import factories
from tests.api_client import client_for, errors_of
from tests.security.conftest import Arena, Role
from tests.security.test_route_matrix import MATRIX, api_routes, url_for

pytestmark = pytest.mark.django_db

GET_ROUTES = sorted({route for method, route in api_routes() if method == "GET"})
#: Who can read each GET route (a coordinator can read every one).
READER = "cora"


def _unknown_name(rng: random.Random) -> str:
    return "zz_" + "".join(rng.choice(string.ascii_lowercase) for _ in range(8))


def _declared(route: str) -> frozenset[str]:
    """Return the query parameters the schema declares for GET on ``route``."""
    url = "/api/v1/" + route
    from django.urls import resolve

    match = resolve(re.sub(r"<int:\w+>", "1", url.replace("<slug:slug>", "x").split("?")[0]))
    view = getattr(match.func, "cls", None) or getattr(match.func, "view_class", None)
    declared = getattr(view, "query_parameters", None)
    if declared is not None:
        return frozenset(declared)
    shape = query_params._shape(match.route)
    return query_params.schema_parameters().get((shape, "GET"), frozenset())


@pytest.mark.parametrize("route", GET_ROUTES)
def test_an_unknown_query_parameter_is_a_400_listing_the_known_ones(arena: Arena, route):
    rng = random.Random(route)
    name = _unknown_name(rng)
    url = url_for(route, arena)
    url += ("&" if "?" in url else "?") + f"{name}=1"
    response = arena.client(READER).get(url)
    assert response.status_code == 400, (route, response.status_code, response.content[:300])
    (error,) = errors_of(response)
    assert error["field"] == name
    declared = _declared(route)
    assert set(error["known"]) == declared
    assert name in error["message"]
    for known in declared:
        assert known in error["message"]


@pytest.mark.parametrize("route", GET_ROUTES)
def test_every_declared_query_parameter_is_accepted(arena: Arena, route):
    """Each declared parameter passes the check (its value may still be refused by the view)."""
    declared = _declared(route)
    base = url_for(route, arena)
    for name in sorted(declared):
        url = base + ("&" if "?" in base else "?") + f"{name}=1"
        response = arena.client(READER).get(url)
        if response.status_code == 400 and response["Content-Type"].startswith("application"):
            for item in errors_of(response):
                assert "known" not in item, (route, name, item)
                assert "Unknown query parameter" not in item["message"], (route, name, item)


def test_the_fuzz_covers_every_get_route_of_the_matrix():
    assert {route for method, route in MATRIX if method == "GET"} == set(GET_ROUTES)


def test_anonymous_callers_get_the_same_400_for_an_unknown_parameter(arena: Arena):
    response = arena.client("anonymous").get("/api/v1/collections/?colour=red")
    (error,) = errors_of(response)
    assert response.status_code == 400 and error["known"] == ["limit", "offset"]


def test_writes_check_their_own_parameters(arena: Arena):
    url = f"/api/v1/collections/{arena.coll.slug}/queries/"
    cora = arena.client("cora")
    response = cora.post(url + "?dryrun=1", [{"qid": "q7", "text": "t"}], format="json")
    (error,) = errors_of(response)
    assert response.status_code == 400 and error["known"] == ["dry_run"]
    assert not arena.coll.queries.filter(external_id="q7").exists()
    ok = cora.post(url + "?dry_run=1", [{"qid": "q7", "text": "t"}], format="json")
    assert ok.status_code == 200 and not arena.coll.queries.filter(external_id="q7").exists()


def test_many_unknown_parameters_are_listed_each_and_capped(arena: Arena):
    names = [f"p{i}" for i in range(5)]
    response = arena.client("cora").get("/api/v1/judges/?" + "&".join(f"{n}=1" for n in names))
    assert [e["field"] for e in errors_of(response)] == names


# --- /api/schema/ --------------------------------------------------------------------------


def test_unversioned_schema_redirects_to_the_versioned_one(client):
    response = client.get("/api/schema/")
    assert response.status_code in (301, 302)
    assert response["Location"] == "/api/v1/schema/"
    response = client.get("/api/schema/?format=json")
    assert response["Location"] == "/api/v1/schema/?format=json"
    assert client.get(response["Location"]).status_code == 200


# --- judgments: kind and provenance --------------------------------------------------------


def _llm_label(arena: Arena) -> None:
    q1 = arena.coll.queries.get(external_id="q1")
    services.judgment_record(
        judge=arena.llm,
        query=q1,
        document=arena.coll.documents.get(external_id="d2"),
        grade=2,
        channel=JudgmentEvent.Channel.LLM,
    )


def test_judgments_filter_by_kind(arena: Arena):
    _llm_label(arena)
    url = f"/api/v1/collections/{arena.coll.slug}/judgments/"
    cora = arena.client("cora")
    llm = cora.get(url + "?kind=llm").json()["results"]
    assert [(j["judge"]["kind"], j["qid"], j["docno"]) for j in llm] == [("llm", "q1", "d2")]
    human = cora.get(url + "?kind=human").json()["results"]
    assert sorted(j["judge"]["name"] for j in human) == ["jim", "judy"]
    assert len(cora.get(url).json()["results"]) == 3


def test_judgments_filter_by_provenance(arena: Arena):
    _llm_label(arena)
    url = f"/api/v1/collections/{arena.coll.slug}/judgments/"
    cora = arena.client("cora")
    cora.patch(f"{url}{arena.judgment.pk}/", {"grade": 4}, format="json")
    by = {
        channel: sorted(j["id"] for j in cora.get(f"{url}?provenance={channel}").json()["results"])
        for channel in ("browser", "api", "llm", "import")
    }
    assert by["api"] == [arena.judgment.pk]
    assert by["browser"] == [arena.other_judgment.pk]
    assert len(by["llm"]) == 1 and by["import"] == []
    rows = {j["id"]: j["provenance"] for j in cora.get(url).json()["results"]}
    assert rows[arena.judgment.pk] == "api" and rows[arena.other_judgment.pk] == "browser"
    both = cora.get(f"{url}?provenance=llm&kind=human").json()["results"]
    assert both == []


@pytest.mark.parametrize(
    ("param", "allowed"),
    [
        ("kind", ["human", "llm"]),
        ("provenance", [c for c, _ in JudgmentEvent.Channel.choices]),
        ("status", ["graded", "cannot_judge", "later"]),
    ],
)
def test_a_bad_filter_value_names_the_parameter_and_its_values(arena: Arena, param, allowed):
    url = f"/api/v1/collections/{arena.coll.slug}/judgments/?{param}=robot"
    response = arena.client("cora").get(url)
    assert response.status_code == 400
    (error,) = errors_of(response)
    assert error["field"] == param
    assert all(value in error["message"] for value in allowed), error
    assert "robot" in error["message"]


# --- qid and docno -------------------------------------------------------------------------


def test_outputs_say_qid_and_docno_with_the_old_name_kept(arena: Arena):
    cora = arena.client("cora")
    base = f"/api/v1/collections/{arena.coll.slug}"
    query = cora.get(f"{base}/queries/").json()["results"][0]
    assert query["qid"] == query["external_id"] == "q1"
    document = cora.get(f"{base}/documents/").json()["results"][0]
    assert document["docno"] == document["external_id"] == "d1"
    judgment = cora.get(f"{base}/judgments/{arena.judgment.pk}/").json()
    assert (judgment["qid"], judgment["docno"]) == ("q1", "d1")
    assert (judgment["query"], judgment["document"]) == ("q1", "d1")


def test_the_old_names_are_deprecated_in_the_schema(client):
    schema = client.get("/api/v1/schema/?format=json").json()["components"]["schemas"]
    for component, new in (("Query", "qid"), ("Document", "docno")):
        properties = schema[component]["properties"]
        assert properties["external_id"]["deprecated"] is True
        assert new in properties["external_id"]["description"]
        assert not properties[new].get("deprecated")


def test_inputs_accept_both_names(arena: Arena):
    cora = arena.client("cora")
    base = f"/api/v1/collections/{arena.coll.slug}"
    made = cora.post(f"{base}/queries/", [{"external_id": "q5", "text": "old name"}], format="json")
    assert made.status_code == 201, made.content
    assert arena.coll.queries.get(external_id="q5").text == "old name"
    made = cora.post(f"{base}/documents/", [{"external_id": "d5", "title": "t"}], format="json")
    assert made.status_code == 201, made.content
    assert arena.coll.documents.filter(external_id="d5").exists()
    one = cora.post(f"{base}/judgments/", {"qid": "q2", "docno": "d3", "grade": 2}, format="json")
    assert one.status_code == 201, one.content
    assert (one.json()["qid"], one.json()["docno"]) == ("q2", "d3")
    batch = cora.post(
        f"{base}/judgments/",
        {"judgments": [{"qid": "q1", "docno": "d2", "grade": 1}]},
        format="json",
    )
    assert batch.status_code == 201, batch.content


def test_two_names_for_different_ids_are_refused(arena: Arena):
    cora = arena.client("cora")
    base = f"/api/v1/collections/{arena.coll.slug}"
    response = cora.post(
        f"{base}/judgments/", {"query": "q1", "qid": "q2", "document": "d1", "grade": 1}
    )
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "query"
    response = cora.post(
        f"{base}/judgments/",
        {"judgments": [{"query": "q1", "document": "d1", "docno": "d2", "grade": 1}]},
        format="json",
    )
    assert [e.get("line") for e in errors_of(response)] == [1]
    response = cora.post(
        f"{base}/queries/", [{"qid": "q6", "external_id": "q7", "text": "t"}], format="json"
    )
    (error,) = errors_of(response)
    assert response.status_code == 400 and 1 in (error.get("line"), error.get("item"))
    assert "external_id and qid" in error["message"]
    assert not arena.coll.queries.filter(external_id__in=["q6", "q7"]).exists()


# --- label history -------------------------------------------------------------------------


def test_label_history_lists_every_event_paged(arena: Arena):
    url = f"/api/v1/collections/{arena.coll.slug}/judgments/{arena.judgment.pk}/"
    judy = arena.client("judy")
    for grade in (0, 1, 2):
        judy.patch(url, {"grade": grade}, format="json")
    page = judy.get(url + "history/?limit=2").json()
    assert page["count"] == 4 and len(page["results"]) == 2
    events = page["results"] + judy.get(url + "history/?limit=2&offset=2").json()["results"]
    assert [e["after"]["grade"] for e in events] == [3, 0, 1, 2]
    assert [e["channel"] for e in events] == ["browser", "api", "api", "api"]
    assert {e["actor"] for e in events[1:]} == {"judy"}
    assert all(e["at"] and e["judge"]["name"] == "judy" for e in events)
    assert arena.client("jim").get(url + "history/").status_code == 404


# --- memberships: four roles of collection A, and collection B ------------------------------


@pytest.fixture
def tenants(arena: Arena) -> dict[str, object]:
    """Collection A (the arena's) and B (``other``), each with an adjudicator."""
    other = arena.coll.__class__.objects.get(slug="other")
    ada = factories.user("ada")
    factories.member(arena.coll, ada, Role.ADJUDICATOR)
    bea = factories.user("bea")
    factories.member(other, bea, Role.JUDGE)
    return {"A": arena.coll, "B": other, "ada": ada, "bea": bea}


#: One caller of each role in collection A.
A_ROLES = {"coordinator": "cora", "judge": "judy", "team": "tess", "adjudicator": "ada"}


def _caller(arena: Arena, tenants, role: str):
    name = A_ROLES[role]
    return client_for(tenants["ada"] if name == "ada" else arena.users[name])


@pytest.mark.parametrize("role", sorted(A_ROLES))
def test_memberships_of_a_are_for_its_coordinators(arena: Arena, tenants, role):
    client = _caller(arena, tenants, role)
    url = f"/api/v1/collections/{tenants['A'].slug}/memberships/"
    listed = client.get(url)
    made = client.post(url, {"user": "nina", "role": "judge"}, format="json")
    judy = Membership.objects.get(collection=tenants["A"], user=arena.users["judy"])
    patched = client.patch(f"{url}{judy.pk}/", {"role": "adjudicator"}, format="json")
    deleted = client.delete(f"{url}{judy.pk}/")
    if role == "coordinator":
        users = {m["user"] for m in listed.json()["results"]}
        assert users == {"cora", "judy", "jim", "tess", "toby", "ada"}
        assert made.status_code == 201 and made.json()["role"] == "judge"
        assert patched.status_code == 200 and patched.json()["role"] == "adjudicator"
        assert deleted.status_code == 204
        assert not Membership.objects.filter(pk=judy.pk).exists()
    else:
        assert {listed.status_code, made.status_code, patched.status_code} == {403}
        assert deleted.status_code == 403
        assert Membership.objects.get(pk=judy.pk).role == "judge"
        assert not Membership.objects.filter(user=arena.users["nina"]).exists()


@pytest.mark.parametrize("role", sorted(A_ROLES))
def test_memberships_of_b_are_out_of_reach_from_a(arena: Arena, tenants, role):
    client = _caller(arena, tenants, role)
    bea = Membership.objects.get(user=tenants["bea"])
    b_url = f"/api/v1/collections/{tenants['B'].slug}/memberships/"
    assert client.get(b_url).status_code == 404
    assert client.post(b_url, {"user": "nina", "role": "judge"}, format="json").status_code == 404
    assert client.patch(f"{b_url}{bea.pk}/", {"role": "coordinator"}).status_code == 404
    assert client.delete(f"{b_url}{bea.pk}/").status_code == 404
    # B's membership id through A's URL: as if absent.
    a_url = f"/api/v1/collections/{tenants['A'].slug}/memberships/{bea.pk}/"
    assert client.get(a_url).status_code in (403, 404)
    assert client.delete(a_url).status_code in (403, 404)
    assert Membership.objects.get(pk=bea.pk).role == "judge"
    listed = client.get(f"/api/v1/collections/{tenants['A'].slug}/memberships/")
    assert "bea" not in listed.content.decode()


def test_membership_rules(arena: Arena, tenants):
    cora = arena.client("cora")
    url = f"/api/v1/collections/{arena.coll.slug}/memberships/"
    mine = Membership.objects.get(collection=arena.coll, user=arena.users["cora"])
    assert errors_of(cora.delete(f"{url}{mine.pk}/"))[0]["field"] == "role"
    assert errors_of(cora.patch(f"{url}{mine.pk}/", {"role": "judge"}))[0]["field"] == "role"
    again = cora.post(url, {"user": "judy", "role": "judge"}, format="json")
    assert again.status_code == 200
    team = cora.post(url, {"user": "nina", "role": "team"}, format="json")
    assert team.status_code == 400 and errors_of(team)[0]["field"] == "role"
    unknown = cora.post(url, {"user": "nobody", "role": "judge"}, format="json")
    assert errors_of(unknown)[0]["field"] == "user"
    quota = cora.post(url, {"user": "nina", "role": "judge", "quota": 7}, format="json")
    assert quota.status_code == 201 and quota.json()["quota"] == 7
    judy = Membership.objects.get(collection=arena.coll, user=arena.users["judy"])
    assert cora.patch(f"{url}{judy.pk}/", {"quota": 3}, format="json").json()["quota"] == 3
    tess = Membership.objects.get(collection=arena.coll, user=arena.users["tess"])
    assert cora.delete(f"{url}{tess.pk}/").status_code == 400
    only_judges = cora.get(url + "?role=judge").json()["results"]
    assert sorted(m["user"] for m in only_judges) == ["jim", "judy", "nina"]
    bad = cora.get(url + "?role=boss")
    assert bad.status_code == 400 and "adjudicator" in errors_of(bad)[0]["message"]


# --- teams ---------------------------------------------------------------------------------


def test_coordinators_rename_and_restaff_teams(arena: Arena):
    cora = arena.client("cora")
    team = Team.objects.get(collection=arena.coll, name="t1")
    url = f"/api/v1/collections/{arena.coll.slug}/teams/{team.pk}/"
    response = cora.patch(url, {"name": "first", "members": ["nina"]}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["name"] == "first" and response.json()["members"] == ["nina"]
    roles = set(
        Membership.objects.filter(collection=arena.coll, role=Role.TEAM).values_list(
            "user__username", flat=True
        )
    )
    assert roles == {"nina", "toby"}  # tess left her only team, so lost the role
    taken = cora.patch(url, {"name": "t2"}, format="json")
    assert errors_of(taken)[0]["field"] == "name"
    unknown = cora.patch(url, {"members": ["ghost"]}, format="json")
    assert errors_of(unknown)[0]["field"] == "members"
    assert arena.client("tess").get(url).status_code == 404  # no longer a member at all


def test_deleting_a_team_deletes_its_runs(arena: Arena):
    cora = arena.client("cora")
    team = arena.run.team
    url = f"/api/v1/collections/{arena.coll.slug}/teams/{team.pk}/"
    assert arena.client("toby").get(url).status_code == 404
    assert cora.delete(url).status_code == 204
    assert not Run.objects.filter(pk=arena.run.pk).exists()
    assert not Membership.objects.filter(user=arena.users["tess"], role=Role.TEAM).exists()
    board = cora.get(f"/api/v1/collections/{arena.coll.slug}/leaderboard/")
    assert board.status_code == 200
    assert "bm25" not in board.content.decode()


# --- leaderboard settings ------------------------------------------------------------------


def test_settings_read_and_change(arena: Arena):
    cora = arena.client("cora")
    url = f"/api/v1/collections/{arena.coll.slug}/settings/"
    before = cora.get(url).json()
    assert set(before) == {
        "measures",
        "coverage_threshold",
        "leaderboard_published",
        "judgments_published",
        "search_by_teams",
        "pool_depth",
    }
    changed = cora.patch(
        url,
        {"measures": ["P.5", "ndcg_cut.10"], "leaderboard_published": True, "pool_depth": 2},
        format="json",
    )
    assert changed.status_code == 200, changed.content
    arena.coll.refresh_from_db()
    assert arena.coll.measures == ["P.5", "ndcg_cut.10"]
    assert arena.coll.leaderboard_published and arena.coll.pool_depth == 2
    assert changed.json()["measures"] == ["P.5", "ndcg_cut.10"]


def test_a_bad_measure_changes_nothing(arena: Arena):
    cora = arena.client("cora")
    url = f"/api/v1/collections/{arena.coll.slug}/settings/"
    before = cora.get(url).json()
    response = cora.patch(
        url, {"measures": ["P.5", "nonsense_at_k"], "coverage_threshold": 0.2}, format="json"
    )
    assert response.status_code == 400
    assert "nonsense_at_k" in errors_of(response)[0]["message"]
    assert cora.get(url).json() == before
    out_of_range = cora.patch(url, {"coverage_threshold": 2}, format="json")
    assert errors_of(out_of_range)[0]["field"] == "coverage_threshold"


def test_time_filters_with_extreme_offsets_are_never_a_500(arena: Arena):
    """Schemathesis found ``0170-09-04T16:53-18:11``: PostgreSQL refuses such an offset."""
    cora = arena.client("cora")
    base = f"/api/v1/collections/{arena.coll.slug}"
    for url in (f"{base}/judgments/?updated_after=", f"{base}/events/?at_after="):
        assert cora.get(url + "0170-09-04T16:53:00-18:11").status_code == 200
        early = cora.get(url + "0001-01-01T00:10:00%2B18:00")
        assert early.status_code == 400
        assert errors_of(early)[0]["field"] == url.rsplit("?", 1)[1].rstrip("=")
