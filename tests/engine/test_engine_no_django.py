"""The engine is pure: importing any of its modules must not import Django."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import metrics.engine

ROOT = Path(__file__).resolve().parents[2]


def test_no_module_imports_django():
    names = [
        m.name
        for m in pkgutil.iter_modules(metrics.engine.__path__, "metrics.engine.")
        if not m.name.endswith("__main__")  # importing it runs the command line
    ]
    assert "metrics.engine.core" in names and "metrics.engine.io" in names
    code = (
        "import importlib, json, sys\n"
        f"names = {names!r}\n"
        "bad = {}\n"
        "for n in names:\n"
        "    importlib.import_module(n)\n"
        "    if 'django' in sys.modules:\n"
        "        bad[n] = True\n"
        "        break\n"
        "print(json.dumps({'django': 'django' in sys.modules, 'bad': list(bad)}))\n"
    )
    env_free = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env_free
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result == {"django": False, "bad": []}


def test_evaluating_imports_neither_django_nor_pandas(tmp_path):
    # pyarrow imports pandas (200 ms, 40 MB) behind pa.array() and .to_numpy(): avoided.
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2.0 t\n1 Q0 c 2 1.0 t\n")
    code = (
        "import sys\n"
        "from metrics.engine import evaluate, Run, Qrels\n"
        f"res = evaluate({str(tmp_path / 'q')!r}, {str(tmp_path / 'r')!r}, ['map', 'P@1'])\n"
        "Run.from_arrays(['1'], ['a'], [1.0]); Qrels.from_arrays(['1'], ['a'], [1])\n"
        "print(sorted(m for m in ('django', 'pandas') if m in sys.modules), res.value('map'))\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "1.0"]


def test_no_django_import_statement_in_sources():
    for path in Path(metrics.engine.__file__).parent.glob("*.py"):
        text = path.read_text()
        assert "import django" not in text and "from django" not in text, path.name
