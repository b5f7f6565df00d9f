"""Runs are stored, pooled and scored against the live judgment list, and move with it."""

from __future__ import annotations

import numpy as np
import pytest

from judging import services as judging_services
from judging.models import Collection, Document, LiveGrade, PoolEntry, Query
from metrics import engine, services
from metrics.live import scoring
from metrics.models import Run, RunQuery
from tests import factories
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db

MEASURES = ["nDCG@10", "nDCG(gain=exp)@10", "P@10", "RR", "AP", "R@100", "Judged@10"]


def trec(lines: list[tuple[str, str, float]], tag: str = "r") -> bytes:
    """Format (qid, docno, score) rows as a TREC run file."""
    return "".join(
        f"{q} Q0 {d} {i} {s} {tag}\n" for i, (q, d, s) in enumerate(lines, start=1)
    ).encode()


def export_qrels(coll: Collection) -> bytes:
    """Export the live list as TREC qrels (what the qrels API serves)."""
    rows = LiveGrade.objects.filter(collection=coll).values_list(
        "query__external_id", "document__external_id", "grade"
    )
    return "".join(f"{q} 0 {d} {g:g}\n" for q, d, g in rows).encode()


def reference(coll: Collection, content: bytes) -> dict[str, dict[str, float]]:
    """Evaluate exported files with the engine's file-level API (trec_eval -c semantics)."""
    result = engine.evaluate(
        engine.read_qrels(export_qrels(coll), name="qrels"),
        engine.read_run(content, name="run"),
        MEASURES,
    )
    by_query: dict[str, dict[str, float]] = {}
    for name, values in result.per_query.items():
        for qid, value in zip(result.qids, values.tolist(), strict=True):
            by_query.setdefault(qid, {})[name] = value
    return {"all": result.aggregates, **by_query}


@pytest.fixture
def world(db):
    coll = factories.collection("eval", measures=MEASURES, pool_depth=3)
    queries = [factories.query(coll, f"q{i}") for i in range(1, 5)]
    docs = [factories.document(coll, f"d{i}") for i in range(1, 13)]
    team = services.team_create(collection=coll, name="Team A")
    judge = factories.human_judge(factories.user())
    llm = factories.llm_judge()
    rng = np.random.default_rng(7)
    for q in queries[:3]:  # q4 has no judgments: not in the live list
        for d in rng.choice(docs, size=7, replace=False):
            judging_services.judgment_record(
                judge=judge, query=q, document=d, grade=int(rng.integers(0, 5))
            )
    judging_services.judgment_record(judge=llm, query=queries[0], document=docs[11], grade=4)
    return coll, queries, docs, team, judge


def _run_content(seed: int, tag: str) -> bytes:
    rng = np.random.default_rng(seed)
    lines = []
    for qid in ["q1", "q2", "q4"]:  # q3 is live but missing from the run: scores 0 (-c)
        for d in rng.permutation(12)[:9]:
            lines.append((qid, f"d{d + 1}", float(rng.integers(0, 6))))  # ties on purpose
        lines.append((qid, f"unknown-{qid}", 0.5))
    return trec(lines, tag)


def _assert_matches_reference(run: Run, coll: Collection, content: bytes) -> None:
    ref = reference(coll, content)
    names = scoring.canonical_names(MEASURES)
    for name in names:
        assert run.scores[name] == pytest.approx(ref["all"][name], abs=1e-12), name
    qids = dict(Query.objects.filter(collection=coll).values_list("pk", "external_id"))
    scored = {qids[q]: values for q, values in metrics_factories.query_scores(run).items()}
    assert set(scored) == set(ref) - {"all"}
    for qid, values in scored.items():
        for name in names:
            assert values[name] == pytest.approx(ref[qid][name], abs=1e-12), (qid, name)


def test_submission_scores_equal_evaluation_of_exported_files(world):
    coll, _, _, team, _ = world
    content = _run_content(1, "alpha")
    run = services.run_submit(
        collection=coll, team=team, tag="alpha", content=content, filename="a.txt", user=None
    )
    assert (run.query_count, run.line_count, run.unknown_document_count) == (3, 30, 3)
    assert run.status == Run.Status.SCORED
    assert run.scored_version == Collection.objects.get(pk=coll.pk).judgments_version
    assert run.source_file.read() == content
    _assert_matches_reference(run, coll, content)


