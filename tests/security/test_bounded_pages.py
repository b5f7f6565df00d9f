"""Bounded pages: one maximum page size, strict numbers in query strings, bounded memory.

Every paginated list endpoint answers a ``limit`` or ``offset`` that is not a whole number
in range with a 400 naming the parameter (never a 500 such as "bigint out of range"), and
no page holds more than the maximum page size. A page of the maximum size is read within a
fixed memory budget (tracemalloc), however many judgments the collection holds.
"""

from __future__ import annotations

import tracemalloc
from urllib.parse import quote

import pytest
from django.core.exceptions import ValidationError
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config import params
from config.pagination import DEFAULT_PAGE_SIZE, max_page_size
from judging.models import Document, Judgment, Query
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db
C = "/api/v1/collections/demo/"

#: Paginated GET list endpoints of the arena (the coordinator may read each).
LISTS = (
    "/api/v1/collections/",
    "/api/v1/judges/",
    C + "queries/",
    C + "documents/",
    C + "pool/",
    C + "judgments/",
    C + "events/",
    C + "runs/",
    C + "llm-jobs/",
    C + "pooling/plan/",
    C + "disagreements/",
    C + "adjudications/",
)
#: Values no page parameter accepts, with the reason.
BAD = {
    "huge": "99999999999999999999",
    "bigint+1": str(2**63),
    "negative": "-1",
    "float": "1.5",
    "exponent": "1e3",
    "word": "abc",
    "hex": "0x10",
    "plus": "+5",
    "arabic digits": "\u0663\u0663",
    "inner space": "1 0",
}


@pytest.mark.parametrize("url", LISTS)
@pytest.mark.parametrize("name", ["limit", "offset"])
@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_page_numbers_are_400_naming_the_parameter(arena, url, name, case):
    response = arena.client("cora").get(url, {name: BAD[case]})
    assert response.status_code == 400, (url, name, case, response.content[:300])
    assert any(item.get("field") == name for item in errors_of(response)), response.json()


@pytest.mark.parametrize("url", LISTS)
def test_limit_zero_and_above_the_maximum_are_400(arena, url):
    for value in ("0", str(max_page_size() + 1)):
        response = arena.client("cora").get(url, {"limit": value})
        assert response.status_code == 400, (url, value)
        assert errors_of(response)[0]["field"] == "limit"


@pytest.mark.parametrize("url", LISTS)
def test_nul_in_a_page_parameter_is_400(arena, url):
    response = arena.client("cora").get(url + "?limit=1%00")
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "limit"


@pytest.mark.parametrize("url", LISTS)
def test_the_maximum_page_and_a_far_offset_are_answered(arena, url):
    most = max_page_size()
    response = arena.client("cora").get(url, {"limit": most, "offset": 0})
    assert response.status_code == 200, response.content[:300]
    assert len(response.json()["results"]) <= most
    far = arena.client("cora").get(url, {"limit": most, "offset": params.MAX_BIGINT - most})
    assert far.status_code == 200, far.content[:300]
    assert far.json()["results"] == []


def test_the_issue_s_requests_are_400_for_every_role(arena):
    """``?limit=99999999999999999999`` on judges, queries, runs was a 500 for any role."""
    for url in ("/api/v1/judges/", C + "queries/", C + "runs/", C + "judgments/"):
        for role in ("judy", "tess", "cora"):
            response = arena.client(role).get(url + "?limit=99999999999999999999")
            assert response.status_code in (400, 403, 404), (url, role)
            if response.status_code == 400:
                assert errors_of(response)[0]["field"] == "limit"
    response = arena.client("cora").get(C + "judgments/", {"limit": 200_000})
    assert response.status_code == 400
    assert str(max_page_size()) in errors_of(response)[0]["message"]


def test_id_filters_out_of_range_are_400(arena):
    for value in ("99999999999999999999", "0", "-3", "x"):
        response = arena.client("cora").get(C + "judgments/", {"judge": value})
        assert response.status_code == 400, value
        assert errors_of(response)[0]["field"] == "judge"
        response = arena.client("cora").get(C + "pool/", {"unjudged_by": value})
        assert response.status_code == 400, value
        assert errors_of(response)[0]["field"] == "unjudged_by"
        response = arena.client("cora").get(C + "qrels/", {"judge": value})
        assert response.status_code == 400, value
        assert errors_of(response)[0]["field"] == "judge"


def test_pages_walk_the_whole_list(arena):
    """Default and explicit pages still cover every item exactly once."""
    client = arena.client("cora")
    first = client.get(C + "queries/").json()
    assert len(first["results"]) == min(first["count"], DEFAULT_PAGE_SIZE)
    seen = [q["external_id"] for q in client.get(C + "queries/", {"limit": 1}).json()["results"]]
    seen += [
        q["external_id"]
        for q in client.get(C + "queries/", {"limit": 1, "offset": 1}).json()["results"]
    ]
    assert sorted(seen) == ["q1", "q2"]


