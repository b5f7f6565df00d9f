"""``manage.py pooling_simulate`` from files: the table, the plot and its errors (no database)."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from metrics.pool.strategies import STRATEGIES


@pytest.fixture
def files(tmp_path):
    """Write qrels and five runs of falling quality (run0 best); return their paths."""
    rng = np.random.default_rng(11)
    qrels_lines, runs = [], {f"run{r}": [] for r in range(5)}
    for q in range(6):
        grades = rng.choice(5, 40, p=[0.6, 0.15, 0.1, 0.1, 0.05])
        qrels_lines += [f"q{q} 0 d{x} {g}" for x, g in enumerate(grades)]
        for r, lines in enumerate(runs.values()):
            score = grades + rng.normal(0, 0.5 + r, 40)
            for rank, x in enumerate(np.argsort(-score)[:15]):
                lines.append(f"q{q} Q0 d{x} {rank + 1} {100 - rank} run{r}")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels_lines) + "\n")
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, lines in runs.items():
        (folder / f"{name}.txt").write_text("\n".join(lines) + "\n")
    return tmp_path / "qrels.txt", folder


def _run(*args: object) -> str:
    out = io.StringIO()
    call_command("pooling_simulate", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def test_every_strategy_reports_its_steps_and_converges_on_the_whole_pool(files, tmp_path):
    qrels, folder = files
    plot = tmp_path / "tau.svg"
    text = _run(qrels, folder, "--budget", 1000, "--step", 30, "--depth", 15, "--plot", plot)
    lines = text.splitlines()
    assert lines[0].startswith("5 runs, 6 queries, ")
    pooled = int(lines[0].split(", ")[2].split()[0])
    rows = [line.split("\t") for line in lines[2:] if line.count("\t") == 4]
    for name in STRATEGIES:
        mine = [r for r in rows if r[0] == name]
        assert [int(r[1]) for r in mine[:3]] == [0, 30, 60]
        assert int(mine[-1][1]) == pooled  # the budget outlasts the pool
        assert float(mine[-1][3]) == pytest.approx(1.0)  # every pooled pair judged
        assert f"  {name}: " in text
    root = ET.fromstring(plot.read_text())
    assert len(root.findall("{http://www.w3.org/2000/svg}polyline")) == len(STRATEGIES)


def test_one_strategy_with_a_small_budget(files):
    qrels, folder = files
    text = _run(qrels, folder, "--strategy", "mtf", "--budget", 20, "--step", 10)
    rows = [line.split("\t") for line in text.splitlines() if line.startswith("mtf\t")]
    assert [int(r[1]) for r in rows] == [0, 10, 20]
    assert int(rows[-1][2]) <= 20


def test_bad_input_is_a_clear_error(files, tmp_path):
    qrels, folder = files
    with pytest.raises(CommandError, match="not a folder"):
        _run(qrels, tmp_path / "missing")
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    (lonely / "one.txt").write_text("q0 Q0 d1 1 1 r\n")
    with pytest.raises(CommandError, match="at least two run files"):
        _run(qrels, lonely)
    with pytest.raises(CommandError, match="--measure"):
        _run(qrels, folder, "--measure", "nonsense@@")
    (folder / "broken.txt").write_text("q0 Q0 d1 1 high r\n")
    with pytest.raises(CommandError, match=r"broken\.txt"):
        _run(qrels, folder)


def test_manage_py_runs_it_without_settings_or_a_database(files):
    """Issue 34, item 7: the README's command works with no DJANGO_SETTINGS_MODULE set.

    ``manage.py`` defaults to the production settings, which need a SECRET_KEY; replaying
    pooling reads files only, so it runs without settings, as ``evaluate`` does.
    """
    import os
    import subprocess
    import sys
    from pathlib import Path

    qrels, runs = files
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "SECRET_KEY"}}
    env["DATABASE_URL"] = "postgres://nobody:x@127.0.0.1:9/nowhere"  # any access would fail
    root = Path(__file__).resolve().parents[3]
    argv = [sys.executable, "manage.py", "pooling_simulate", str(qrels), str(runs)]
    done = subprocess.run(
        [*argv, "--strategy", "depth", "--budget", "20", "--step", "10"],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "judgments to reach tau >= 0.9" in done.stdout
    bad = subprocess.run(
        [*argv[:3], "/no/such/qrels", str(runs)],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        timeout=300,
    )
    assert bad.returncode == 1 and "CommandError: /no/such/qrels" in bad.stderr


def test_help_names_the_recommended_strategy_and_explains_every_option():
    from metrics.management.commands.pooling_simulate import Command
    from metrics.pool.strategies import RECOMMENDED

    parser = Command().create_parser("manage.py", "pooling_simulate")
    text = parser.format_help()
    assert f"Recommended when unsure: {RECOMMENDED}" in text
    own = [a for a in parser._actions if a.dest not in _DJANGO_OPTIONS]
    assert {a.dest for a in own} >= {"qrels", "run_dir", "strategy", "budget", "step"}
    for action in own:
        assert action.help and len(action.help) > 15, action.dest
        assert action.help in text or action.help.split()[0] in text
    # the defaults the help states are the defaults the command uses
    for dest, default in {"budget": 1000, "step": 100, "depth": 100, "cutoff": 10}.items():
        action = next(a for a in own if a.dest == dest)
        assert action.default == default and f"default {default}" in action.help


#: Options every Django command has (their help is Django's).
_DJANGO_OPTIONS = {
    "help",
    "version",
    "verbosity",
    "settings",
    "pythonpath",
    "traceback",
    "no_color",
    "force_color",
    "skip_checks",
}
