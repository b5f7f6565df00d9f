"""CI runs the db-free tests once: the split is right and a db-free test cannot touch a database.

See tests/dbfree.py: in the PostgreSQL leg tests/conftest.py deselects every test that asks
for no database; in the SQLite leg those tests run under a guard that fails them if they open
a cursor.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import connection

from tests import dbfree

ROOT = Path(__file__).resolve().parents[1]
# What makes a db-free test's outcome depend on the leg: it reads the database URL (often to
# pass it to a child process) or branches on the configured backend.
LEG_SENSITIVE = re.compile(r"DATABASE_URL|connection\.vendor|settings\.DATABASES")


def _by_nodeid(request: pytest.FixtureRequest) -> dict[str, pytest.Item]:
    return {item.nodeid: item for item in request.session.items}


def test_every_leg_sensitive_db_free_test_is_marked_or_reviewed(request):
    """A db-free test in a module that reads the URL or vendor runs in both legs or is vetted."""
    unvetted = []
    for item in request.session.items:
        path = Path(str(item.path)).resolve()
        rel = path.relative_to(ROOT).as_posix()
        if rel in dbfree.LEG_INDEPENDENT_MODULES or not dbfree.runs_once(item):
            continue
        if LEG_SENSITIVE.search(path.read_text()):
            unvetted.append(item.nodeid)
    assert unvetted == [], (
        "these tests ask for no database (so run on SQLite only) but their module reads the "
        "database URL or vendor: mark them @pytest.mark.both_databases, or list the module in "
        f"tests/dbfree.py's LEG_INDEPENDENT_MODULES with the reason: {unvetted}"
    )


def test_every_reviewed_module_exists_and_reads_the_url_or_vendor():
    """The reviewed list names only real modules that do mention the URL or the vendor."""
    for rel in dbfree.LEG_INDEPENDENT_MODULES:
        text = (ROOT / rel).read_text()
        assert LEG_SENSITIVE.search(text), f"{rel} no longer needs its LEG_INDEPENDENT entry"


def test_the_split_classifies_db_tests_and_db_free_tests(request):
    """Tests with db fixtures, the django_db mark or a live server run in both legs."""
    items = _by_nodeid(request)
    this = items[request.node.nodeid]
    assert dbfree.runs_once(this)  # this test asks for no database
    kinds = {"db": 0, "mark": 0, "live_server": 0, "free": 0}
    for item in items.values():
        names = set(getattr(item, "fixturenames", ()))
        if "live_server" in names:  # counted whether or not it also has the mark
            kinds["live_server"] += 1
            assert not dbfree.runs_once(item), item.nodeid
        if item.get_closest_marker("django_db"):
            kinds["mark"] += 1
            assert not dbfree.runs_once(item), item.nodeid
        elif "live_server" in names:
            pass
        elif "db" in names or "transactional_db" in names:
            kinds["db"] += 1
            assert not dbfree.runs_once(item), item.nodeid
        elif item.get_closest_marker("both_databases") is None:
            kinds["free"] += 1
            assert dbfree.runs_once(item), item.nodeid
    if len(items) > 1000 and kinds["db"]:  # the whole suite was collected: every kind
        assert all(kinds.values()), kinds


def test_engine_tests_are_db_free_and_api_tests_are_not(request):
    """The pure engine tests run once; an API test that writes runs on both databases."""
    items = request.session.items
    engine = [i for i in items if i.nodeid.startswith("tests/engine/")]
    api = [i for i in items if i.nodeid.startswith("tests/judging/api/")]
    if not engine or all(dbfree.runs_once(i) for i in api):
        pytest.skip("run with the whole suite (tests/engine and tests/judging/api collected)")
    assert all(dbfree.runs_once(i) for i in engine)
    assert any(not dbfree.runs_once(i) for i in api)


@pytest.mark.both_databases
def test_the_guard_records_a_cursor_even_when_the_error_is_swallowed(request):
    """A db-free test that catches pytest-django's refusal is still caught by the guard."""
    refused = pytest.raises(RuntimeError, match="Database access not allowed")
    with dbfree.guard(request.node) as attempts, refused:
        connection.cursor()
    assert [a.split()[0] for a in attempts] == ["default"]
    message = dbfree.touched_message(request.node, attempts)
    assert request.node.nodeid in message and "db fixture" in message


@pytest.mark.django_db
def test_the_guard_records_cursors_of_a_test_with_a_database(request):
    """The guard records real queries too and puts the original cursor method back."""
    from django.db.backends.base.base import BaseDatabaseWrapper

    before = BaseDatabaseWrapper._cursor
    with dbfree.guard(request.node) as attempts, connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone()[0] == 1
    assert attempts == [f"default ({connection.vendor})"]
    assert BaseDatabaseWrapper._cursor is before


def test_the_postgresql_leg_leaves_db_free_tests_out(request):
    """With PostgreSQL configured, no collected test is db-free (unless the split is off)."""
    if not (dbfree.on_postgres() and dbfree.split_enabled()):
        assert dbfree.runs_once(request.node)
        return
    pytest.fail("a db-free test was collected in the PostgreSQL leg")  # pragma: no cover


@pytest.mark.django_db
def test_browser_tests_run_in_the_sqlite_leg_only_and_the_rest_in_both(request):
    """A browser test with a database is the browser leg's; a db test elsewhere runs twice.

    In the PostgreSQL leg (split on) no browser test is collected unless it is marked.
    """
    items = request.session.items
    this = _by_nodeid(request)[request.node.nodeid]
    assert not dbfree.sqlite_leg_only(this)  # a db test outside tests/browser/: both legs
    browser = [i for i in items if i.nodeid.startswith("tests/browser/")]
    for item in browser:
        marked = item.get_closest_marker("both_databases") is not None
        assert dbfree.sqlite_leg_only(item) is not marked, item.nodeid
    if dbfree.on_postgres() and dbfree.split_enabled():
        assert all(i.get_closest_marker("both_databases") for i in browser), [
            i.nodeid for i in browser
        ]
    elif browser:  # on SQLite (or with the split off) the collected browser tests run
        assert any(dbfree.uses_database(i) for i in browser)
