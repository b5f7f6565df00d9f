"""Uniform wrappers around the evaluators the benchmarks compare.

Each adapter exposes ``load_qrels(path)``, ``load_run(path)``,
``evaluate(qrels, run, measures)`` and ``means(result, measures)`` (the mean of
each measure over the queries, for cross-checking that the tools agree).  Loading
a tool never raises: an adapter that cannot be used has ``available = False`` and
a ``reason``.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

NDCG10 = "ndcg_cut.10"
FOURTEEN = (
    "ndcg",
    "ndcg_cut.10",
    "map",
    "map_cut.10",
    "P.10",
    "recall.10",
    "recip_rank",
    "Rprec",
    "bpref",
    "success.10",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


class Adapter:
    """Base class: a tool that can load TREC files and evaluate measures."""

    name = "?"
    available = False
    reason = ""

    def load_qrels(self, path: Path) -> Any:
        """Parse a qrels file."""
        raise NotImplementedError

    def load_run(self, path: Path) -> Any:
        """Parse a run file."""
        raise NotImplementedError

    def evaluate(self, qrels: Any, run: Any, measures: Sequence[str]) -> Any:
        """Evaluate ``measures`` for one run."""
        raise NotImplementedError

    def means(self, result: Any, measures: Sequence[str]) -> dict[str, float]:
        """Return the mean over queries of each measure in ``result``."""
        raise NotImplementedError


class PytrecEval(Adapter):
    """pytrec_eval in-process, the way its README shows: parse to dicts, evaluate."""

    name = "pytrec_eval"

    def __init__(self) -> None:
        """Import pytrec_eval if installed."""
        try:
            self.mod = importlib.import_module("pytrec_eval")
            self.available = True
        except ImportError as exc:
            self.reason = f"not installed ({exc})"

    def load_qrels(self, path: Path) -> Any:
        """Parse qrels with ``pytrec_eval.parse_qrel``."""
        with open(path) as f:
            return self.mod.parse_qrel(f)

    def load_run(self, path: Path) -> Any:
        """Parse a run with ``pytrec_eval.parse_run``."""
        with open(path) as f:
            return self.mod.parse_run(f)

    def evaluate(self, qrels: Any, run: Any, measures: Sequence[str]) -> Any:
        """Build a ``RelevanceEvaluator`` and evaluate (both are timed)."""
        return self.mod.RelevanceEvaluator(qrels, set(measures)).evaluate(run)

    def means(self, result: Any, measures: Sequence[str]) -> dict[str, float]:
        """Average pytrec_eval's ``{qid: {"ndcg_cut_10": v}}`` result."""
        rows = list(result.values())
        return {m: _mean([r[m.replace(".", "_")] for r in rows]) for m in measures}


class Ranx(Adapter):
    """ranx (numba): ``Qrels.from_file``, ``Run.from_file``, ``evaluate``."""

    name = "ranx"
    METRICS: Mapping[str, str] = {"ndcg_cut.10": "ndcg@10"}

    def __init__(self) -> None:
        """Import ranx if installed (its import alone takes seconds: numba)."""
        try:
            self.mod = importlib.import_module("ranx")
            self.available = True
        except ImportError as exc:
            self.reason = f"not installed ({exc})"

    def load_qrels(self, path: Path) -> Any:
        """Parse qrels with ``ranx.Qrels.from_file``."""
        return self.mod.Qrels.from_file(str(path), kind="trec")

    def load_run(self, path: Path) -> Any:
        """Parse a run with ``ranx.Run.from_file``."""
        return self.mod.Run.from_file(str(path), kind="trec")

    def evaluate(self, qrels: Any, run: Any, measures: Sequence[str]) -> Any:
        """Return ranx's mean scores (``return_mean=True``)."""
        metrics = [self.METRICS[m] for m in measures]
        out = self.mod.evaluate(qrels, run, metrics)
        return out if isinstance(out, dict) else {metrics[0]: out}

    def means(self, result: Any, measures: Sequence[str]) -> dict[str, float]:
        """Map ranx's metric names back."""
        return {m: float(result[self.METRICS[m]]) for m in measures}


