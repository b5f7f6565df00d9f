"""The demo loader (`manage.py load_demo`) and the demo run and qrels files."""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import CommandError, call_command

from judging import services
from judging.demo import make_runs
from judging.demo.content import demo_content
from judging.demo.loader import DEMO_ACCOUNTS, DEMO_SLUG, LOGIN_URL, SEED_PAIRS_PER_QUERY
from judging.management.commands.load_demo import Command as LoadDemoCommand
from judging.models import (
    Collection,
    Document,
    Judge,
    Judgment,
    JudgmentEvent,
    Membership,
    PoolEntry,
    Query,
)

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
RUN_FILES = sorted((DEMO_DIR / "runs").glob("*.txt"))
QRELS_FILE = DEMO_DIR / "qrels-reference.txt"


def _load(*args: str) -> str:
    out = io.StringIO()
    # pytest-django runs with DEBUG off, where the command wants --force.
    call_command("load_demo", "--force", *args, stdout=out)
    return out.getvalue()


def _state() -> dict[str, object]:
    """Return everything the loader creates, in comparable form."""
    coll = Collection.objects.get(slug=DEMO_SLUG)
    return {
        "collections": Collection.objects.count(),
        "collection": (coll.name, coll.guidelines, coll.judges_per_pair, coll.grade_names),
        "queries": sorted(coll.queries.values_list("external_id", "text", "narrative")),
        "documents": sorted(coll.documents.values_list("external_id", "title", "body", "url")),
        "pool": sorted(
            coll.pool_entries.values_list("query__external_id", "document__external_id")
        ),
        "users": sorted(get_user_model().objects.values_list("username", "password")),
        "memberships": sorted(coll.memberships.values_list("user__username", "role")),
        "judges": sorted(Judge.objects.values_list("name", flat=True)),
    }


def _read_run(path: Path) -> dict[str, list[tuple[str, int, float]]]:
    rankings: dict[str, list[tuple[str, int, float]]] = defaultdict(list)
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        cols = line.split()
        assert len(cols) == 6, f"{path.name}:{number}: {line!r}"
        qid, q0, docno, rank, score, tag = cols
        assert q0 == "Q0"
        assert tag == path.stem
        rankings[qid].append((docno, int(rank), float(score)))
    return rankings


def _read_qrels() -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in QRELS_FILE.read_text().splitlines():
        qid, zero, docno, grade = line.split()
        assert zero == "0"
        qrels[qid][docno] = int(grade)
    return qrels


def _precision_at_5(rankings, qrels) -> float:
    values = [
        sum(qrels[qid].get(docno, 0) >= 2 for docno, _, _ in rankings.get(qid, [])[:5]) / 5
        for qid in qrels
    ]
    return sum(values) / len(values)


# --- the command ------------------------------------------------------------------------


@pytest.mark.django_db
def test_loads_queries_documents_and_pool():
    _load()
    coll = Collection.objects.get(slug=DEMO_SLUG)
    assert coll.judges_per_pair == 2
    assert "Perfect match" in coll.guidelines
    assert coll.grade_names[4] == "Perfect match"
    queries = list(coll.queries.all())
    assert 18 <= len(queries) <= 22
    assert all(q.text and q.description and q.narrative for q in queries)
    assert all(len(q.narrative.split(". ")) >= 2 for q in queries)
    assert coll.documents.count() >= 250
    assert not coll.documents.filter(has_content=False).exists()
    assert all(d.title and len(d.body) > 80 for d in coll.documents.all())
    # The pool starts with a coordinator's seed of five pairs per query; runs add the rest.
    pool = coll.pool_entries
    per_query = [pool.filter(query=q).count() for q in queries]
    assert per_query == [SEED_PAIRS_PER_QUERY] * len(queries)
    # Each query still has about 12-18 documents written for it.
    per_query_docs = defaultdict(int)
    for r in demo_content().reference:
        per_query_docs[r.query_external_id] += 1
    assert min(per_query_docs.values()) >= 12 and max(per_query_docs.values()) <= 18


