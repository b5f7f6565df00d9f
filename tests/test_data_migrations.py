"""The migrations that move data keep every row, walked forward once from an empty database.

Each step below seeds rows in the schema a data migration starts from, applies the
migration and checks what it made of them, as production applies it: forward. The walk
starts from an empty database (every table dropped) and applies migrations forward only, in
the order ``migrate`` applies them, emptying the tables between steps so that no step sees
another's rows; it ends at the latest state, as the rest of the suite needs.

Each step used to be its own test that migrated the suite's database back from the latest
state and forward again: five backward walks through 57 migrations, 90 s of CI per leg
(rendering the historical models is what costs; applying the first migrations on an
empty database is cheap). One walk applies each migration once.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from django.apps.registry import Apps
from django.core.management.color import no_style
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor

Target = list[tuple[str, str]]
Migrate = Callable[..., Apps]  # (targets, *, backwards=False) -> the historical models

pytestmark = pytest.mark.django_db(transaction=True)


def _migrate(targets: Target, *, backwards: bool = False) -> Apps:
    """Migrate to ``targets`` and return the historical models of that state.

    Unless ``backwards``, a plan that would unapply a migration is refused: a step added out
    of ``migrate``'s order would make the walk slow again, and test another path than
    production's.
    """
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(targets)
    undone = [migration.name for migration, backward in plan if backward]
    assert backwards or not undone, f"the walk would unapply {undone} to reach {targets}"
    executor.migrate(targets, plan=plan)
    return executor.loader.project_state(targets).apps


def _latest() -> Target:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _drop_everything() -> None:
    """Drop every table (and, on PostgreSQL, every trigger function) the suite made."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        return
    assert connection.vendor == "sqlite", connection.vendor
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA foreign_keys = OFF")
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f'DROP TABLE "{table}"')
        cursor.execute("PRAGMA foreign_keys = ON")


def _empty_tables() -> None:
    """Delete every row but the record of applied migrations."""
    tables = [t for t in connection.introspection.table_names() if t != "django_migrations"]
    with transaction.atomic():
        connection.ops.execute_sql_flush(
            connection.ops.sql_flush(no_style(), tables, allow_cascade=True)
        )


