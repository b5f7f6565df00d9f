"""Start Graded's own processes (Celery workers, gunicorn) for tests and benchmarks.

They run with the production settings, as a deployment would: a strong random
``SECRET_KEY``, the database the caller names (the test database of this pytest worker,
which must be PostgreSQL: SQLite's in-memory test database is not shared between
processes), Redis as broker and a queue of their own, so that no other worker takes the
messages. Nothing here needs a container.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
#: Redis database of the tests that start processes (others use 15).
REDIS_URL = os.environ.get("GRADED_TEST_PROCESS_REDIS_URL", "redis://127.0.0.1:6379/13")


def redis_reachable() -> bool:
    """Return whether Redis answers on its usual address."""
    try:
        with socket.create_connection((REDIS_HOST, REDIS_PORT), timeout=0.5):
            return True
    except OSError:
        return False


def require_services() -> str:
    """Skip (fail on CI without Redis) unless PostgreSQL and Redis are there; return the URL.

    The URL is this test's database, which the started processes share.
    """
    import pytest
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip(
            "needs PostgreSQL: the started processes share the test database, which SQLite's "
            "in-memory test database cannot (CI runs it in the PostgreSQL leg)"
        )
    if not redis_reachable():
        if os.environ.get("CI") == "true":
            pytest.fail("Redis is not reachable on 127.0.0.1:6379; CI must run this test")
        pytest.skip("Redis is not reachable on 127.0.0.1:6379")
    return database_url(connection.settings_dict)


def database_url(settings_dict: dict) -> str:
    """Return the URL of the database Django is connected to (PostgreSQL)."""
    user = settings_dict.get("USER") or "postgres"
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{password}@" if password else f"{user}@"
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"


def free_port() -> int:
    """Return a TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def production_env(db_url: str, **extra: str) -> dict[str, str]:
    """Return the environment of a production process on ``db_url`` with a queue of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.prod",
        SECRET_KEY=secrets.token_urlsafe(60),
        DATABASE_URL=db_url,
        CELERY_BROKER_URL=REDIS_URL,
        CELERY_TASK_DEFAULT_QUEUE=f"graded-test-{uuid.uuid4().hex}",
        GRADED_HTTPS="0",
        GRADED_TLS_PROXY="0",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def start_worker(env: dict[str, str], name: str, log: Path) -> subprocess.Popen:
    """Start one Celery worker process (one task at a time) on the environment's queue."""
    out = log.open("ab")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "-Q",
            env["CELERY_TASK_DEFAULT_QUEUE"],
            "-n",
            f"{name}@%h",
            "--without-gossip",
            "--without-mingle",
            "-l",
            "WARNING",
        ],
        cwd=ROOT,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )


def wait_for_workers(names: list[str], env: dict[str, str], timeout: float = 60.0) -> None:
    """Wait until the workers called ``names`` answer a ping on the environment's broker."""
    from celery import Celery

    app = Celery("graded-test-ping", broker=env["CELERY_BROKER_URL"], set_as_current=False)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            answers = app.control.ping(timeout=1.0) or []
            seen = {name.partition("@")[0] for answer in answers for name in answer}
            if seen >= set(names):
                return
            time.sleep(0.3)
    finally:
        app.close()
    raise TimeoutError(f"Celery workers {names} did not start in {timeout:.0f} s")


def send_task(env: dict[str, str], name: str, *args: object) -> None:
    """Send task ``name`` to the environment's queue, as the web process would."""
    from celery import Celery

    app = Celery("graded-test-send", broker=env["CELERY_BROKER_URL"], set_as_current=False)
    try:
        app.send_task(name, args=list(args), queue=env["CELERY_TASK_DEFAULT_QUEUE"])
    finally:
        app.close()


def stop(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """Stop a process: SIGTERM, then SIGKILL if it does not end in ``timeout`` seconds."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


@contextlib.contextmanager
def workers(env: dict[str, str], count: int, logs: Path) -> Iterator[list[subprocess.Popen]]:
    """Run ``count`` Celery workers for the duration of the block."""
    names = [f"w{i}-{uuid.uuid4().hex[:8]}" for i in range(count)]
    procs = [start_worker(env, name, logs / f"worker{i}.log") for i, name in enumerate(names)]
    try:
        wait_for_workers(names, env)
        yield procs
    finally:
        for proc in procs:
            stop(proc)


def log_tail(path: Path, lines: int = 40) -> str:
    """Return the last lines of a log file (for failure messages)."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def collectstatic(env: dict[str, str], log: Path) -> None:
    """Collect the static files into the environment's ``STATIC_ROOT`` (the manifest)."""
    with log.open("ab") as out:
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=True,
            timeout=120,
        )


def start_gunicorn(
    env: dict[str, str], port: int, log: Path, *, workers: int = 2, threads: int = 2
) -> subprocess.Popen:
    """Start gunicorn serving Graded's WSGI application on 127.0.0.1:``port``."""
    out = log.open("ab")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--access-logfile",
            "-",
        ],
        cwd=ROOT,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )


def wait_for_http(url: str, timeout: float = 60.0) -> None:
    """Wait until ``url`` answers any HTTP status."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=2.0)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer in {timeout:.0f} s")


@contextlib.contextmanager
def deployment(
    tmp_path: Path, *, web_workers: int = 2, threads: int = 2, celery: int = 2, **extra: str
) -> Iterator[tuple[str, dict[str, str]]]:
    """Run gunicorn and ``celery`` Celery workers on this test's database; yield URL and env.

    Production settings with Redis as cache and broker, media and static files under
    ``tmp_path``; ``extra`` adds to the environment. Skips unless PostgreSQL and Redis are
    there (:func:`require_services`).
    """
    env = production_env(
        require_services(),
        CACHE_URL=REDIS_URL,
        MEDIA_ROOT=str(tmp_path / "media"),
        STATIC_ROOT=str(tmp_path / "static"),
        **extra,
    )
    collectstatic(env, tmp_path / "collectstatic.log")
    port = free_port()
    server = start_gunicorn(
        env, port, tmp_path / "gunicorn.log", workers=web_workers, threads=threads
    )
    try:
        with workers(env, celery, tmp_path):
            wait_for_http(f"http://127.0.0.1:{port}/accounts/login/")
            yield f"http://127.0.0.1:{port}", env
    finally:
        stop(server)