@pytest.mark.django_db
def test_documents_look_real_and_hide_reference_grades():
    _load()
    docs = list(Document.objects.filter(collection__slug=DEMO_SLUG))
    hosts = {urlsplit(d.url).hostname for d in docs}
    assert all(h.endswith(".test") or h.startswith("example.") for h in hosts)
    assert len({d.url for d in docs}) == len(docs)
    assert len({d.title for d in docs}) == len(docs)
    assert sum(d.body.startswith("<p>") for d in docs) >= 20  # some light HTML
    assert sum(bool(d.extra) for d in docs) >= 50
    assert not any("grade" in key for d in docs for key in d.extra)


@pytest.mark.django_db
def test_creates_demo_users_with_working_passwords():
    _load()
    coll = Collection.objects.get(slug=DEMO_SLUG)
    roles = dict(coll.memberships.values_list("user__username", "role"))
    assert roles == {
        "coordinator": Membership.Role.COORDINATOR,
        "judge1": Membership.Role.JUDGE,
        "judge2": Membership.Role.JUDGE,
        "team1": Membership.Role.TEAM,
    }
    for account in DEMO_ACCOUNTS:
        user = authenticate(username=account.username, password=account.password)
        assert user is not None, account.username
        assert user.is_staff == user.is_superuser == (account.username == "coordinator")
    assert set(Judge.objects.values_list("user__username", flat=True)) == {"judge1", "judge2"}


@pytest.mark.django_db
def test_prints_summary_passwords_and_login_url():
    out = _load()
    assert LOGIN_URL in out
    assert "Graded demo: home & garden search" in out
    for account in DEMO_ACCOUNTS:
        assert account.username in out
        assert account.password in out
    assert "demo/qrels-reference.txt" in out


@pytest.mark.django_db
def test_running_twice_changes_nothing():
    _load()
    before = _state()
    out = _load()
    assert _state() == before
    assert "nothing was missing" in out
    assert LOGIN_URL in out  # passwords are printed every time


@pytest.mark.django_db
def test_rerun_adds_what_is_missing_and_restores_passwords():
    _load()
    before = _state()
    Query.objects.filter(collection__slug=DEMO_SLUG, external_id="105").delete()
    judge1 = get_user_model().objects.get(username="judge1")
    judge1.set_password("something-else")
    judge1.save()
    _load()
    after = _state()
    assert after["queries"] == before["queries"]
    assert after["pool"] == before["pool"]
    assert authenticate(username="judge1", password="judge1-demo") is not None


@pytest.mark.django_db
def test_keep_passwords_leaves_changed_password():
    _load()
    judge1 = get_user_model().objects.get(username="judge1")
    judge1.set_password("my-own-password")
    judge1.save()
    _load("--keep-passwords")
    assert authenticate(username="judge1", password="my-own-password") is not None


@pytest.mark.django_db
def test_reset_deletes_judgments_and_restores_a_fresh_collection():
    _load()
    fresh = _state()
    coll = Collection.objects.get(slug=DEMO_SLUG)
    entry = coll.pool_entries.select_related("query", "document").first()
    judge = Judge.objects.get(user__username="judge1")
    services.judgment_record(judge=judge, query=entry.query, document=entry.document, grade=3)
    Document.objects.filter(collection=coll).first().delete()
    coll.name = "Renamed"
    coll.save()

    out = _load("--reset")

    assert "Deleted" in out
    assert _state() == fresh
    assert not Judgment.objects.exists()
    assert not JudgmentEvent.objects.exists()
    assert not PoolEntry.objects.filter(graded_count__gt=0).exists()
    assert Judge.objects.filter(user__username="judge1").exists()  # users and judges stay


@pytest.mark.django_db
def test_refuses_without_debug_unless_forced(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="--force"):
        call_command("load_demo", stdout=io.StringIO())
    assert not Collection.objects.exists()
    settings.DEBUG = True
    call_command("load_demo", stdout=io.StringIO())
    assert Collection.objects.filter(slug=DEMO_SLUG).exists()