class Engine(Adapter):
    """Graded's engine, ``metrics.engine`` (its file-level API).

    ``reader`` is passed to ``read_run``/``read_qrels``: ``"auto"`` (the default, what
    ``manage.py evaluate`` and the web app use: the C reader when it is built),
    ``"c"``, ``"numpy"`` or ``"arrow"`` (Arrow's multithreaded reader; pyarrow is
    imported once here, as in the web app).  Explicit readers let one benchmark
    process time each of them.
    """

    name = "engine"

    def __init__(self, reader: str = "auto") -> None:
        """Import ``metrics.engine`` and look up its file-level API."""
        self.reader = reader
        try:
            self.mod = importlib.import_module("metrics.engine")
            if reader == "arrow":
                importlib.import_module("pyarrow.csv")  # imported once, as in the web app
        except Exception as exc:  # any failure means "not available"
            self.reason = f"import failed: {type(exc).__name__}: {exc}"
            return
        self.resolved = reader
        if reader == "auto":
            try:
                pick = importlib.import_module("metrics.engine.io")._pick_reader
                self.resolved = pick("auto")
            except Exception:
                self.resolved = "?"
            self.name = f"engine (default: {self.resolved} reader)"
        else:
            self.name = f"engine ({reader} reader)"
        if reader == "c":
            creader = importlib.import_module("metrics.engine._creader")
            if not creader.AVAILABLE:
                self.reason = f"C reader {creader.WHY_NOT}"
                return
        missing = [f for f in ("read_qrels", "read_run", "evaluate") if not hasattr(self.mod, f)]
        if missing:
            self.reason = f"metrics.engine has no {', '.join(missing)}"
            return
        self.available = True
        self.has_many = hasattr(self.mod, "evaluate_many")

    def load_qrels(self, path: Path) -> Any:
        """Parse qrels with ``metrics.engine.read_qrels``."""
        return self.mod.read_qrels(path, **self._reader_kw())

    def load_run(self, path: Path) -> Any:
        """Parse a run with ``metrics.engine.read_run``."""
        return self.mod.read_run(path, **self._reader_kw())

    def _reader_kw(self) -> dict[str, str]:
        """Return ``{"reader": ...}`` if the engine's readers take it (older ones do not)."""
        params = inspect.signature(self.mod.read_run).parameters
        return {"reader": self.reader} if "reader" in params else {}

    def evaluate(self, qrels: Any, run: Any, measures: Sequence[str]) -> Any:
        """Call ``metrics.engine.evaluate``."""
        return self.mod.evaluate(qrels, run, list(measures))

    def evaluate_many(
        self, qrels: Any, run_paths: Sequence[Path], measures: Sequence[str], processes: int
    ) -> Any:
        """Call ``metrics.engine.evaluate_many`` on run paths (or parsed runs)."""
        fn = self.mod.evaluate_many
        params = inspect.signature(fn).parameters
        kwargs = {"processes": processes} if "processes" in params else {}
        return fn(qrels, list(run_paths), list(measures), **kwargs)

    def means(self, result: Any, measures: Sequence[str]) -> dict[str, float]:
        """Average the result, whatever of a few plausible shapes it has."""
        return {m: _engine_mean(result, m) for m in measures}


def _engine_mean(result: Any, measure: str) -> float:
    """Extract the mean of ``measure`` from an engine result (best effort, NaN if not)."""
    keys = (measure, measure.replace(".", "_"))
    for attr in ("means", "mean", "summary", "aggregate"):
        obj = getattr(result, attr, None)
        if callable(obj):
            try:
                obj = obj()
            except TypeError:
                try:
                    return float(obj(measure))
                except Exception:
                    continue
        if isinstance(obj, Mapping):
            for key in keys:
                if key in obj:
                    return float(obj[key])
    if isinstance(result, Mapping):
        for key in keys:
            if key in result:
                value = result[key]
                if isinstance(value, Mapping):  # {measure: {qid: v}}
                    return _mean([float(v) for v in value.values()])
                try:
                    return float(value)
                except TypeError:
                    return _mean([float(v) for v in value])
        rows = list(result.values())
        if rows and isinstance(rows[0], Mapping):  # {qid: {measure: v}}
            for key in keys:
                if key in rows[0]:
                    return _mean([float(r[key]) for r in rows])
    return math.nan


ADAPTERS: dict[str, type[Adapter]] = {"pytrec_eval": PytrecEval, "ranx": Ranx, "engine": Engine}
