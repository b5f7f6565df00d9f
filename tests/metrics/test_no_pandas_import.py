"""A run submission's reading path never imports pandas (0.2 s of a fresh worker's time).

pyarrow imports pandas (when installed: crowd-kit needs it) from ``pa.array()``,
``.to_numpy()`` and Python scalars passed to compute functions; the submission path
reads and builds Arrow arrays through their buffers instead. Checked in a fresh
interpreter, since the test process itself may have imported pandas already.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CODE = r"""
import os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
import django
django.setup()
import numpy as np
from metrics.live import scoring
from metrics.live.docno_index import DocnoIndex
from metrics.engine import _strings

content = b"1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n2 Q0 " + b"x" * 501 + b" 1 1.0 r\n"
parsed = scoring.read_run(content, name="r.txt")
problems = scoring.id_problems(parsed, content)
assert problems and problems[0]["line"] == 3, problems
values = parsed.docno_values
hashes = scoring.docno_hashes(values)
order = np.argsort(hashes)
index = DocnoIndex(
    collection_id=1, token=1, max_pk=9, hashes=hashes[order],
    pks=np.arange(len(order), dtype=np.int64)[order] + 10,
    docnos=values.cast(__import__("pyarrow").large_binary()).take(_strings.arrow_ints(order)),
)
assert index.lookup(values).tolist() == [10, 11, 12], index.lookup(values)
assert _strings.int_values(_strings.arrow_ints(np.arange(3, dtype=np.int32))).tolist() == [0, 1, 2]
print("pandas" in sys.modules)
"""


def test_reading_a_run_does_not_import_pandas():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)  # the default SQLite settings: nothing is queried
    out = subprocess.run(
        [sys.executable, "-c", CODE], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