def test_a_judgment_moves_only_its_query(world, django_capture_on_commit_callbacks):
    coll, queries, _docs, team, judge = world
    contents = {tag: _run_content(seed, tag) for seed, tag in [(1, "alpha"), (2, "beta")]}
    runs = [
        services.run_submit(
            collection=coll, team=team, tag=tag, content=c, filename=f"{tag}.txt", user=None
        )
        for tag, c in contents.items()
    ]
    before = metrics_factories.stored_scores(runs)
    top = RunQuery.objects.get(run=runs[0], query=queries[1]).document_ids[0]
    doc = Document.objects.get(pk=top)
    current = LiveGrade.objects.filter(query=queries[1], document=doc).first()
    new_grade = 4 if current is None or current.grade < 4 else 0
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgment_record(
            judge=factories.human_judge(factories.user()),
            query=queries[1],
            document=doc,
            grade=new_grade,
        )
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgment_record(
            judge=judge, query=queries[1], document=doc, grade=new_grade
        )
    after = metrics_factories.stored_scores(runs)
    changed = {key for key in before if before[key] != after[key]}
    assert changed and {q for _, q in changed} == {queries[1].pk}
    version = Collection.objects.get(pk=coll.pk).judgments_version
    for run, content in zip(runs, contents.values(), strict=True):
        metrics_factories.current(run)
        assert run.scored_version == version
        _assert_matches_reference(run, coll, content)


def test_a_query_entering_the_live_list_counts_for_every_run(
    world, django_capture_on_commit_callbacks
):
    coll, queries, docs, team, judge = world
    content = _run_content(3, "gamma")
    run = services.run_submit(
        collection=coll, team=team, tag="gamma", content=content, filename="g.txt", user=None
    )
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgment_record(judge=judge, query=queries[3], document=docs[0], grade=3)
    run.refresh_from_db()
    _assert_matches_reference(run, coll, content)


def test_bulk_import_rescores_in_the_background_task(world, django_capture_on_commit_callbacks):
    coll, _queries, _docs, team, _ = world
    content = _run_content(4, "delta")
    run = services.run_submit(
        collection=coll, team=team, tag="delta", content=content, filename="d.txt", user=None
    )
    rows = [judging_services.JudgmentRow(i, "q2", f"d{i}", grade=(i * 3) % 5) for i in range(1, 13)]
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgments_import(
            collection=coll, judge=factories.llm_judge("bulk-llm"), rows=rows
        )
    metrics_factories.current(run)
    assert run.scored_version == Collection.objects.get(pk=coll.pk).judgments_version
    _assert_matches_reference(run, coll, content)


def test_pooling_adds_exactly_the_unjudged_top_k(world):
    coll, _queries, _, team, _ = world
    before = set(PoolEntry.objects.values_list("query_id", "document_id"))
    content = _run_content(5, "eps")
    run = services.run_submit(
        collection=coll, team=team, tag="eps", content=content, filename="e.txt", user=None
    )
    live = set(LiveGrade.objects.values_list("query_id", "document_id"))
    expected = set()
    for rq in RunQuery.objects.filter(run=run, retrieved__gt=0):
        expected |= {(rq.query_id, int(d)) for d in rq.document_ids[:3]}
    expected -= live
    added = set(PoolEntry.objects.values_list("query_id", "document_id")) - before
    assert added == expected - before
    assert all(PoolEntry.objects.get(query_id=q, document_id=d).source == "run" for q, d in added)


def test_resubmitting_a_tag_is_refused(world):
    coll, _, _, team, _ = world
    content = _run_content(6, "zeta")
    services.run_submit(
        collection=coll, team=team, tag="zeta", content=content, filename="z.txt", user=None
    )
    with pytest.raises(services.RunRejected) as exc:
        services.run_submit(
            collection=coll, team=team, tag="zeta", content=content, filename="z.txt", user=None
        )
    assert exc.value.errors[0]["field"] == "tag"
    assert Run.objects.count() == 1