def test_reset_option_warns_about_judgments():
    parser = LoadDemoCommand().create_parser("manage.py", "load_demo")
    assert "JUDGMENTS" in parser.format_help()


# --- the run and qrels files --------------------------------------------------------------


def test_run_files_exist():
    assert [p.name for p in RUN_FILES] == [
        "bm25-baseline.txt",
        "dense-retriever.txt",
        "hybrid-reranker.txt",
    ]
    assert QRELS_FILE.exists()
    assert (DEMO_DIR / "README.md").exists()


@pytest.mark.django_db
@pytest.mark.parametrize("path", RUN_FILES, ids=lambda p: p.stem)
def test_run_file_lines_parse_and_name_demo_queries(path):
    _load()
    qids = set(
        Query.objects.filter(collection__slug=DEMO_SLUG).values_list("external_id", flat=True)
    )
    docnos = set(
        Document.objects.filter(collection__slug=DEMO_SLUG).values_list("external_id", flat=True)
    )
    rankings = _read_run(path)
    assert set(rankings) <= qids
    assert len(rankings) == len(qids)
    unknown = set()
    for ranking in rankings.values():
        assert 1 <= len(ranking) <= 100
        assert [rank for _, rank, _ in ranking] == list(range(1, len(ranking) + 1))
        scores = [score for _, _, score in ranking]
        assert scores == sorted(scores, reverse=True)
        assert len({docno for docno, _, _ in ranking}) == len(ranking)
        unknown |= {docno for docno, _, _ in ranking if docno not in docnos}
    assert unknown, "each run shows some documents unknown to the collection"
    assert all(docno.startswith("web-") for docno in unknown)


def test_runs_have_tied_scores():
    for path in RUN_FILES:
        rankings = _read_run(path)
        ties = sum(
            len(scores) - len(set(scores))
            for scores in ([s for _, _, s in r] for r in rankings.values())
        )
        assert ties > 0, path.name


def test_runs_differ_in_quality():
    qrels = _read_qrels()
    p5 = {path.stem: _precision_at_5(_read_run(path), qrels) for path in RUN_FILES}
    assert p5["hybrid-reranker"] > p5["dense-retriever"] > p5["bm25-baseline"]
    assert p5["hybrid-reranker"] - p5["bm25-baseline"] >= 0.1


def test_reference_qrels_span_the_scale_for_every_query():
    qrels = _read_qrels()
    assert len(qrels) == len(demo_content().queries)
    for qid, grades in qrels.items():
        assert set(grades.values()) == {0, 1, 2, 3, 4}, qid


@pytest.mark.django_db
def test_the_seed_pool_is_part_of_the_reference_qrels():
    _load()
    pool = set(
        PoolEntry.objects.filter(collection__slug=DEMO_SLUG).values_list(
            "query__external_id", "document__external_id"
        )
    )
    qrels = {(qid, docno) for qid, grades in _read_qrels().items() for docno in grades}
    assert pool < qrels
    assert len(pool) == SEED_PAIRS_PER_QUERY * len(demo_content().queries)


def test_committed_files_match_the_content():
    for path, text in make_runs.demo_files().items():
        assert path.read_text() == text, (
            f"{path.name} is stale: run `.venv/bin/python -m judging.demo.make_runs`"
        )


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1:8000", "http://127.0.0.1:8000/accounts/login/"),
        ("0.0.0.0:9001", "http://127.0.0.1:9001/accounts/login/"),
        ("localhost:8123", "http://localhost:8123/accounts/login/"),
        ("https://graded.example.org", "https://graded.example.org/accounts/login/"),
        ("9002", "http://127.0.0.1:9002/accounts/login/"),
    ],
)
def test_load_demo_prints_the_url_actually_served(db, settings, host, url):
    out = io.StringIO()
    call_command("load_demo", "--force", "--host", host, stdout=out)
    assert f"log in at {url}" in out.getvalue()
