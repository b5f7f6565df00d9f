"""Deterministic synthetic evaluation workloads (W1) for the benchmarks.

W1 (the defaults of :class:`WorkloadSpec`) is 1,000 queries x 1,000 retrieved
documents per run -- a 1,000,000-line TREC run file of about 42 MB -- and about
200,000 graded judgments (0-4, skewed to 0).  How it is built, per query:

* a *universe* of 2,500 candidate documents with hidden true grades and a
  "retrievability" shared by all systems (think lexical match);
* a judged subset of 150-250 documents (about 200 on average), chosen the way
  pooling chooses them: documents a typical system ranks high (grade plus
  retrievability plus noise) are judged, so most -- not all -- judged documents
  are retrieved by a run, and most retrieved documents are unjudged;
* each run ranks the universe by ``quality * grade + retrievability + noise``
  (run-specific quality and noise level) and keeps the top 1,000;
* scores strictly decrease down the ranking, except for exactly one tie between
  two adjacent ranks within the top 10 of a tenth of the queries, and occasional
  (2 %) ties below rank 10.  Scores are multiples of 1/16 below 2**14, so they are
  exactly representable in float32 (pytrec_eval compares scores as float32) and
  print exactly with four decimals.  The file's rank column follows our order,
  which disagrees with trec_eval's tie-breaking (score, then docno descending) in
  about half of the tied pairs: a deliberate test of tie handling.

Everything is derived from ``spec.seed`` (run ``i`` uses the seed sequence
``(seed, i + 1)``), so files are byte-identical across machines and numpy
versions that keep the ``PCG64`` generator streams stable.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field, replace
from multiprocessing import get_context
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

DATA_DIR = Path(__file__).resolve().parent / "data"
SCORE_UNITS = 16  # scores are integers / 16
FORMAT_VERSION = 1


@dataclass(frozen=True)
class WorkloadSpec:
    """Parameters of a synthetic workload; the defaults are W1."""

    name: str = "w1"
    n_queries: int = 1000
    depth: int = 1000
    universe: int = 2500
    judged_min: int = 150
    judged_max: int = 250
    grade_probs: tuple[float, ...] = field(default=(0.89, 0.065, 0.028, 0.011, 0.006))
    retrievability: float = 1.5
    pool_noise: float = 0.8
    tie_fraction: float = 0.1
    deep_tie_rate: float = 0.02
    seed: int = 20250601

    def __post_init__(self) -> None:
        """Check the parameters are consistent."""
        if not 0 < self.depth <= self.universe:
            raise ValueError("need 0 < depth <= universe")
        if not 0 < self.judged_min <= self.judged_max <= self.universe:
            raise ValueError("need 0 < judged_min <= judged_max <= universe")
        if abs(sum(self.grade_probs) - 1.0) > 1e-9:
            raise ValueError("grade_probs must sum to 1")

    def digest(self) -> str:
        """Return a short hash identifying the generated files."""
        blob = json.dumps({**asdict(self), "v": FORMAT_VERSION}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


W1 = WorkloadSpec()


def mini_spec(**overrides: object) -> WorkloadSpec:
    """Return a small workload with W1's shape (20 queries x 50 documents)."""
    base = WorkloadSpec(
        name="mini", n_queries=20, depth=50, universe=120, judged_min=8, judged_max=16
    )
    return replace(base, **overrides)  # type: ignore[arg-type]


# -- generation (pure, in memory) -------------------------------------------------


def _qids(spec: WorkloadSpec) -> list[str]:
    return [str(q + 1) for q in range(spec.n_queries)]


def _docno_matrix(spec: WorkloadSpec) -> NDArray[np.int64]:
    """Return global document numbers ``(Q, universe)``."""
    return np.arange(spec.n_queries * spec.universe, dtype=np.int64).reshape(
        spec.n_queries, spec.universe
    )


def _docno(n: int) -> str:
    return f"D{n:07d}"


@dataclass(frozen=True)
class Truth:
    """Hidden per-query document properties, each ``(Q, universe)``."""

    grades: NDArray[np.int8]
    common: NDArray[np.float64]
    judged: NDArray[np.bool_]


def truth(spec: WorkloadSpec) -> Truth:
    """Return the true grades, the shared retrievability and the judged mask."""
    rng = np.random.default_rng(np.random.SeedSequence([spec.seed, 0]))
    shape = (spec.n_queries, spec.universe)
    grades = rng.choice(len(spec.grade_probs), size=shape, p=spec.grade_probs).astype(np.int8)
    common = spec.retrievability * rng.standard_normal(shape)
    n_judged = rng.integers(spec.judged_min, spec.judged_max + 1, size=spec.n_queries)
    key = grades + common + rng.normal(0.0, spec.pool_noise, size=shape)
    order = np.argsort(-key, axis=1, kind="stable")
    rank_of = np.empty_like(order)
    np.put_along_axis(rank_of, order, np.arange(spec.universe)[None, :], axis=1)
    judged = rank_of < n_judged[:, None]
    return Truth(grades, common, judged)


def qrels_text(spec: WorkloadSpec) -> str:
    """Return the qrels file (``qid 0 docno grade``) of a workload."""
    t = truth(spec)
    grades, judged = t.grades, t.judged
    docnos = _docno_matrix(spec)
    qids = _qids(spec)
    q_idx, d_idx = np.nonzero(judged)
    lines = [
        f"{qids[q]} 0 {_docno(d)} {g}"
        for q, d, g in zip(
            q_idx.tolist(),
            docnos[q_idx, d_idx].tolist(),
            grades[q_idx, d_idx].tolist(),
            strict=True,
        )
    ]
    return "\n".join(lines) + "\n"