@pytest.mark.parametrize(
    ("content", "line", "fragment"),
    [
        (b"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 r\n", 2, "column"),
        (b"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 abc r\n", 2, "score"),
        (b"q1 Q0 d1 1 nan r\n", 1, "finite"),
        (b"q1 Q0 d1 1 2.0 r\nq1 Q0 d1 2 1.0 r\n", 2, "d1"),
        (b"q1 Q0 d1 1 2.0 r\nq9 Q0 d2 1 1.0 r\n", 2, "q9"),
        (b"", 1, "empty"),
    ],
)
def test_bad_files_are_refused_with_lines_and_leave_nothing(world, content, line, fragment):
    coll, _, _, team, _ = world
    counts = (Document.objects.count(), PoolEntry.objects.count())
    with pytest.raises(services.RunRejected) as exc:
        services.run_submit(
            collection=coll, team=team, tag="bad", content=content, filename="bad.txt", user=None
        )
    first = exc.value.errors[0]
    assert first["line"] == line
    assert fragment in first["message"].lower()
    assert not Run.objects.exists() and not RunQuery.objects.exists()
    assert (Document.objects.count(), PoolEntry.objects.count()) == counts


def test_an_unexpected_failure_after_storing_leaves_no_file(world, monkeypatch, settings, tmp_path):
    coll, _, _, team, _ = world
    settings.MEDIA_ROOT = tmp_path

    def explode(**_):
        raise RuntimeError("scoring failed")

    monkeypatch.setattr(services, "runs_score", explode)
    with pytest.raises(RuntimeError):
        services.run_submit(
            collection=coll,
            team=team,
            tag="boom",
            content=_run_content(8, "boom"),
            filename="boom.txt",
            user=None,
        )
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_live_scores_equal_manage_py_evaluate_on_exported_files(
    world, tmp_path, django_capture_on_commit_callbacks
):
    import json
    from io import StringIO

    from django.core.management import call_command

    coll, queries, docs, team, judge = world
    content = _run_content(9, "iota")
    run = services.run_submit(
        collection=coll, team=team, tag="iota", content=content, filename="i.txt", user=None
    )
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgment_record(judge=judge, query=queries[0], document=docs[4], grade=2)
    run.refresh_from_db()
    (tmp_path / "qrels.txt").write_bytes(export_qrels(coll))
    (tmp_path / "run.txt").write_bytes(content)
    out = StringIO()
    args = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "--format", "json"]
    for name in MEASURES:
        args += ["-m", name]
    call_command("evaluate", *args, stdout=out)
    (evaluated,) = json.loads(out.getvalue()).values()
    for name in scoring.canonical_names(MEASURES):
        assert run.scores[name] == pytest.approx(evaluated[name]["all"], abs=1e-12), name


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (b'{"qid": "q1", "docno": "q9", "score": 1}\n{"qid": 9, "docno": "d2", "score": 1}\n', 2),
        (
            b'{"qid": "q1", "docno": "d1", "score": 1}\n'
            b'{"query_id": "q9", "docno": "d2", "score": 2}\n',
            2,
        ),
    ],
)
def test_unknown_queries_in_json_runs_name_their_line(world, content, line):
    coll, _, _, team, _ = world
    with pytest.raises(services.RunRejected) as exc:
        services.run_submit(
            collection=coll, team=team, tag="js", content=content, filename="r.jsonl", user=None
        )
    (error,) = exc.value.errors
    assert error["line"] == line, error


@pytest.mark.parametrize("what", ["document", "query"])
def test_deleting_judged_rows_rescores_every_run(world, what, django_capture_on_commit_callbacks):
    """A judged document or query deleted (admin) takes its grades out of every run's scores."""
    from judging.progress import services as services_progress

    coll, queries, _docs, team, _judge = world
    content = _run_content(3, "gamma")
    run = services.run_submit(
        collection=coll, team=team, tag="gamma", content=content, filename="g.txt", user=None
    )
    version = Collection.objects.get(pk=coll.pk).judgments_version
    with django_capture_on_commit_callbacks(execute=True):
        if what == "document":
            judged = LiveGrade.objects.filter(collection=coll, grade__gt=0).first().document
            services_progress.document_delete(document=judged)
        else:
            services_progress.query_delete(query=queries[0])
    coll.refresh_from_db()
    metrics_factories.current(run)
    assert coll.judgments_version == version + 1
    assert run.scored_version == coll.judgments_version
    _assert_matches_reference(run, coll, content)


def test_deleting_an_unjudged_document_leaves_the_list_alone(world):
    from judging.progress import services as services_progress

    coll, _queries, _docs, _team, _judge = world
    version = Collection.objects.get(pk=coll.pk).judgments_version
    services_progress.document_delete(document=factories.document(coll, "never-judged"))
    assert Collection.objects.get(pk=coll.pk).judgments_version == version
