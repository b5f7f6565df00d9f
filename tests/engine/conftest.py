"""Fixtures of the engine tests: the real C trec_eval 10.0, built once per session.

The source is looked up, in this order, at ``$GRADED_TREC_EVAL_SRC`` and at
``<repo>/../shared/reference/trec_eval`` (where CI keeps it, beside a fresh clone).
It is copied to a temporary directory, its two print files are patched to print
``%.17g`` instead of ``%6.4f`` (see ``shared/reference/README.md``), and it is built
with ``make``.  Tests that need it are skipped, with the reason, when the source is
absent; when the source is there but does not build they fail under ``CI=true``
(CI must run them) and are skipped with the compiler's message elsewhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PRINT_FILES = ("meas_print_final.c", "meas_print_single.c")


def trec_eval_source() -> tuple[Path | None, str]:
    """Return (the trec_eval source directory or None, where it was looked for)."""
    env = os.environ.get("GRADED_TREC_EVAL_SRC")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "reference" / "trec_eval")
    for path in candidates:
        if (path / "trec_eval.c").is_file():
            return path, str(path)
    return None, " or ".join(str(p) for p in candidates)


def _build(src: Path, dest: Path) -> Path:
    """Copy, patch to full precision and build trec_eval in ``dest``; return the binary."""
    shutil.copytree(src, dest, dirs_exist_ok=True)
    for name in PRINT_FILES:
        path = dest / name
        text = path.read_text()
        if "%6.4f" not in text:
            raise RuntimeError(f"{name} has no %6.4f to patch: not trec_eval 10.0's source")
        path.write_text(text.replace("%6.4f", "%.17g"))
    proc = subprocess.run(
        ["make", "-s", "trec_eval"], cwd=dest, capture_output=True, text=True, timeout=300
    )
    binary = dest / "trec_eval"
    if proc.returncode or not binary.is_file():
        raise RuntimeError(f"make failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return binary


@pytest.fixture(scope="session")
def trec_eval_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return the path of a full-precision trec_eval 10.0 binary built for this session."""
    src, looked = trec_eval_source()
    if src is None:
        pytest.skip(f"trec_eval source not found (looked at {looked}; set GRADED_TREC_EVAL_SRC)")
    try:
        return _build(src, tmp_path_factory.mktemp("trec_eval"))
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        message = f"cannot build trec_eval from {src}: {exc}"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
