"""Gold pairs marked through judgment imports: the ``gold`` and ``gold_reason`` columns.

csv, tsv, JSON Lines and JSON, through the import service and REST; every problem names
its line and field, nothing is half-written, a dry run writes nothing, and the judges'
qualification follows the gold pairs the import marks.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from judging import services
from judging import services as judging_services
from judging.lists import services as lists
from judging.models import Judgment, LiveGrade, Membership, PoolEntry
from judging.quality import services as quality_services
from judging.quality.models import GoldPair, JudgeQualification
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def coll():
    coll = factories.collection("gi")
    for qid in ("q1", "q2"):
        factories.query(coll, qid)
    for docno in ("d1", "d2", "d3"):
        factories.document(coll, docno)
    return coll


def _import(coll, text: str, fmt: str, *, dry_run: bool = False, scale: str | None = None):
    judge = lists.judge_for_import(name="TREC", kind="human", collection=coll)
    return lists.judgment_list_import(
        collection=coll,
        judge=judge,
        source=io.BytesIO(text.encode()),
        format=fmt,
        dry_run=dry_run,
        scale=scale,
    )


def _gold(coll) -> dict[tuple[str, str], tuple[int, str]]:
    return {
        (g.query.external_id, g.document.external_id): (g.grade, g.reason)
        for g in GoldPair.objects.filter(collection=coll).select_related("query", "document")
    }


CSV = "query,docid,rating,gold,gold_reason\nq1,d1,3,3,clear answer\nq1,d2,1,,\nq2,d3,,0,off topic\n"


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("csv", CSV),
        ("tsv", CSV.replace(",", "\t")),
        (
            "jsonl",
            '{"query": "q1", "document": "d1", "grade": 3, "gold": 3, '
            '"gold_reason": "clear answer"}\n'
            '{"query": "q1", "document": "d2", "grade": 1}\n'
            '{"query": "q2", "document": "d3", "gold": 0, "gold_reason": "off topic"}\n',
        ),
        (
            "json",
            json.dumps(
                [
                    {
                        "qid": "q1",
                        "docno": "d1",
                        "grade": 3,
                        "gold": 3,
                        "gold_reason": "clear answer",
                    },
                    {"qid": "q1", "docno": "d2", "grade": 1, "gold": None},
                    {"qid": "q2", "docno": "d3", "gold": 0, "gold_reason": "off topic"},
                ]
            ),
        ),
    ],
)
def test_each_format_marks_gold_pairs_and_labels_the_rest(coll, fmt, text):
    summary = _import(coll, text, fmt)
    assert (summary.created, summary.gold) == (2, 2)
    assert _gold(coll) == {("q1", "d1"): (3, "clear answer"), ("q2", "d3"): (0, "off topic")}
    # the gold-only line labels nothing; gold pairs not pooled wait for the next pairs
    # pooled (judging.services.pool_add_ids), so none enters the pool on its own
    labels = set(Judgment.objects.values_list("query__external_id", "document__external_id"))
    assert labels == {("q1", "d1"), ("q1", "d2")}
    assert not PoolEntry.objects.exists()
    assert set(
        services.gold_waiting(collection=coll).values_list(
            "query__external_id", "document__external_id"
        )
    ) == {("q1", "d1"), ("q2", "d3")}
    again = _import(coll, text, fmt)  # the same file again: nothing new
    assert (again.created, again.unchanged, again.gold) == (0, 2, 0)


def test_gold_grades_follow_the_file_scale(coll):
    summary = _import(coll, "query,docid,rating,gold\nq1,d1,0,1\n", "csv", scale="0-1")
    assert summary.gold == 1 and _gold(coll) == {("q1", "d1"): (4, "")}


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("query,docid,rating,gold\nq1,d1,2,7\n", 2, "gold"),
        ("query,docid,rating,gold\nq1,d1,2,two\n", 2, "gold"),
        ("query,docid,rating,gold\nq1,d1,2,99999999999999999999\n", 2, "gold"),
        ("query,docid,rating,gold,gold_reason\nq1,d1,2,,why\n", 2, "gold_reason"),
        ("query,docid,rating,gold,gold_reason\nq1,d1,2,1," + "x" * 5001 + "\n", 2, "gold_reason"),
        ("query,docid,rating,gold\nq1,d1,2,1\nq1,d1,,2\n", 3, "gold"),
        ("query,docid,rating,gold\nq1,d1,2,1\nq1,nope,,2\n", 3, "document"),
        ("query,docid,rating,gold\nq1,d1,2,1\nq9,d1,,2\n", 3, "query"),
    ],
)
def test_bad_gold_lines_are_refused_naming_line_and_field(coll, text, line, field):
    with pytest.raises(lists.ImportRefused) as refused:
        _import(coll, text, "csv")
    items = refused.value.problems.as_dicts()
    assert any(i.get("line") == line and i.get("field") == field for i in items), items
    assert not GoldPair.objects.exists() and not Judgment.objects.exists()


def test_hostile_jsonl_gold_fields_are_refused(coll):
    for value in ('{"a": 1}', "[[[[1]]]]", "true", "1e400", '"\\u0000"'):
        text = f'{{"query": "q1", "document": "d1", "grade": 1, "gold": {value}}}\n'
        with pytest.raises(lists.ImportRefused) as refused:
            _import(coll, text, "jsonl")
        (problem,) = refused.value.problems.as_dicts()
        assert problem["line"] == 1, value
        if value != "1e400":  # (refused by the JSON reader itself, before any field)
            assert problem["field"] == "gold", value
    with pytest.raises(lists.ImportRefused) as refused:
        _import(coll, '{"query": "q1", "document": "d1", "gold": 1, "gold_reason": 5}\n', "jsonl")
    assert refused.value.problems.as_dicts()[0]["field"] == "gold_reason"
    assert not GoldPair.objects.exists()


def test_a_dry_run_writes_nothing(coll):
    summary = _import(coll, CSV, "csv", dry_run=True)
    assert (summary.created, summary.gold) == (2, 2)
    assert not GoldPair.objects.exists() and not Judgment.objects.exists()
    assert not PoolEntry.objects.exists()


def test_a_refused_label_writes_no_gold_either(coll):
    with pytest.raises(lists.ImportRefused) as refused:
        _import(coll, "query,docid,rating,gold\nq1,d1,2,2\nq1,d2,9,\n", "csv")
    assert [i["line"] for i in refused.value.problems.as_dicts()] == [3]
    assert not GoldPair.objects.exists()


def test_imported_gold_moves_qualification_and_the_live_list(coll):
    ann = factories.human_judge(factories.user("ann"))
    q1 = coll.queries.get(external_id="q1")
    docs = {d.external_id: d for d in coll.documents.all()}
    quality_services.qualification_set(collection=coll, pairs=1, share=1.0)
    judging_services.judgment_record(judge=ann, query=q1, document=docs["d2"], grade=1)
    judging_services.judgment_record(judge=ann, query=q1, document=docs["d3"], grade=4)
    assert not LiveGrade.objects.filter(collection=coll).exists()
    _import(coll, "query,docid,rating,gold\nq1,d2,,1\n", "csv")  # marks ann's label right
    assert JudgeQualification.objects.get(judge=ann).counted
    assert set(LiveGrade.objects.values_list("document__external_id", flat=True)) == {"d2", "d3"}


def test_rest_import_with_gold_and_its_errors(coll):
    boss = factories.user("boss")
    factories.member(coll, boss, Membership.Role.COORDINATOR)
    api = client_for(boss)
    url = f"/api/v1/collections/{coll.slug}/qrels/"

    def post(text, name="labels.csv", **extra):
        upload = SimpleUploadedFile(name, text.encode())
        return api.post(url, {"file": upload, "judge_name": "TREC", **extra}, format="multipart")

    dry = post(CSV, dry_run="true")
    assert dry.status_code == 200 and dry.json()["gold"] == 2 and not GoldPair.objects.exists()
    done = post(CSV.replace(",", "\t"), name="labels.tsv")
    assert done.status_code == 201 and done.json()["gold"] == 2
    assert set(_gold(coll)) == {("q1", "d1"), ("q2", "d3")}
    bad = post("query,docid,rating,gold\nq1,d1,2,5\n")
    assert bad.status_code == 400
    assert [(e["line"], e["field"]) for e in errors_of(bad)] == [(2, "gold")]


def test_the_import_files_page_and_the_command_mark_gold(coll, client, tmp_path):
    from django.core.management import call_command
    from django.urls import reverse

    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    client.force_login(cora)
    page = client.post(
        reverse("judging:collection_import", args=[coll.slug]),
        {
            "judgments": SimpleUploadedFile("labels.csv", CSV.encode()),
            "judge_name": "TREC",
            "judge_kind": "human",
        },
        follow=True,
    )
    assert "2 new, 0 changed, 0 unchanged; 2 marked as gold" in page.content.decode()
    assert set(_gold(coll)) == {("q1", "d1"), ("q2", "d3")}
    path = tmp_path / "more.tsv"
    path.write_text("query\tdocid\trating\tgold\nq2\td1\t\t4\n")
    out = io.StringIO()
    call_command("import_judgments", coll.slug, str(path), "--judge", "TREC", stdout=out)
    assert "1 pair(s) marked as gold" in out.getvalue()
    assert _gold(coll)[("q2", "d1")] == (4, "")
