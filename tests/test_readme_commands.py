"""Every command the README shows runs as written on a fresh clone (issue 34).

The README's shell commands are its fenced ``sh`` blocks, one command a line. They run in
order, with ``bash``, in a copy of the repository's tracked files (a fresh clone) whose
``.venv`` is the virtual environment running these tests, without any Graded setting in
the environment (no ``DJANGO_SETTINGS_MODULE``, ``DATABASE_URL``, ``SECRET_KEY``…), so
the copy uses its own SQLite file as a new user's would. Two are checked differently:

* ``make run`` serves until stopped: it runs for real (migrate, collectstatic, the demo,
  ``runserver``) on a free port (``HOST=``, the README's own option) until the login page
  answers, then it is stopped. Make is told not to reinstall the environment (``-o
  .venv/.runtime -o .venv/.installed``): the tests run without network access, from an
  installed venv. Its last lines are the address and the demo accounts, and it installs
  the runtime only (``make -n -W pyproject.toml run``: no test extras).
* ``make test`` is this suite: ``make -n`` shows that it runs ruff and pytest.

``make …`` variants the README names inline (``make run HOST=…``) are checked with
``make -n``. The commands after ``make run`` use the database it set up, in the order the
README gives them.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: Settings a developer's shell or the test run may hold, which a fresh clone has not.
UNSET = (
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "SECRET_KEY",
    "MEDIA_ROOT",
    "STATIC_ROOT",
    "CELERY_BROKER_URL",
    "CACHE_URL",
    "ALLOWED_HOSTS",
    "GRADED_DOCNO_INDEX_DIR",
)


def readme_commands(text: str) -> list[str]:
    """Return the commands of the README's ``sh`` blocks, in order, without comments."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            command = re.sub(r"\s+#\s.*$", "", line).strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def inline_make_commands(text: str) -> list[str]:
    """Return the ``make …`` commands the README shows in running text (not in blocks)."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    found = []
    for span in re.findall(r"`([^`\n]+)`", prose):
        words = shlex.split(span)
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            words.pop(0)  # VAR=value before the command
        if words and words[0] == "make":
            found.append(span)
    return found


def test_the_readme_starts_with_the_two_commands():
    """``make run`` and ``make test`` come first, before anything else."""
    text = README.read_text()
    first = re.search(r"^```sh\n(.*?)^```", text, re.S | re.M)
    assert first is not None and text.index("```sh") < text.index("\n## ")
    assert [line.split("#")[0].strip() for line in first.group(1).splitlines()] == [
        "make run",
        "make test",
    ]


def test_the_commands_are_found():
    """The extraction finds the README's commands (a check that could not fail is none)."""
    commands = readme_commands(README.read_text())
    assert commands[:2] == ["make run", "make test"]
    assert any("manage.py pooling_simulate" in c for c in commands)
    assert any("manage.py evaluate" in c for c in commands)
    assert readme_commands("```sh\nls -l  # list\n# only a comment\n```\n") == ["ls -l"]
    assert inline_make_commands("Try `A=1 make run HOST=x` or `ls`.") == ["A=1 make run HOST=x"]


def _fresh_copy(target: Path) -> Path:
    """Copy the repository's tracked files (and the built C extension) to ``target``."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("needs a git checkout to know which files a fresh clone has")
    for name in listed.stdout.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    for built in (ROOT / "metrics" / "engine").glob("_ctrec*.so"):  # what make install builds
        shutil.copy2(built, target / "metrics" / "engine" / built.name)
    (target / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return target


#: Make flags that keep the test's venv as it is (no network, no reinstall into it).
NO_INSTALL = ("-o", ".venv/.runtime", "-o", ".venv/.installed")


def test_make_run_installs_the_runtime_only():
    dry = subprocess.run(
        ["make", "-n", "-W", "pyproject.toml", "run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert dry.returncode == 0, dry.stderr
    installs = [line for line in dry.stdout.splitlines() if "uv pip install" in line]
    assert installs and all("[test]" not in line for line in installs), dry.stdout
    assert any(line.rstrip().endswith("-e .") for line in installs), installs


def _env() -> dict[str, str]:
    """Return this process's environment without Graded's settings and pytest's."""
    return {k: v for k, v in os.environ.items() if k not in UNSET and not k.startswith("PYTEST_")}


def _make_run(copy: Path, env: dict[str, str], log: Path) -> None:
    """Run ``make run`` until its server answers on a free port, then stop it."""
    import httpx

    port = free_port()
    with log.open("w") as out:
        server = subprocess.Popen(
            ["make", *NO_INSTALL, "run", f"HOST=127.0.0.1:{port}"],
            cwd=copy,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 420
        while True:
            assert server.poll() is None, log.read_text()[-3000:]
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/accounts/login/", timeout=5)
            except httpx.TransportError:
                page = None
            if page is not None:
                assert page.status_code == 200, page.text[:500]
                break
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(1)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    printed = log.read_text()
    # the address and the accounts come last, after Django's banner
    lines = [line for line in printed.splitlines() if line.strip()]
    ready = f"Graded is ready: open http://127.0.0.1:{port}/"
    assert ready in lines, printed[-3000:]
    last = lines.index(ready)
    assert any("Starting development server" in line for line in lines[:last]), printed[-3000:]
    accounts = lines[last - 4 : last]
    assert [line.split()[:3] for line in accounts] == [
        ["coordinator", "password", "coordinator-demo"],
        ["judge1", "password", "judge1-demo"],
        ["judge2", "password", "judge2-demo"],
        ["team1", "password", "team1-demo"],
    ], printed[-3000:]
    assert all("GET /accounts/login/" in line for line in lines[last + 1 :]), lines[last + 1 :]


@pytest.mark.timeout(1200)
def test_every_readme_command_runs_as_written_on_a_fresh_clone(tmp_path):
    text = README.read_text()
    commands = readme_commands(text)
    copy = _fresh_copy(tmp_path / "graded")
    env = _env()
    assert commands[0] == "make run"
    _make_run(copy, env, tmp_path / "make-run.log")
    assert (copy / "db.sqlite3").exists()  # a new user's SQLite database
    dry = subprocess.run(
        ["make", "-n", *NO_INSTALL, "test"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert dry.returncode == 0, dry.stderr
    for step in ("ruff check", "ruff format --check", "-m pytest"):
        assert step in dry.stdout, dry.stdout
    for command in commands[2:]:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    for command in inline_make_commands(text):
        words = shlex.split(command)
        assigns = {}
        while re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            name, _, value = words.pop(0).partition("=")
            assigns[name] = value
        dry = subprocess.run(
            [words[0], "-n", *NO_INSTALL, *words[1:]],
            cwd=copy,
            env={**env, **assigns},
            capture_output=True,
            text=True,
            check=False,
        )
        assert dry.returncode == 0, f"{command}\n{dry.stderr}"
