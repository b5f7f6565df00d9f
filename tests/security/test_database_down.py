"""Issue 45 item 5: a database that does not answer is a 503 with ``Retry-After``, not a 500.

In process (both databases): the connection is made unopenable, as when PostgreSQL
refuses connections, and the API (valid token included), a page, a write and the log are
checked. Over HTTP (PostgreSQL only): gunicorn with the production settings reaches the
test database through a TCP proxy that the test takes down and brings back, so the
outage, its one log line, and the recovery are those of a real deployment.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.db import DatabaseError, IntegrityError, OperationalError, connection
from django.test import Client, RequestFactory
from rest_framework.authtoken.models import Token

from config import outage
from judging.models import Collection, Membership
from tests import factories, processes
from tests.api_client import client_for, errors_of


def _driver_refusal() -> Exception:
    """Return what the database driver raises when the server refuses the connection."""
    if connection.vendor == "postgresql":
        import psycopg

        return psycopg.OperationalError(
            'connection failed: connection to server at "127.0.0.1", port 5432 failed: '
            "Connection refused"
        )
    return sqlite3.OperationalError("unable to open database file")


@contextlib.contextmanager
def _down(monkeypatch) -> Iterator[None]:
    """Make the connection unopenable for the block, then give the open one back."""
    connection.ensure_connection()
    # connect() starts by resetting the transaction state: keep the test's atomic blocks
    kept = {name: getattr(connection, name) for name in _STATE}
    kept["atomic_blocks"] = list(kept["atomic_blocks"])
    kept["savepoint_ids"] = list(kept["savepoint_ids"])
    refusal = _driver_refusal()

    def refuse(*args, **kwargs):
        raise refusal

    monkeypatch.setattr(connection, "get_new_connection", refuse)
    connection.connection = None
    outage.OUTAGE.since = None
    try:
        yield
    finally:
        monkeypatch.undo()
        for name, value in kept.items():
            setattr(connection, name, value)
        outage.OUTAGE.since = None


_STATE = (
    "connection",
    "in_atomic_block",
    "savepoint_ids",
    "atomic_blocks",
    "needs_rollback",
    "savepoint_state",
    "commit_on_exit",
    "closed_in_transaction",
    "errors_occurred",
    "close_at",
)


@pytest.fixture
def member(db):
    """A collection, its coordinator, a client with a valid token, a signed-in page client."""
    coll = factories.collection("down")
    usr = factories.user("coordinator-down")
    factories.member(coll, usr, Membership.Role.COORDINATOR)
    pages = Client()
    pages.force_login(usr)
    return coll, usr, client_for(usr), pages


def _warnings(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_the_api_answers_503_in_its_error_shape_with_retry_after(member, monkeypatch):
    coll, _, api, _ = member
    paths = ("/api/v1/collections/", f"/api/v1/collections/{coll.slug}/", "/api/v1/judges/")
    with _down(monkeypatch):
        answers = [api.get(path) for path in paths]
    for response in answers:
        assert response.status_code == 503, response.content[:300]
        assert response["Retry-After"] == str(outage.RETRY_AFTER)
        assert response["Content-Type"] == "application/json"
        [item] = errors_of(response)
        assert item["code"] == "database_unavailable"
        assert "temporarily unavailable" in item["message"]


def test_a_page_answers_a_plain_503_page(member, monkeypatch):
    coll, _, _, pages = member
    assert pages.get(f"/c/{coll.slug}/").status_code == 200
    anonymous = Client()
    anonymous.cookies["sessionid"] = "a-session-only-the-database-knows"
    with _down(monkeypatch):
        answers = [pages.get(p) for p in ("/", f"/c/{coll.slug}/", "/accounts/profile/")]
        answers.append(anonymous.get("/"))
    for response in answers:
        assert response.status_code == 503, response.status_code
        assert response["Retry-After"] == str(outage.RETRY_AFTER)
        assert response["Content-Type"].startswith("text/html")
        page = response.content.decode()
        assert "Temporarily unavailable" in page and "Server Error" not in page


def test_a_write_while_down_writes_nothing(member, monkeypatch):
    _, _, api, _ = member
    before = Collection.objects.count()
    with _down(monkeypatch):
        response = api.post("/api/v1/collections/", {"name": "New", "slug": "new"}, format="json")
    assert response.status_code == 503
    assert Collection.objects.count() == before


def test_one_log_line_per_outage_and_no_traceback(member, monkeypatch, caplog):
    _, _, api, pages = member
    caplog.set_level(logging.INFO)
    with _down(monkeypatch):
        for _ in range(25):
            assert api.get("/api/v1/collections/").status_code == 503
            assert pages.get("/").status_code == 503
        refused = outage.OUTAGE.refused
    records = _warnings(caplog)
    assert [r.name for r in records] == ["graded.outage"], [r.getMessage() for r in records]
    assert records[0].getMessage().startswith("Database unavailable, answering 503")
    assert not any(r.exc_info for r in caplog.records)  # no traceback, no per-request line
    assert refused == 50


def test_the_outage_ends_with_one_line_once_a_request_reaches_the_database(member, caplog):
    coll, _, _, pages = member
    outage.OUTAGE.since = None
    for _ in range(2):
        outage.OUTAGE.refuse(OperationalError("connection refused"))
    caplog.clear()
    caplog.set_level(logging.INFO)
    assert pages.get(f"/c/{coll.slug}/").status_code == 200
    messages = [r.getMessage() for r in _warnings(caplog)]
    assert messages == ["Database available again after 0 s; 2 requests were answered 503."]
    assert outage.OUTAGE.since is None
    assert pages.get(f"/c/{coll.slug}/").status_code == 200
    assert len(_warnings(caplog)) == 1  # nothing more while it stays up


def test_an_error_on_a_live_connection_is_not_an_outage(db):
    connection.ensure_connection()
    assert connection.connection is not None
    for error in (
        OperationalError("database is locked"),
        IntegrityError("duplicate key"),
        DatabaseError("syntax error"),
        ValueError("not a database error"),
    ):
        assert not outage.connection_lost(error)
        request = RequestFactory().get("/api/v1/collections/")
        assert (
            outage.DatabaseOutageMiddleware(lambda r: None).process_exception(request, error)
            is None
        )  # Django's 500 handling (and its traceback in the log) applies


def test_the_schema_documents_the_503(db):
    from tests.api_client import clean_schema

    schema = clean_schema()
    operation = schema["paths"]["/api/v1/collections/"]["get"]
    answer = operation["responses"]["503"]
    assert "Retry-After" in answer["headers"]
    assert "database_unavailable" in answer["description"]


# --- over HTTP, against real PostgreSQL through a proxy that goes down ---------------------


class _Proxy:
    """A TCP proxy to PostgreSQL that can refuse connections and drop the open ones."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = processes.free_port()
        self._listener: socket.socket | None = None
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        """Refuse new connections (nothing listens) and cut every open one."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):  # wakes the accept() blocked on it
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.close()


@pytest.mark.django_db(transaction=True)
def test_gunicorn_answers_503_while_postgresql_is_unreachable_and_recovers(tmp_path: Path):
    url = processes.require_services()
    settings_dict = connection.settings_dict
    proxy = _Proxy(
        (settings_dict.get("HOST") or "127.0.0.1", int(settings_dict.get("PORT") or 5432))
    )
    proxy.up()
    usr = factories.user("outage-coordinator")
    coll = factories.collection("outage")
    factories.member(coll, usr, Membership.Role.COORDINATOR)
    key = Token.objects.create(user=usr).key
    proxied = url.replace(
        f"{settings_dict.get('HOST') or '127.0.0.1'}:{settings_dict.get('PORT') or 5432}",
        f"127.0.0.1:{proxy.port}",
    )
    env = processes.production_env(
        proxied,
        MEDIA_ROOT=str(tmp_path / "media"),
        STATIC_ROOT=str(tmp_path / "static"),
        DB_CONNECT_TIMEOUT="2",
    )
    processes.collectstatic(env, tmp_path / "collectstatic.log")
    port = processes.free_port()
    log = tmp_path / "gunicorn.log"
    server = processes.start_gunicorn(env, port, log, workers=1, threads=2)
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Token {key}"}
    try:
        processes.wait_for_http(f"{base}/accounts/login/")
        with httpx.Client(base_url=base, timeout=30.0) as http:
            assert http.get("/api/v1/collections/", headers=headers).status_code == 200
            proxy.down()
            answers = []
            pages = httpx.Client(base_url=base, timeout=30.0, cookies={"sessionid": "s" * 32})
            for _ in range(10):
                answers.append(http.get("/api/v1/collections/", headers=headers))
                answers.append(pages.get(f"/c/{coll.slug}/"))
            pages.close()
            assert http.get("/healthz").status_code == 503
            for response in answers:
                assert response.status_code == 503, (response.request.url, response.text[:300])
                assert response.headers["Retry-After"] == str(outage.RETRY_AFTER)
            api = answers[0].json()
            assert api == {"errors": [{"message": outage.MESSAGE, "code": outage.CODE}]}
            assert "Temporarily unavailable" in answers[1].text
            proxy.up()
            assert http.get("/api/v1/collections/", headers=headers).status_code == 200
    finally:
        proxy.down()
        processes.stop(server)
    text = log.read_text(errors="replace")
    assert text.count("Database unavailable, answering 503") == 1, processes.log_tail(log)
    assert text.count("Database available again after") == 1, processes.log_tail(log)
    assert "20 requests were answered 503" in text, processes.log_tail(log)
    assert "Traceback" not in text and "Internal Server Error" not in text, text[-3000:]
