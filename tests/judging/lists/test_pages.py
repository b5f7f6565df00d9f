"""Browser side of judgment lists: the download menu, creating and filling collections,
the publication setting and the export/import commands."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from judging import services
from judging.models import Collection, Judge, Judgment, Membership
from tests import factories

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def people(coll):
    """A coordinator, a judge and a team member of ``coll``, with two graded pairs."""
    users = {name: factories.user(name) for name in ("boss", "jo", "tm")}
    factories.member(coll, users["boss"], Role.COORDINATOR)
    factories.member(coll, users["jo"], Role.JUDGE)
    factories.member(coll, users["tm"], Role.TEAM)
    q = factories.query(coll, "1", text="compost, smell")
    docs = [factories.document(coll, f"d{i}") for i in range(2)]
    judge = factories.human_judge(users["jo"])
    for doc, grade in zip(docs, (3, 1), strict=True):
        services.judgment_record(judge=judge, query=q, document=doc, grade=grade)
    return users


def _download(client, coll, **params):
    return client.get(reverse("judging:judgment_list_download", args=[coll.slug]), params)


def test_download_menu_and_download_follow_the_roles(client, coll, people):
    page = reverse("judging:collection_detail", args=[coll.slug])
    client.force_login(people["boss"])
    html = client.get(page).content.decode()
    assert "download the judgment list" in html and "labels=raw" in html
    response = _download(client, coll, format="csv")
    assert response.status_code == 200
    assert (
        b"".join(response.streaming_content)
        == b'query,docid,rating\n"compost, smell",d0,3\n"compost, smell",d1,1\n'
    )
    assert response["X-Judgment-List-Version"] == str(coll.judgments_version + 2)
    assert _download(client, coll, format="nope").status_code == 400

    client.force_login(people["jo"])
    assert "judgment-list/?format=" not in client.get(page).content.decode()
    assert _download(client, coll).status_code == 403

    client.force_login(people["tm"])
    assert "judgment-list/?format=" not in client.get(page).content.decode()
    assert _download(client, coll).status_code == 403
    Collection.objects.filter(pk=coll.pk).update(judgments_published=True)
    html = client.get(page).content.decode()
    assert "Download judgment list" in html and "labels=raw" not in html
    assert _download(client, coll, format="jsonl").status_code == 200
    assert _download(client, coll, format="csv", labels="raw").status_code == 403

    client.logout()
    assert _download(client, coll).status_code == 302  # to the login page


def test_coordinators_publish_the_judgment_list_in_the_settings(client, coll, people):
    url = reverse("metrics:collection_update", args=[coll.slug])
    client.force_login(people["boss"])
    assert "Publish the judgment list" not in client.get(url).content.decode()  # › Measures
    assert "Publish the judgment list" in client.get(url + "?tab=visibility").content.decode()
    saved = client.post(
        url,
        {
            "action": "visibility",
            "mode": "hidden",
            "min_queries": "25",
            "public_share": "0.5",
            "runs_per_day": "5",
            "judgments_published": "on",
        },
    )
    assert saved.status_code == 303 and saved["Location"].endswith("?tab=visibility")
    coll.refresh_from_db()
    assert coll.judgments_published and not coll.leaderboard_published


def test_create_a_collection_and_import_files_in_the_browser(client, coll, people):
    client.force_login(people["jo"])
    assert client.get(reverse("judging:collection_create")).status_code == 403
    client.force_login(people["boss"])
    assert "New collection" in client.get(reverse("judging:home")).content.decode()
    created = client.post(
        reverse("judging:collection_create"),
        {"name": "Soil", "slug": "soil", "purpose": "shared_task", "judges_per_pair": 2},
    )
    soil = Collection.objects.get(slug="soil")
    assert created.status_code == 303 and created["Location"].endswith("/c/soil/import/")
    assert soil.memberships.get().role == Role.COORDINATOR
    url = reverse("judging:collection_import", args=["soil"])
    topics = SimpleUploadedFile(
        "topics.txt", b"<top>\n<num> Number: 7\n<title> clay soil\n<desc> Description:\nx\n</top>\n"
    )
    docs = SimpleUploadedFile("docs.tsv", b"a\tclay is heavy\nb\tsand drains\n")
    qrels = SimpleUploadedFile("q.qrels", b"7 0 a 2\n7 0 b 0\n")
    form = {"topics": topics, "documents": docs, "judgments": qrels, "judge_name": "Soil panel"}
    form.update(judge_kind="human", scale="0-2", dry_run="on")
    dry = client.post(url, form)
    assert dry.status_code == 303 and not soil.queries.exists()
    for upload in (topics, docs, qrels):
        upload.seek(0)
    form.pop("dry_run")
    done = client.post(url, form, follow=True)
    assert "topics: 1 new" in done.content.decode()
    assert soil.queries.get().description == "x" and soil.documents.count() == 2
    judge = Judge.objects.get(name="Soil panel")
    assert sorted(Judgment.objects.filter(judge=judge).values_list("grade", flat=True)) == [0, 4]
    bad = SimpleUploadedFile("q.qrels", b"7 0 a 2\n7 0 zz 1\n")
    refused = client.post(
        url, {"judgments": bad, "judge_name": "Soil panel", "judge_kind": "human"}
    )
    assert refused.status_code == 400 and "line 2: unknown document id" in refused.content.decode()
    assert '<details class="fold">' in refused.content.decode()  # the formats stay folded
    qrels.seek(0)
    bad_kind = {"judgments": qrels, "judge_name": "Soil panel", "judge_kind": "robot"}
    wrong = client.post(url, bad_kind).content.decode()
    assert '<details class="fold" open>' in wrong  # a folded field's error opens the fold


def test_export_and_import_commands(tmp_path, coll, people):
    out = tmp_path / "list.jsonl"
    call_command("export_judgments", coll.slug, "--format", "jsonl", "-o", str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["query"], r["document"], r["grade"]) for r in rows] == [
        ("1", "d0", 3),
        ("1", "d1", 1),
    ]
    call_command("import_judgments", coll.slug, str(out), "--judge", "Copy", "--dry-run")
    assert not Judgment.objects.filter(judge__name="Copy").exists()
    call_command("import_judgments", coll.slug, str(out), "--judge", "Copy")
    assert Judgment.objects.filter(judge__name="Copy").count() == 2
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 d0 7\n")
    with pytest.raises(CommandError, match="line 1: grade: grade 7 is outside the scale 0–4"):
        call_command("import_judgments", coll.slug, str(bad), "--judge", "Copy")
    with pytest.raises(CommandError, match="No collection"):
        call_command("export_judgments", "nope")


def test_import_collection_reads_trec_topics_and_tsv_documents(tmp_path, db):
    topics = tmp_path / "topics.301-302"
    topics.write_text(
        "<top>\n<num> Number: 301\n<title> organized crime\n<narr> Narrative:\nmafia\n</top>\n"
        "<top>\n<num> Number: 302\n<title> polio\n</top>\n"
    )
    docs = tmp_path / "collection.tsv"
    docs.write_text("".join(f"{i}\tpassage {i}\n" for i in range(50)))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("301 0 1 3\n302 0 2 0\n")
    call_command(
        "import_collection", "trec", "--topics", str(topics), "--documents", str(docs),
        "--judgments", str(qrels), "--judge", "NIST", "--scale", "0-3",
    )  # fmt: skip
    coll = Collection.objects.get(slug="trec")
    assert coll.queries.get(external_id="301").narrative == "mafia"
    assert coll.documents.count() == 50
    assert dict(coll.live_grades.values_list("query__external_id", "grade")) == {
        "301": 4.0,
        "302": 0.0,
    }
    docs.write_text("1\tok\n2\n")
    with pytest.raises(CommandError, match="line 2"):
        call_command("import_collection", "trec", "--documents", str(docs))
