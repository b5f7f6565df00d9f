"""The migration that gives canary and version checks a status keeps every row and result."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("judging", "0030_evidence_spans")]
AFTER = [("judging", "0031_quality_checks_background")]


def _triggers() -> list[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        else:
            cursor.execute(
                "SELECT DISTINCT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname"
            )
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.django_db(transaction=True)
def test_checks_made_before_become_done_with_their_results_and_tokens():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    coll = old.get_model("judging", "Collection").objects.create(slug="c", name="c")
    judge = old.get_model("judging", "Judge").objects.create(kind="llm", name="j", model="m")
    query = old.get_model("judging", "Query").objects.create(
        collection=coll, external_id="q1", text="t"
    )
    other = old.get_model("judging", "Query").objects.create(
        collection=coll, external_id="q2", text="u"
    )
    doc = old.get_model("judging", "Document").objects.create(collection=coll, external_id="d1")
    canary = old.get_model("judging", "CanaryCheck").objects.create(
        collection=coll, judge=judge, version="v-1", seed=4
    )
    results = old.get_model("judging", "CanaryResult")
    for qid, kind, grade in [
        ("q1", "stuffing", 2),
        ("q1", "injection", 0),
        ("q2", "stuffing", None),
    ]:
        results.objects.create(canary_check=canary, kind=kind, qid=qid, title="t", text="x",
                               grade=grade)  # fmt: skip
    version = old.get_model("judging", "VersionCheck").objects.create(
        collection=coll, judge=judge, version="v-1"
    )
    version_results = old.get_model("judging", "VersionCheckResult")
    version_results.objects.create(version_check=version, query=query, document=doc, grade=1,
                                   prompt_tokens=100, completion_tokens=7)  # fmt: skip
    version_results.objects.create(version_check=version, query=other, document=doc, grade=None)
    triggers = _triggers()

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    canary = new.get_model("judging", "CanaryCheck").objects.get()
    version = new.get_model("judging", "VersionCheck").objects.get()
    assert (canary.status, canary.error, canary.seed, canary.version) == ("done", "", 4, "v-1")
    assert canary.queries == 2  # the queries its canaries name
    assert canary.finished_at == canary.created_at == canary.started_at
    assert (canary.prompt_tokens, canary.completion_tokens) == (0, 0)  # not recorded before
    assert sorted(
        new.get_model("judging", "CanaryResult")
        .objects.filter(canary_check=canary)
        .values_list("qid", "kind", "grade")
    ) == [("q1", "injection", 0), ("q1", "stuffing", 2), ("q2", "stuffing", None)]
    assert (version.status, version.prompt_tokens, version.completion_tokens) == ("done", 100, 7)
    assert (
        new.get_model("judging", "VersionCheckResult").objects.filter(version_check=version).count()
        == 2
    )
    new_check = new.get_model("judging", "CanaryCheck").objects.create(
        collection_id=coll.pk, judge_id=judge.pk, version="v-2", seed=1
    )
    assert new_check.status == "queued"  # the default of new checks
    assert _triggers() == triggers  # no trigger lost to SQLite's table rebuild
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA foreign_key_check")
            assert cursor.fetchall() == []
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
