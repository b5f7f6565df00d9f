"""Every API route × every role, generated from the URL conf.

:data:`MATRIX` holds the expected status of each (method, route) for each role of
:data:`tests.security.conftest.ROLES`. A route or method that appears in the URL conf
without an entry fails :func:`test_every_api_route_has_an_entry` — add a row (and, for a
write, a request body in :data:`BODIES`) when you add an endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver

from judging import services
from judging.models import FileImport
from judging.quality import services as gold_services
from metrics import services as metrics_services
from tests import factories
from tests.api_client import client_for, errors_of
from tests.security.conftest import ROLES, Arena, Role

pytestmark = pytest.mark.django_db

PREFIX = "api/v1/"
S = "collections/<slug:slug>/"
# Roles: anonymous, nina (member of nothing), judy (owns the judgment), jim (another
# judge), tess (team t1, owns the run), toby (team t2), otto (coordinator elsewhere), cora.
#                                                anon nina judy  jim tess toby otto cora
MATRIX: dict[tuple[str, str], tuple[int, ...]] = {
    ("GET", "schema/"):                           (200, 200, 200, 200, 200, 200, 200, 200),
    ("GET", "docs/"):                             (200, 200, 200, 200, 200, 200, 200, 200),
    ("GET", "collections/"):                      (401, 200, 200, 200, 200, 200, 200, 200),
    ("GET", S):                                   (401, 404, 200, 200, 200, 200, 404, 200),
    ("GET", S + "queries/"):                      (401, 404, 200, 200, 403, 403, 404, 200),
    ("GET", S + "documents/"):                    (401, 404, 200, 200, 403, 403, 404, 200),
    ("GET", S + "pool/"):                         (401, 404, 200, 200, 403, 403, 404, 200),
    ("GET", S + "judgments/"):                    (401, 404, 200, 200, 403, 403, 404, 200),
    ("POST", S + "judgments/"):                   (401, 404, 201, 201, 403, 403, 404, 201),
    ("GET", S + "judgments/<int:pk>/"):           (401, 404, 200, 404, 403, 403, 404, 200),
    ("PATCH", S + "judgments/<int:pk>/"):         (401, 404, 200, 404, 403, 403, 404, 200),
    ("DELETE", S + "judgments/<int:pk>/"):        (401, 404, 204, 404, 403, 403, 404, 204),
    ("GET", S + "judgments/<int:pk>/history/"):   (401, 404, 200, 404, 403, 403, 404, 200),
    ("GET", S + "events/"):                       (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "qrels/"):                        (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "agreement/"):                    (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", "judges/"):                           (401, 200, 200, 200, 200, 200, 200, 200),
    ("POST", "judges/"):                          (401, 403, 403, 403, 403, 403, 201, 201),
    ("GET", "judges/<int:pk>/"):                  (401, 404, 200, 404, 404, 404, 404, 200),
    # Changing a judge: the arena's LLM judge (url_for), by coordinators of its collection.
    ("PATCH", "judges/<int:pk>/"):                (401, 404, 404, 404, 404, 404, 404, 200),
    ("GET", "llm-providers/"):                    (401, 200, 200, 200, 200, 200, 200, 200),
    ("GET", S + "runs/"):                         (401, 404, 403, 403, 200, 200, 404, 200),
    ("POST", S + "runs/"):                        (401, 404, 403, 403, 201, 201, 404, 400),
    ("GET", S + "runs/<int:pk>/"):                (401, 404, 403, 403, 200, 404, 404, 200),
    ("PATCH", S + "runs/<int:pk>/"):              (401, 404, 403, 403, 200, 404, 404, 200),
    ("DELETE", S + "runs/<int:pk>/"):             (401, 404, 403, 403, 204, 404, 404, 204),
    ("GET", S + "runs/<int:pk>/scores/"):         (401, 404, 403, 403, 200, 404, 404, 200),
    # RAG answer runs: the runs' rules (a coordinator must name the team: 400).
    ("GET", S + "answer-runs/"):                  (401, 404, 403, 403, 200, 200, 404, 200),
    ("POST", S + "answer-runs/"):                 (401, 404, 403, 403, 201, 201, 404, 400),
    ("GET", S + "answer-runs/<int:pk>/"):         (401, 404, 403, 403, 200, 404, 404, 200),
    ("GET", S + "leaderboard/"):                  (401, 404, 403, 403, 200, 200, 404, 200),
    # Per-query scores: refused to teams until the judgments are published (score
    # visibility, docs/security.md); the PUBLISHED table below has them after.
    ("GET", S + "difficulty/"):                   (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "teams/"):                        (401, 404, 403, 403, 200, 200, 404, 200),
    ("POST", S + "teams/"):                       (401, 404, 403, 403, 403, 403, 404, 201),
    # Collections and their content: coordinators (of any collection, to create one).
    ("POST", "collections/"):                     (401, 403, 403, 403, 403, 403, 201, 201),
    ("POST", S + "queries/"):                     (401, 404, 403, 403, 403, 403, 404, 201),
    ("POST", S + "documents/"):                   (401, 404, 403, 403, 403, 403, 404, 201),
    ("POST", S + "qrels/"):                       (401, 404, 403, 403, 403, 403, 404, 201),
    ("POST", S + "imports/"):                     (401, 404, 403, 403, 403, 403, 404, 202),
    ("GET", S + "imports/<int:pk>/"):             (401, 404, 404, 404, 403, 403, 404, 200),
    # Only an interrupted import can be retried: the arena's is queued, so 400 for cora.
    ("POST", S + "imports/<int:pk>/retry/"):      (401, 404, 403, 403, 403, 403, 404, 400),
    # LLM jobs, adjudication, aggregation, raw per-judge figures: coordinators only.
    ("GET", S + "llm-jobs/"):                     (401, 404, 403, 403, 403, 403, 404, 200),
    ("POST", S + "llm-jobs/"):                    (401, 404, 403, 403, 403, 403, 404, 202),
    ("GET", S + "llm-jobs/<int:pk>/"):            (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "llm-jobs/<int:pk>/failures/"):   (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "llm-jobs/<int:pk>/outputs/"):    (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "agreement/llm/"):                (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "disagreements/"):                (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "pair/"):                         (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "adjudications/"):                (401, 404, 403, 403, 403, 403, 404, 200),
    ("POST", S + "adjudications/"):               (401, 404, 403, 403, 403, 403, 404, 201),
    ("DELETE", S + "adjudications/<int:pk>/"):    (401, 404, 403, 403, 403, 403, 404, 204),
    ("GET", S + "aggregation/"):                  (401, 404, 403, 403, 403, 403, 404, 200),
    ("PATCH", S + "aggregation/"):                (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "pooling/"):                      (401, 404, 403, 403, 403, 403, 404, 200),
    ("PATCH", S + "pooling/"):                    (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "pooling/plan/"):                 (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "pooling/stability/"):            (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "agreement/judges/"):             (401, 404, 403, 403, 403, 403, 404, 200),
    ("DELETE", S + "judges/<int:judge_id>/judgments/"): (401, 404, 403, 403, 403, 403, 404, 200),
    ("PUT", S + "judges/<int:judge_id>/quota/"):  (401, 404, 403, 403, 403, 403, 404, 200),
    # Judge quality (issue 35): guidelines for judges; the rest for coordinators only. The
    # arena's judge is a human, so the LLM-only routes answer the coordinator 404.
    ("GET", S + "guidelines/"):                   (401, 404, 200, 200, 403, 403, 404, 200),
    ("PUT", S + "guidelines/"):                   (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "guidelines/versions/"):          (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "gold/"):                         (401, 404, 403, 403, 403, 403, 404, 200),
    ("POST", S + "gold/"):                        (401, 404, 403, 403, 403, 403, 404, 201),
    ("DELETE", S + "gold/<int:pk>/"):             (401, 404, 403, 403, 403, 403, 404, 204),
    ("GET", S + "gold/rate/"):                    (401, 404, 403, 403, 403, 403, 404, 200),
    ("PUT", S + "gold/rate/"):                    (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "gold/qualification/"):           (401, 404, 403, 403, 403, 403, 404, 200),
    ("PUT", S + "gold/qualification/"):           (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "gold/qualification/changes/"):   (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "gold/qualification/preview/"):   (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "judges/attention/"):             (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "judges/gold/"):                  (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "judges/canaries/"):              (401, 404, 403, 403, 403, 403, 404, 200),
    ("POST", S + "judges/<int:judge_id>/canary-checks/"): (401, 404, 403, 403, 403, 403, 404, 404),
    ("GET", S + "judges/<int:judge_id>/canary-checks/<int:pk>/"):
                                                  (401, 404, 403, 403, 403, 403, 404, 404),
    ("GET", S + "judges/<int:judge_id>/versions/"): (401, 404, 403, 403, 403, 403, 404, 404),
    ("GET", S + "judges/<int:judge_id>/versions/<int:pk>/"):
                                                  (401, 404, 403, 403, 403, 403, 404, 404),
    ("POST", S + "judges/<int:judge_id>/versions/"): (401, 404, 403, 403, 403, 403, 404, 404),
    # Run analysis: a team sees its own runs (others' once the leaderboard is published).
    ("GET", S + "runs/<int:pk>/queries/<str:qid>/"): (401, 404, 403, 403, 200, 404, 404, 200),
    ("GET", S + "compare/"):                      (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "compare/pairs/"):                (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "score-visibility/"):             (401, 404, 403, 403, 403, 403, 404, 200),
    ("PATCH", S + "score-visibility/"):           (401, 404, 403, 403, 403, 403, 404, 200),
    # Members, teams and leaderboard settings (issue 34): coordinators change them; a team
    # member reads only their own team.
    ("GET", S + "memberships/"):                  (401, 404, 403, 403, 403, 403, 404, 200),
    ("POST", S + "memberships/"):                 (401, 404, 403, 403, 403, 403, 404, 201),
    ("GET", S + "memberships/<int:pk>/"):         (401, 404, 403, 403, 403, 403, 404, 200),
    ("PATCH", S + "memberships/<int:pk>/"):       (401, 404, 403, 403, 403, 403, 404, 200),
    ("DELETE", S + "memberships/<int:pk>/"):      (401, 404, 403, 403, 403, 403, 404, 204),
    ("GET", S + "teams/<int:pk>/"):               (401, 404, 403, 403, 200, 404, 404, 200),
    ("PATCH", S + "teams/<int:pk>/"):             (401, 404, 403, 403, 403, 403, 404, 200),
    ("DELETE", S + "teams/<int:pk>/"):            (401, 404, 403, 403, 403, 403, 404, 204),
    ("GET", S + "settings/"):                     (401, 404, 403, 403, 403, 403, 404, 200),
    ("PATCH", S + "settings/"):                   (401, 404, 403, 403, 403, 403, 404, 200),
    # Live search (issue 42): coordinators only. The arena has no endpoint (a new
    # configuration is refused, naming it) and no configuration or snapshot (404).
    ("GET", S + "search-endpoints/"):             (401, 404, 403, 403, 403, 403, 404, 200),
    ("GET", S + "search-configurations/"):        (401, 404, 403, 403, 403, 403, 404, 200),
    ("POST", S + "search-configurations/"):       (401, 404, 403, 403, 403, 403, 404, 400),
    ("GET", S + "search-configurations/<int:pk>/"): (401, 404, 403, 403, 403, 403, 404, 404),
    ("PATCH", S + "search-configurations/<int:pk>/"):
                                                  (401, 404, 403, 403, 403, 403, 404, 404),
    ("POST", S + "search-configurations/<int:pk>/versions/"):
                                                  (401, 404, 403, 403, 403, 403, 404, 404),
    ("POST", S + "search-configurations/<int:pk>/tries/"):
                                                  (401, 404, 403, 403, 403, 403, 404, 404),
    ("GET", S + "search-snapshots/"):             (401, 404, 403, 403, 403, 403, 404, 200),
    ("POST", S + "search-snapshots/"):            (401, 404, 403, 403, 403, 403, 404, 404),
    ("GET", S + "search-snapshots/<int:pk>/"):    (401, 404, 403, 403, 403, 403, 404, 404),
    # Two snapshots compared: the arena has none, so a coordinator's bare GET names a and b.
    ("GET", S + "search-diffs/"):                 (401, 404, 403, 403, 403, 403, 404, 400),
    # Schedules and their checks (issue 42 item 5): coordinators only; no configuration.
    ("GET", S + "search-configurations/<int:pk>/schedule/"):
                                                  (401, 404, 403, 403, 403, 403, 404, 404),
    ("PUT", S + "search-configurations/<int:pk>/schedule/"):
                                                  (401, 404, 403, 403, 403, 403, 404, 404),
    ("DELETE", S + "search-configurations/<int:pk>/schedule/"):
                                                  (401, 404, 403, 403, 403, 403, 404, 404),
    ("GET", S + "search-checks/"):                (401, 404, 403, 403, 403, 403, 404, 200),
}  # fmt: skip


def _run_file() -> SimpleUploadedFile:
    return SimpleUploadedFile("r.txt", b"q1 Q0 d2 1 3.0 x\nq2 Q0 d3 1 1.0 x\n")


def _answer_file() -> SimpleUploadedFile:
    record = b'{"run_id": "x", "topic_id": "q1", "references": ["d2"], '
    return SimpleUploadedFile(
        "a.jsonl", record + b'"answer": [{"text": "A.", "citations": [0]}]}\n'
    )


def _answer_run(arena: Arena) -> int:
    """Return the id of an answer run of team t1 (tess's), made once."""
    from metrics.answers.models import AnswerRun

    run, _ = AnswerRun.objects.get_or_create(
        collection=arena.coll, tag="arena-answers", defaults={"team_id": arena.run.team_id}
    )
    return run.pk


def _qrels_file() -> SimpleUploadedFile:
    return SimpleUploadedFile("q.qrels", b"q2 0 d3 2\n")


#: Request bodies of the writes: (body, format) made fresh for every request.
BODIES: dict[tuple[str, str], Callable[[Arena], tuple[Any, str]]] = {
    ("POST", S + "judgments/"): lambda a: ({"query": "q2", "document": "d3", "grade": 1}, "json"),
    ("PATCH", S + "judgments/<int:pk>/"): lambda a: ({"grade": 0}, "json"),
    ("POST", "judges/"): lambda a: ({"name": "llm", "model": "m"}, "json"),
    ("PATCH", "judges/<int:pk>/"): lambda a: ({"prompt_version": "v2"}, "json"),
    ("POST", S + "runs/"): lambda a: ({"tag": "new-run", "file": _run_file()}, "multipart"),
    ("PATCH", S + "runs/<int:pk>/"): lambda a: ({"description": "changed"}, "json"),
    ("POST", S + "answer-runs/"): lambda a: ({"tag": "rag", "file": _answer_file()}, "multipart"),
    ("POST", S + "teams/"): lambda a: ({"name": "t3"}, "json"),
    ("POST", "collections/"): lambda a: ({"slug": "fresh", "name": "Fresh"}, "json"),
    ("POST", S + "queries/"): lambda a: ([{"qid": "q9", "text": "new need"}], "json"),
    ("POST", S + "documents/"): lambda a: ([{"docno": "d9", "title": "new"}], "json"),
    ("POST", S + "qrels/"): lambda a: ({"file": _qrels_file(), "format": "qrels"}, "multipart"),
    ("POST", S + "imports/"): lambda a: (
        {"topics": SimpleUploadedFile("t.tsv", b"q8\tnew need\n"), "topics_format": "tsv"},
        "multipart",
    ),
    ("POST", S + "imports/<int:pk>/retry/"): lambda a: (None, "json"),
    ("POST", S + "llm-jobs/"): lambda a: ({"judge": a.llm.pk}, "json"),
    ("POST", S + "adjudications/"): lambda a: (
        {"query": "q1", "document": "d1", "grade": 2, "reason": "the narrative says so"},
        "json",
    ),
    ("PATCH", S + "aggregation/"): lambda a: ({"judges_per_pair": 2}, "json"),
    ("PATCH", S + "pooling/"): lambda a: ({"strategy": "mtf"}, "json"),
    ("PATCH", S + "score-visibility/"): lambda a: ({"mode": "aggregate"}, "json"),
    ("PUT", S + "judges/<int:judge_id>/quota/"): lambda a: ({"quota": 5}, "json"),
    ("PUT", S + "guidelines/"): lambda a: ({"guidelines": "Clearer.", "note": "why"}, "json"),
    ("POST", S + "gold/"): lambda a: ({"qid": "q1", "docno": "d1", "grade": 2}, "json"),
    ("PUT", S + "gold/rate/"): lambda a: ({"gold_rate": 0.1}, "json"),
    ("PUT", S + "gold/qualification/"): lambda a: (
        {"qualification_pairs": 3, "qualification_share": 0.8, "confirm": True},
        "json",
    ),
    ("POST", S + "judges/<int:judge_id>/canary-checks/"): lambda a: (None, "json"),
    ("POST", S + "judges/<int:judge_id>/versions/"): lambda a: (None, "json"),
    ("POST", S + "memberships/"): lambda a: ({"user": "nina", "role": "judge"}, "json"),
    ("PATCH", S + "memberships/<int:pk>/"): lambda a: ({"quota": 5}, "json"),
    ("PATCH", S + "teams/<int:pk>/"): lambda a: ({"name": "t1 renamed"}, "json"),
    ("PATCH", S + "settings/"): lambda a: ({"coverage_threshold": 0.5}, "json"),
    ("POST", S + "search-configurations/"): lambda a: (
        {
            "name": "bm25",
            "team": a.run.team_id,
            "endpoint": "none-registered",
            "path": "/docs/_search",
            "template": {"query": {"match": {"body": "{{query_text}}"}}},
        },
        "json",
    ),
    ("POST", S + "search-configurations/<int:pk>/versions/"): lambda a: (
        {"endpoint": "none-registered", "path": "/x", "template": {}},
        "json",
    ),
    ("POST", S + "search-configurations/<int:pk>/tries/"): lambda a: ({}, "json"),
    ("POST", S + "search-snapshots/"): lambda a: ({"configuration": 424242}, "json"),
    ("PATCH", S + "search-configurations/<int:pk>/"): lambda a: ({"auto_judge": None}, "json"),
    ("PUT", S + "search-configurations/<int:pk>/schedule/"): lambda a: (
        {"frequency": "daily"},
        "json",
    ),
}
SECRETS = ("judy", "jim", "q1 need", "bm25.txt")


def api_routes() -> Iterator[tuple[str, str]]:
    """Yield (method, route) of every API endpoint in the URL conf (route after /api/v1/)."""

    def walk(patterns: list, prefix: str) -> Iterator[tuple[str, Any]]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern.callback

    for route, callback in walk(get_resolver().url_patterns, ""):
        if not route.startswith(PREFIX):
            continue
        view = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
        allowed = getattr(view, "http_method_names", ["get"])
        for method in ("get", "post", "put", "patch", "delete"):
            if method in allowed and hasattr(view, method):
                yield method.upper(), route[len(PREFIX) :]


def url_for(route: str, arena: Arena, method: str = "GET") -> str:
    """Fill a route's parameters with the arena's objects (for a request of ``method``).

    ``judges/<id>/`` is judy's human judge for reading and the LLM judge for a change.
    """
    pk = ""
    if "judgments/<int:pk>" in route:
        pk = str(arena.judgment.pk)
    elif "answer-runs/<int:pk>" in route:
        pk = str(_answer_run(arena))
    elif "runs/<int:pk>" in route:
        pk = str(arena.run.pk)
    elif "judges/<int:pk>" in route:
        pk = str(arena.llm.pk if method == "PATCH" else arena.judgment.judge_id)
    elif "adjudications/<int:pk>" in route:
        pk = str(arena.adjudication().pk)
    elif "llm-jobs/<int:pk>" in route:
        pk = str(arena.llm_job().pk)
    elif "gold/<int:pk>" in route:
        q1, d1 = (
            arena.coll.queries.get(external_id="q1"),
            arena.coll.documents.get(external_id="d1"),
        )
        pk = str(gold_services.gold_set(query=q1, document=d1, grade=1).pk)
    elif "memberships/<int:pk>" in route:
        pk = str(arena.coll.memberships.get(user=arena.users["judy"], role=Role.JUDGE).pk)
    elif "teams/<int:pk>" in route:
        pk = str(arena.run.team_id)
    elif "imports/<int:pk>" in route:
        pk = str(FileImport.objects.get_or_create(collection=arena.coll)[0].pk)
    elif "search-configurations/<int:pk>" in route or "search-snapshots/<int:pk>" in route:
        pk = "424242"  # the arena has none: 404 even for the coordinator
    elif "canary-checks/<int:pk>" in route or "versions/<int:pk>" in route:
        pk = "1"  # under the arena's human judge: 404 even for the coordinator
    path = route.replace("<slug:slug>", arena.coll.slug).replace("<int:pk>", pk)
    path = path.replace("<int:judge_id>", str(arena.judgment.judge_id))
    path = path.replace("<str:qid>", "q1")
    if route.endswith("pair/"):
        path += "?query=q1&document=d1"
    elif route.endswith("compare/"):
        path += f"?baseline={arena.run.pk}&runs={arena.second_run().pk}"
    elif route.endswith("compare/pairs/"):
        path += f"?runs={arena.run.pk},{arena.second_run().pk}"
    elif route.endswith("qualification/preview/"):
        path += "?qualification_pairs=3&qualification_share=0.8"
    assert "<" not in path, f"no value for a parameter of {route}: extend url_for"
    return "/" + PREFIX + path


def test_every_api_route_has_an_entry():
    routes = set(api_routes())
    missing = sorted(routes - MATRIX.keys())
    assert not missing, f"add these (method, route) to MATRIX (and BODIES for writes): {missing}"
    assert not sorted(MATRIX.keys() - routes), "MATRIX names routes that no longer exist"
    writes = {key for key in routes if key[0] in ("POST", "PUT", "PATCH")}
    assert writes <= BODIES.keys(), sorted(writes - BODIES.keys())


CASES = [
    pytest.param(method, route, role, expected, id=f"{method} {route} {role}")
    for (method, route), statuses in MATRIX.items()
    for role, expected in zip(ROLES, statuses, strict=True)
]


@pytest.mark.parametrize(("method", "route", "role", "expected"), CASES)
def test_route_matrix(arena, method, route, role, expected):
    body, fmt = BODIES.get((method, route), lambda a: (None, "json"))(arena)
    client = arena.client(role)
    response = getattr(client, method.lower())(url_for(route, arena, method), body, format=fmt)
    assert response.status_code == expected, response.content[:500]
    if expected >= 400:
        errors_of(response)
        text = response.content.decode()
        assert not any(secret in text for secret in SECRETS), text


#: The reads whose answer changes once the coordinator publishes the judgment list and
#: the leaderboard: team members then read the aggregated list (never raw labels) and
#: every team's runs; judges still see neither (judging is blind).
#:                                                anon nina judy  jim tess toby otto cora
PUBLISHED: dict[str, tuple[int, ...]] = {
    S + "qrels/":                                 (401, 404, 403, 403, 200, 200, 404, 200),
    S + "qrels/?labels=raw&format=jsonl":         (401, 404, 403, 403, 403, 403, 404, 200),
    S + "runs/<int:pk>/":                         (401, 404, 403, 403, 200, 200, 404, 200),
    S + "runs/<int:pk>/scores/":                  (401, 404, 403, 403, 200, 200, 404, 200),
    S + "runs/<int:pk>/queries/<str:qid>/":       (401, 404, 403, 403, 200, 200, 404, 200),
    S + "compare/":                               (401, 404, 403, 403, 200, 200, 404, 200),
    S + "compare/pairs/":                         (401, 404, 403, 403, 200, 200, 404, 200),
    S + "leaderboard/":                           (401, 404, 403, 403, 200, 200, 404, 200),
    S + "difficulty/":                            (401, 404, 403, 403, 200, 200, 404, 200),
}  # fmt: skip

PUBLISHED_CASES = [
    pytest.param(route, role, expected, id=f"published GET {route} {role}")
    for route, statuses in PUBLISHED.items()
    for role, expected in zip(ROLES, statuses, strict=True)
]


def test_published_rows_name_routes():
    routes = {route for method, route in MATRIX if method == "GET"}
    assert {route.partition("?")[0] for route in PUBLISHED} <= routes


@pytest.mark.parametrize(("route", "role", "expected"), PUBLISHED_CASES)
def test_route_matrix_published(arena, route, role, expected):
    arena.coll.judgments_published = True
    arena.coll.leaderboard_published = True
    arena.coll.save(update_fields=["judgments_published", "leaderboard_published"])
    path, _, params = route.partition("?")
    url = url_for(path, arena)
    url += ("&" if "?" in url else "?") + params if params else ""
    response = arena.client(role).get(url)
    assert response.status_code == expected, response.content[:500]
    if expected >= 400:
        errors_of(response)


#: The adjudicator role (issue 13): the disagreement queue, pairs (judge names hidden) and
#: adjudications, nothing else a coordinator has.
ADJUDICATOR: dict[tuple[str, str], int] = {
    ("GET", S + "disagreements/"): 200,
    ("GET", S + "pair/"): 200,
    ("GET", S + "adjudications/"): 200,
    ("POST", S + "adjudications/"): 201,
    ("DELETE", S + "adjudications/<int:pk>/"): 204,
    ("GET", S + "aggregation/"): 403,
    ("PATCH", S + "aggregation/"): 403,
    ("GET", S + "pooling/"): 403,
    ("PATCH", S + "pooling/"): 403,
    ("GET", S + "pooling/plan/"): 403,
    ("GET", S + "pooling/stability/"): 403,
    ("GET", S + "agreement/judges/"): 403,
    ("GET", S + "agreement/llm/"): 403,
    ("GET", S + "llm-jobs/"): 403,
    ("DELETE", S + "judges/<int:judge_id>/judgments/"): 403,
    ("PUT", S + "judges/<int:judge_id>/quota/"): 403,
    ("GET", S + "judgments/"): 403,
    ("GET", S + "qrels/"): 403,
    ("GET", S + "runs/"): 403,
}


@pytest.mark.parametrize(
    ("method", "route", "expected"),
    [pytest.param(m, r, e, id=f"adjudicator {m} {r}") for (m, r), e in ADJUDICATOR.items()],
)
def test_route_matrix_adjudicator(arena, method, route, expected):
    ada = factories.user("ada")
    factories.member(arena.coll, ada, Role.ADJUDICATOR)
    body, fmt = BODIES.get((method, route), lambda a: (None, "json"))(arena)
    client = client_for(ada)
    response = getattr(client, method.lower())(url_for(route, arena, method), body, format=fmt)
    assert response.status_code == expected, response.content[:500]
    text = response.content.decode()
    assert "judy" not in text and "jim" not in text, text


# --- unpublished grades (issue 17, item 4) --------------------------------------------------
#
# With the leaderboard published and the judgment list not, a team reads every run and every
# score, but no grade, gain, DCG or ideal ranking by any route. Every GET route of the API
# (from MATRIX, which must name every route) and every page is read as both teams; a page or
# an answer that names the marker document (judged for q1, retrieved by no run: only an
# ideal ranking or a judgment list can name it) or carries a grade-bearing field fails.

MARKER_DOC = "dGRADEMARKER"
#: Fields that carry grades or what is derived from them; null or empty is fine.
GRADE_FIELDS = {"grade", "grades", "gain", "contribution", "dcg", "ideal_dcg", "ideal", "label"}
#: Page paths (after /c/<slug>/), with their parameters filled in by :func:`page_url`.
PAGES = {
    "": "collection_detail",
    "agreement/": "collection_agreement",
    "agreement/llm/": "llm_agreement",
    "judge/": "judge_next",
    "judgments/": "judgment_list",
    "judgment-list/": "judgment_list_download",
    "disagreements/": "disagreement_list",
    "pairs/<int:query_id>/<int:document_id>/": "pair_adjudicate",
    "pairs/<int:query_id>/<int:document_id>/history/": "judgment_history",
    "leaderboard/": "leaderboard",
    "runs/<int:pk>/": "run_detail",
    "runs/<int:pk>/queries/<int:query_pk>/": "run_query",
    "runs/<int:pk>/file/": "run_file",
    "compare/": "compare",
    "difficulty/": "difficulty",
    "pool/": "pool",
    "stability/": "stability",
    "settings/": "collection_update",
    "llm-jobs/": "llmjob_create",
    "llm-jobs/<int:pk>/failures/": "llmfailure_list",  # coordinators only: answers received
    "llm-jobs/<int:pk>/outputs/": "llmoutput_list",  # coordinators only: grades and answers
    "guidelines/": "guidelines_versions",
    "judges/": "judge_list",
    "gold/": "gold_list",
    "canary-checks/<int:pk>/": "canary_check_detail",  # coordinators only
    "llm-judges/<int:pk>/versions/": "version_list",  # coordinators only
    "version-checks/<int:pk>/": "version_check_detail",  # coordinators only
    "search/": "search",  # coordinators only: configurations and snapshots
    "search/<int:pk>/": "search_configuration",  # coordinators only
    "search/snapshots/<int:pk>/": "search_snapshot",  # coordinators only
    "search/diff/": "search_diff",  # coordinators only
    "search/<int:pk>/schedule/": "search_schedule",  # coordinators only
    "search/alerts/": "search_alerts",  # coordinators only
}


def _grade_fields(value: Any, path: str = "") -> list[str]:
    """Return the JSON paths of grade-bearing fields with a value."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in GRADE_FIELDS and item not in (None, [], {}):
                found.append(f"{path}.{key}")
            found.extend(_grade_fields(item, f"{path}.{key}"))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(_grade_fields(item, f"{path}[{i}]"))
    return found


@pytest.fixture
def unpublished(arena) -> Arena:
    """Grade the marker document for q1; publish the leaderboard but not the judgment list."""
    q1 = arena.coll.queries.get(external_id="q1")
    marker = factories.document(arena.coll, MARKER_DOC)
    factories.pool_entry(arena.coll, q1, marker)
    services.judgment_record(judge=arena.judgment.judge, query=q1, document=marker, grade=4)
    metrics_services.runs_rescore_after_change(collection_id=arena.coll.pk, query_ids=[q1.pk])
    arena.coll.leaderboard_published = True
    arena.coll.judgments_published = False
    arena.coll.save(update_fields=["leaderboard_published", "judgments_published"])
    return arena


def page_routes() -> Iterator[str]:
    """Yield the collection pages of the URL conf (the part after ``c/<slug:slug>/``)."""

    def walk(patterns: list, prefix: str) -> Iterator[str]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern)

    for route in walk(get_resolver().url_patterns, ""):
        if route.startswith("c/<slug:slug>/"):
            yield route[len("c/<slug:slug>/") :]


def page_url(route: str, arena: Arena) -> str:
    """Fill a page route's parameters with the arena's objects."""
    q1 = arena.coll.queries.get(external_id="q1")
    path = (
        route.replace("<int:pk>", str(arena.run.pk))
        .replace("<int:query_pk>", str(q1.pk))
        .replace("<int:query_id>", str(q1.pk))
        .replace("<int:document_id>", str(arena.judgment.document_id))
    )
    assert "<" not in path, f"no value for a parameter of {route}: extend page_url"
    return f"/c/{arena.coll.slug}/{path}"


def test_every_page_that_reads_is_checked_for_grades():
    """A new GET page must be added to PAGES (writes-only pages are listed here)."""
    writes_only = {
        "judge/undo/",
        "judge/<int:entry_id>/",
        "judgments/<int:pk>/edit/",
        "pairs/add/",
        "documents/import/",
        "llm-jobs/<int:pk>/",
        "llm-judges/<int:pk>/edit/",
        "llm-judges/new/",
        "llm-judges/<int:pk>/try/",  # a coordinator's try: prompts and the model's answers
        "judges/<int:judge_id>/remove-labels/",
        "import/",
        "imports/<int:pk>/",  # a coordinator's own upload: counts and refused lines only
        "imports/<int:pk>/retry/",
        "runs/new/",
        "gold/<int:pk>/delete/",
        "llm-judges/<int:pk>/canaries/",
    }
    routes = set(page_routes())
    assert routes - writes_only == set(PAGES), sorted(routes ^ (set(PAGES) | writes_only))


def _read_as(arena: Arena, role: str, url: str):
    from django.test import Client

    client = Client()
    client.force_login(arena.users[role])
    return client.get(url)


@pytest.mark.parametrize("role", ["tess", "toby"])
@pytest.mark.parametrize("route", sorted({r for m, r in MATRIX if m == "GET"}))
def test_unpublished_grades_reach_no_team_over_the_api(unpublished, route, role):
    response = unpublished.client(role).get(url_for(route, unpublished))
    assert response.status_code < 500
    text = response.content.decode()
    assert MARKER_DOC not in text, f"{route} names a document only the grades can name"
    if response.status_code == 200 and response["Content-Type"].startswith("application/json"):
        assert _grade_fields(response.json()) == [], route


@pytest.mark.parametrize("role", ["tess", "toby"])
@pytest.mark.parametrize("route", sorted(PAGES))
@pytest.mark.parametrize("tab", ["", "?tab=ideal", "?tab=queries", "?tab=chart"])
def test_unpublished_grades_reach_no_team_on_a_page(unpublished, route, role, tab):
    """Every tab of every page too: a tab asked for by hand shows nothing more."""
    response = _read_as(unpublished, role, page_url(route, unpublished) + tab)
    assert response.status_code < 500
    body = b"".join(response.streaming_content) if response.streaming else response.content
    text = body.decode(errors="replace")
    assert MARKER_DOC not in text, f"{route}{tab} names a document only the grades can name"
    for attribute in ("data-grade>", "data-contribution>", 'id="ideal-ranking"'):
        assert attribute not in text, f"{route}{tab} shows {attribute}"


def test_the_same_routes_show_grades_once_published(unpublished):
    """The checks above can fail: published, the team's per-query view names the marker."""
    unpublished.coll.judgments_published = True
    unpublished.coll.save(update_fields=["judgments_published"])
    api = unpublished.client("tess").get(
        url_for(S + "runs/<int:pk>/queries/<str:qid>/", unpublished)
    )
    assert MARKER_DOC in api.content.decode() and _grade_fields(api.json())
    page = _read_as(
        unpublished, "tess", page_url("runs/<int:pk>/queries/<int:query_pk>/", unpublished)
    )
    assert "data-grade>" in page.content.decode()
    # The marker is graded but not retrieved: it is on the ideal ranking's tab.
    ideal = page_url("runs/<int:pk>/queries/<int:query_pk>/", unpublished) + "?tab=ideal"
    page = _read_as(unpublished, "tess", ideal)
    assert MARKER_DOC in page.content.decode() and "data-grade>" in page.content.decode()