def run_arrays(
    spec: WorkloadSpec, index: int, hidden: Truth | None = None
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return run ``index`` as (docnos ``(Q, depth)`` in rank order, score units)."""
    t = truth(spec) if hidden is None else hidden
    rng = np.random.default_rng(np.random.SeedSequence([spec.seed, index + 1]))
    n_q, depth = spec.n_queries, spec.depth
    quality = rng.uniform(0.6, 1.2)
    noise = rng.uniform(0.8, 1.6)
    latent = quality * t.grades + t.common + rng.normal(0.0, noise, size=t.grades.shape)
    top = np.argpartition(-latent, depth - 1, axis=1)[:, :depth]
    order = np.argsort(-np.take_along_axis(latent, top, axis=1), axis=1, kind="stable")
    ranked = np.take_along_axis(top, order, axis=1)
    docnos = np.take_along_axis(_docno_matrix(spec), ranked, axis=1)

    # Strictly decreasing integer scores (units of 1/16) ...
    gaps = rng.geometric(1 / 8, size=(n_q, depth - 1)).astype(np.int64)
    # ... with occasional ties below rank 10 ...
    deep = rng.random((n_q, depth - 1)) < spec.deep_tie_rate
    deep[:, :9] = False
    gaps[deep] = 0
    # ... and exactly one tie in the top 10 of a tenth of the queries.
    n_tied = round(spec.tie_fraction * n_q)
    tied_q = rng.choice(n_q, size=n_tied, replace=False)
    gaps[:, : min(9, depth - 1)] = np.maximum(gaps[:, : min(9, depth - 1)], 1)
    if depth > 1 and n_tied:
        gaps[tied_q, rng.integers(0, min(9, depth - 1), size=n_tied)] = 0
    start = rng.integers(2**17, 2**18, size=n_q)
    units = start[:, None] - np.concatenate(
        [np.zeros((n_q, 1), dtype=np.int64), np.cumsum(gaps, axis=1)], axis=1
    )
    assert units.min() > 0 and units.max() < 2**24  # float32-exact
    return docnos, units


def run_text(spec: WorkloadSpec, index: int, hidden: Truth | None = None) -> str:
    """Return run ``index`` as TREC run text (``qid Q0 docno rank score tag``)."""
    docnos, units = run_arrays(spec, index, hidden)
    depth = units.shape[1]
    qids = _qids(spec)
    tag = f"{spec.name}-run-{index:03d}"
    ranks = [str(r) for r in range(1, depth + 1)]
    head = [f"{qid} Q0 " for qid in qids]
    whole, frac = np.divmod(units, SCORE_UNITS)
    frac_str = [f"{x * 10000 // SCORE_UNITS:04d}" for x in range(SCORE_UNITS)]
    lines = [
        f"{head[i // depth]}D{d:07d} {ranks[i % depth]} {w}.{frac_str[f]} {tag}"
        for i, (d, w, f) in enumerate(
            zip(docnos.ravel().tolist(), whole.ravel().tolist(), frac.ravel().tolist(), strict=True)
        )
    ]
    return "\n".join(lines) + "\n"


# -- files ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """Paths of a generated workload."""

    spec: WorkloadSpec
    qrels: Path
    runs: tuple[Path, ...]


def ensure(
    n_runs: int = 1,
    spec: WorkloadSpec = W1,
    data_dir: Path = DATA_DIR,
    *,
    processes: int = 1,
    verbose: bool = False,
) -> Workload:
    """Generate (or reuse) the qrels and the first ``n_runs`` runs of a workload.

    Files live in ``data_dir / f"{spec.name}-{spec.digest()}"``; a file is reused when
    it exists, since its content is fully determined by the spec.  Missing runs are
    written by ``processes`` worker processes.
    """
    out = data_dir / f"{spec.name}-{spec.digest()}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "spec.json").write_text(json.dumps(asdict(spec), indent=1) + "\n")
    qrels = out / "qrels.txt"
    if not qrels.exists():
        t0 = time.perf_counter()
        _atomic_write(qrels, qrels_text(spec))
        if verbose:
            print(f"  wrote {qrels} in {time.perf_counter() - t0:.1f} s")
    runs = tuple(out / f"run-{i:03d}.txt" for i in range(n_runs))
    missing = [i for i, path in enumerate(runs) if not path.exists()]
    if missing:
        t0 = time.perf_counter()
        jobs = [(spec, i, runs[i]) for i in missing]
        if processes > 1 and len(missing) > 1:
            ctx = get_context("spawn")
            with ctx.Pool(processes) as pool:
                pool.starmap(_write_run, jobs, chunksize=1)
        else:
            hidden = truth(spec)
            for job in jobs:
                _write_run(*job, hidden=hidden)
        if verbose:
            print(f"  wrote {len(missing)} run(s) in {time.perf_counter() - t0:.1f} s")
    return Workload(spec, qrels, runs)


_TRUTH_CACHE: dict[WorkloadSpec, Truth] = {}


def _write_run(spec: WorkloadSpec, index: int, path: Path, hidden: Truth | None = None) -> None:
    if hidden is None:  # in a worker: compute the hidden truth once per process
        hidden = _TRUTH_CACHE.get(spec) or _TRUTH_CACHE.setdefault(spec, truth(spec))
    _atomic_write(path, run_text(spec, index, hidden))


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def main(argv: list[str] | None = None) -> None:
    """Generate W1 from the command line: ``python -m benchmarks.workload --runs N``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="number of runs (default 1)")
    args = parser.parse_args(argv)
    wl = ensure(args.runs, processes=min(2, os.cpu_count() or 1), verbose=True)
    print(f"qrels: {wl.qrels}")
    print(f"runs:  {len(wl.runs)} in {wl.qrels.parent}")


if __name__ == "__main__":
    main()