def _triggers() -> list[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        else:
            cursor.execute(
                "SELECT DISTINCT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname"
            )
        return [row[0] for row in cursor.fetchall()]


def _applied() -> set[tuple[str, str]]:
    return set(MigrationExecutor(connection).loader.applied_migrations)


# --- the steps, in the order migrate applies them ---------------------------------------------


def endpoints_become_providers_and_secret_names_are_dropped(migrate: Migrate) -> None:
    """judging 0010 (issue 17): an LLM judge's endpoint becomes a provider's base URL."""
    old = migrate([("judging", "0009_jpage_progress_counters")])
    OldJudge = old.get_model("judging", "Judge")
    for name, url, env in (
        ("a", "http://127.0.0.1:8115/v1/", "SECRET_KEY"),
        ("b", "http://127.0.0.1:8115/v1", "GRADED_LLM_KEY_LOCAL"),
        ("c", "https://api.example.com/v1", "DATABASE_URL"),
        ("d", "", ""),
    ):
        OldJudge.objects.create(
            kind="llm", name=name, model=f"m-{name}", endpoint=url, api_key_env=env
        )
    new = migrate([("judging", "0010_llm_providers")])
    Provider = new.get_model("judging", "LLMProvider")
    NewJudge = new.get_model("judging", "Judge")
    rows = {
        j.name: (j.llm_provider.base_url, j.llm_provider.api_key_env) if j.llm_provider else None
        for j in NewJudge.objects.select_related("llm_provider")
    }
    assert rows == {
        "a": ("http://127.0.0.1:8115/v1", ""),  # SECRET_KEY is no key variable: dropped
        "b": ("http://127.0.0.1:8115/v1", "GRADED_LLM_KEY_LOCAL"),
        "c": ("https://api.example.com/v1", ""),
        "d": None,
    }
    assert set(Provider.objects.values_list("api_key_env", flat=True)) <= {
        "",
        "GRADED_LLM_KEY_LOCAL",
    }
    assert all(p.allowed_private_hosts == [] for p in Provider.objects.all())


def each_provider_opens_to_the_collections_already_using_it(migrate: Migrate) -> None:
    """judging 0021 (issue 32): a provider in use stays open to its judges' collections."""
    old = migrate([("judging", "0020_llm_job_chunks")])
    OldCollection = old.get_model("judging", "Collection")
    OldProvider = old.get_model("judging", "LLMProvider")
    OldJudge = old.get_model("judging", "Judge")
    used, _unused, elsewhere = (
        OldCollection.objects.create(slug=s, name=s) for s in ("used", "unused", "elsewhere")
    )
    busy = OldProvider.objects.create(name="busy", base_url="https://llm.example/v1")
    OldProvider.objects.create(name="idle", base_url="https://llm.example/v1")
    judge = OldJudge.objects.create(kind="llm", name="j", model="m", llm_provider=busy)
    judge.collections.add(used, elsewhere)
    new = migrate([("judging", "0021_llm_provider_scope")])
    Provider = new.get_model("judging", "LLMProvider")
    opened = {
        p.name: sorted(p.allowed_collections.values_list("slug", flat=True))
        for p in Provider.objects.all()
    }
    assert opened == {"busy": ["elsewhere", "used"], "idle": []}  # idle: superusers only
    assert all(p.token_budget is None and p.tokens_used == 0 for p in Provider.objects.all())


def checks_made_before_become_done_with_their_results_and_tokens(migrate: Migrate) -> None:
    """judging 0031: canary and version checks made before get a status, keeping every row."""
    old = migrate([("judging", "0030_evidence_spans")])
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
    assert triggers, "the same-collection triggers of judging 0002/0012 exist by 0030"

    new = migrate([("judging", "0031_quality_checks_background")])
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


def stored_scores_move_into_columns_and_a_scoreboard(migrate: Migrate) -> None:
    """metrics 0011: per-query score dicts become score columns and a collection's board."""
    from metrics.live import store
    from metrics.live.scoring import canonical_names

    old = migrate([("metrics", "0010_pooling_audit")])
    coll = old.get_model("judging", "Collection").objects.create(
        slug="moved", name="Moved", measures=["AP", "nDCG@10"]
    )
    ap, ndcg = canonical_names(["AP", "nDCG@10"])
    q1, q2, q3 = (
        old.get_model("judging", "Query").objects.create(collection=coll, external_id=q, text=q)
        for q in ("q1", "q2", "q3")
    )
    team = old.get_model("metrics", "Team").objects.create(collection=coll, name="t")
    Run, RunQuery = old.get_model("metrics", "Run"), old.get_model("metrics", "RunQuery")
    a = Run.objects.create(
        collection=coll, team=team, tag="a", scored_version=4,
        score_sums={ap: [0.75, 2], ndcg: [0.5, 1]},
    )  # fmt: skip
    b = Run.objects.create(
        collection=coll, team=team, tag="b", scored_version=4, score_sums={ap: [0.25, 1]}
    )
    for run, query, scores in (
        (a, q1, {ap: 0.5, ndcg: 0.5}),
        (a, q2, {ap: 0.25, ndcg: None}),
        (a, q3, {}),  # no live grades: not scored
        (b, q1, {ap: 0.25, ndcg: None}),
    ):
        RunQuery.objects.create(run=run, query=query, ranking=b"", retrieved=0, scores=scores)
    migrate([("metrics", "0011_live_score_store")])
    board = store.board_read(coll.pk)
    assert (board.names, board.version) == ([ap, ndcg], 4)
    assert board.means() == {
        a.pk: {ap: 0.375, ndcg: 0.5},
        b.pk: {ap: 0.25, ndcg: None},
    }
    columns = store.columns_read(coll.pk)
    assert set(columns) == {q1.pk, q2.pk}
    assert columns[q1.pk].run_ids.tolist() == [a.pk, b.pk]
    np.testing.assert_array_equal(
        columns[q1.pk].lookup([a.pk, b.pk], [ap, ndcg]), [[0.5, 0.5], [0.25, np.nan]]
    )
    assert columns[q2.pk].lookup([a.pk], [ap, ndcg]).tolist()[0][0] == 0.25


def rankings_become_int32_and_back_and_a_too_large_id_stops_the_migration(
    migrate: Migrate,
) -> None:
    """metrics 0012: rankings are rewritten as int32 ids, reversibly; an id past int32 stops it."""
    before, after = [("metrics", "0011_live_score_store")], [("metrics", "0012_rankings_int32")]
    old = migrate(before)
    coll = old.get_model("judging", "Collection").objects.create(slug="r32", name="R32")
    query = old.get_model("judging", "Query").objects.create(collection=coll, external_id="q")
    team = old.get_model("metrics", "Team").objects.create(collection=coll, name="t")
    run = old.get_model("metrics", "Run").objects.create(collection=coll, team=team, tag="a")
    RunQuery = old.get_model("metrics", "RunQuery")
    ids = [5, 2**31 - 1, 0, 70_000]
    stored = RunQuery.objects.create(
        run=run, query=query, ranking=np.array(ids, "<i8").tobytes(), retrieved=4
    )
    empty = RunQuery.objects.create(
        run=old.get_model("metrics", "Run").objects.create(collection=coll, team=team, tag="b"),
        query=query,
        ranking=b"",
        retrieved=0,
    )
    rows = migrate(after).get_model("metrics", "RunQuery").objects
    assert bytes(rows.get(pk=stored.pk).ranking) == np.array(ids, "<i4").tobytes()
    assert bytes(rows.get(pk=empty.pk).ranking) == b""
    rows = migrate(before, backwards=True).get_model("metrics", "RunQuery").objects
    assert bytes(rows.get(pk=stored.pk).ranking) == np.array(ids, "<i8").tobytes()
    rows.filter(pk=stored.pk).update(ranking=np.array([1, 2**31], "<i8").tobytes())
    with pytest.raises(RuntimeError, match="above 2147483647"):
        migrate(after)
    # nothing half-written: the ranking is as it was, the migration not applied
    assert bytes(rows.get(pk=stored.pk).ranking) == np.array([1, 2**31], "<i8").tobytes()
    assert _applied() >= set(before) and after[0] not in _applied()


STEPS = [
    endpoints_become_providers_and_secret_names_are_dropped,
    each_provider_opens_to_the_collections_already_using_it,
    checks_made_before_become_done_with_their_results_and_tokens,
    stored_scores_move_into_columns_and_a_scoreboard,
    rankings_become_int32_and_back_and_a_too_large_id_stops_the_migration,
]


def test_each_data_migration_keeps_every_row_walking_forward_from_an_empty_database():
    """Run every step in order on one forward walk; end at the latest state in any case."""
    walked: list[Target] = []

    def migrate(targets: Target, *, backwards: bool = False) -> Apps:
        walked.append(targets)
        return _migrate(targets, backwards=backwards)

    _drop_everything()
    try:
        for step in STEPS:
            try:
                step(migrate)
            except Exception as exc:
                raise AssertionError(f"{step.__name__}: {exc}") from exc
            _empty_tables()
    finally:  # the latest state for the rest of the suite, even after a failed step
        _migrate(_latest())
    assert len(walked) == 12 and _applied() >= set(_latest())