@override_settings(GRADED_API_MAX_PAGE_SIZE=1)
def test_the_maximum_page_size_is_a_setting(arena):
    client = arena.client("cora")
    assert len(client.get(C + "queries/").json()["results"]) == 1
    assert client.get(C + "queries/", {"limit": 2}).status_code == 400


NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.text(alphabet="0123456789-+. eE\u0663x", max_size=25),
    st.text(max_size=12),
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(limit=NUMBERS, offset=NUMBERS)
def test_fuzzed_page_parameters_are_200_or_400(arena, limit, offset):
    url = C + f"judgments/?limit={quote(limit)}&offset={quote(offset)}"
    response = arena.client("cora").get(url)
    assert response.status_code in (200, 400), (limit, offset, response.content[:300])
    if response.status_code == 200:
        assert len(response.json()["results"]) <= max_page_size()
    else:
        assert errors_of(response)[0]["field"] in ("limit", "offset")


@settings(max_examples=200, deadline=None, database=None)
@given(value=st.text(max_size=30), low=st.integers(-5, 5))
def test_parse_whole_accepts_exactly_ascii_numbers_in_range(value, low):
    high = low + 1000
    try:
        number = params.parse_whole(value, "n", minimum=low, maximum=high)
    except ValidationError as exc:  # any other exception fails the test
        assert list(exc.message_dict) == ["n"]
    else:
        assert low <= number <= high
        assert value.strip().lstrip("-").isascii()


# --- memory -----------------------------------------------------------------------------------


def _fill(arena, judgments: int, tag: str) -> None:
    """Give the arena's collection ``judgments`` more judgments (one new judge, 100 per query)."""
    coll = arena.coll
    judge = factories.human_judge(factories.user(f"filler-{tag}"))
    docs = Document.objects.bulk_create(
        [Document(collection=coll, external_id=f"{tag}-d{i}", title="t") for i in range(100)]
    )
    queries = Query.objects.bulk_create(
        [Query(collection=coll, external_id=f"{tag}-q{i}") for i in range(judgments // 100)]
    )
    Judgment.objects.bulk_create(
        Judgment(judge=judge, query=q, document=d, collection=coll, grade=i % 4, note="n" * 200)
        for i, (q, d) in enumerate((q, d) for q in queries for d in docs)
    )


def _peak_of_max_page(arena) -> tuple[int, int]:
    """Return (peak bytes allocated, items) while reading one maximum-size judgments page."""
    client = client_for(arena.users["cora"])
    client.get(C + "judgments/", {"limit": 1})  # warm caches and imports
    tracemalloc.start()
    try:
        response = client.get(C + "judgments/", {"limit": max_page_size()})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 200
    return peak, len(response.json()["results"])


def test_memory_of_a_maximum_page_is_bounded(arena):
    """A maximum-size page costs the same whether the collection holds 1,000 or 3,000 labels.

    docs/security.md and docs/benchmarks.md report the figure measured here.
    """
    _fill(arena, max_page_size(), "a")
    small_peak, items = _peak_of_max_page(arena)
    assert items == max_page_size()
    _fill(arena, 2 * max_page_size(), "b")
    large_peak, items = _peak_of_max_page(arena)
    assert items == max_page_size()
    # The page, not the collection, sets the cost: within 25% while the labels tripled.
    assert large_peak < 1.25 * small_peak, (small_peak, large_peak)
    assert large_peak < 64 * 1024 * 1024, large_peak
    print(f"peak of a {items}-item page: {small_peak / 2**20:.2f} / {large_peak / 2**20:.2f} MiB")


#: Whole-number query parameters of the API, with an endpoint that reads each.
NUMBER_PARAMS = [
    *[(url, name) for url in LISTS for name in ("limit", "offset")],
    (C + "judgments/", "judge"),
    (C + "events/", "judge"),
    (C + "pool/", "unjudged_by"),
    (C + "qrels/", "judge"),
    (C + "qrels/", "since_version"),
    (C + "qrels/", "min_judges"),
    (C + "disagreements/", "min_spread"),
    (C + "pooling/stability/", "step"),
]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(where=st.sampled_from(NUMBER_PARAMS), value=NUMBERS)
def test_fuzzed_number_parameters_of_every_endpoint_are_never_a_500(arena, where, value):
    url, name = where
    response = arena.client("cora").get(f"{url}?{name}={quote(value)}")
    assert response.status_code in (200, 400), (url, name, value, response.content[:300])
    if response.status_code == 400:
        assert errors_of(response)[0].get("field") == name, response.json()


@pytest.mark.parametrize("value", ["99999999999999999999", "0", "-1", "\u0663", "1.0", "x"])
@pytest.mark.parametrize("route", ["compare/", "compare/pairs/"])
def test_run_ids_of_a_comparison_are_whole_numbers_in_range(arena, value, route):
    extra = {"baseline": arena.run.pk} if route == "compare/" else {}
    response = arena.client("cora").get(C + route, {**extra, "runs": f"{arena.run.pk},{value}"})
    assert response.status_code == 400
    [error] = errors_of(response)
    assert error["field"] == "runs" and "Not a run id" in error["message"]
