"""File-level evaluation: qrels + run(s) -> per-query values and aggregates.

:func:`evaluate` aligns a run with its qrels, builds padded label matrices and
hands them to the same vectorised core the web app uses
(:func:`metrics.engine.core.evaluate_ranked`), so there is one implementation of
every measure.  :func:`evaluate_many` does the same for many runs in parallel
processes.

Query policy (trec_eval ``-c`` by default)
    * a query judged in the qrels but absent from the run scores 0 on every
      averaged measure and counts in the mean (``missing="zero"``); with
      ``missing="ignore"`` it is left out, as trec_eval does without ``-c``;
    * a query only in the run is ignored and listed in
      :attr:`Evaluation.ignored_queries` (``extra="ignore"``); ``extra="include"``
      evaluates it against an empty set of judgments instead.

trec_eval's ``-M n`` is ``max_ret=n`` (each ranking is cut to its best ``n``
documents before anything else, so ``num_ret`` is at most ``n``) and ``-J`` is
``judged_only=True`` (unjudged and negative-labelled documents are then removed from
the cut ranking; see :func:`metrics.engine.measures.parse_measure`).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from metrics.engine import _creader
from metrics.engine import _strings as S
from metrics.engine.core import JudgedPool, compute, relstrings, zero_omitted
from metrics.engine.errors import EngineInputError, MeasureError
from metrics.engine.io import Format, Qrels, Run, Source, read_qrels, read_run, set_parser_threads
from metrics.engine.measures import (
    DEFAULT_SCALE_TOP,
    MIN_GEO_MEAN,
    Measure,
    parse_measures,
    required_depth,
)

Missing = Literal["zero", "ignore"]
Extra = Literal["ignore", "include"]

# Padded matrix cells per block of queries (bounds peak memory). 2^16: a block's float
# arrays (512 KiB) stay below the 1 MiB mmap threshold of evaluate's processes and are
# reused from the heap, not mapped afresh (2^17 cost 0.04 s more system time on W1).
_CELL_BUDGET = 1 << 16


@dataclass
class Evaluation:
    """The result of evaluating one run.

    Attributes:
        run_tag: the run's tag.
        run_name: where the run came from.
        qids: the evaluated queries, in trec_eval's order (byte order of the qid).
        measures: the requested measures, in request order (see :class:`Measure`).
        per_query: ``{canonical name: float64 array aligned with qids}``; NaN only for
            ``empty=skip`` NDCG on a query with an empty ideal.
        aggregates: ``{canonical name: summary}`` -- the mean over queries (NaN values
            skipped), or the sum for ``num_q``/``num_ret``/``num_rel``/``num_rel_ret``.
        missing_queries: judged queries the run does not have (they score 0 when
            ``missing="zero"``, else they are not in :attr:`qids`).
        ignored_queries: queries of the run without judgments (not evaluated unless
            ``extra="include"``).
        rel_level: the default relevance level used.
        judged_only: whether measures were computed on judged documents only (``-J``).
        texts: ``{canonical name: one string per qid}`` of text measures
            (``relstring``), which have no ``per_query`` array and no summary.
    """

    run_tag: str
    run_name: str
    qids: list[str]
    measures: list[Measure]
    per_query: dict[str, NDArray[np.float64]]
    aggregates: dict[str, float]
    missing_queries: list[str] = field(default_factory=list)
    ignored_queries: list[str] = field(default_factory=list)
    rel_level: float = 1.0
    judged_only: bool = False
    texts: dict[str, list[str]] = field(default_factory=dict)

    def measure(self, name: str | Measure) -> Measure:
        """Return the requested measure called ``name`` (display, requested or canonical name)."""
        if isinstance(name, Measure):
            return name
        for m in self.measures:
            if name in (m.requested, m.display, m.canonical):
                return m
        ms = parse_measures([name], rel_level=self.rel_level, judged_only=self.judged_only)
        if len(ms) == 1 and ms[0].canonical in self.per_query:
            return ms[0]
        raise KeyError(name)

    def value(self, name: str | Measure, qid: str | None = None) -> float:
        """Return the summary value of ``name``, or its value for query ``qid``."""
        key = self.measure(name).canonical
        if qid is None:
            return self.aggregates[key]
        return float(self.per_query[key][self.qids.index(qid)])

    def __getitem__(self, name: str) -> float:
        """Return the summary value of measure ``name``."""
        return self.value(name)

    @property
    def means(self) -> dict[str, float]:
        """Return the summary values keyed by every name of each measure.

        Each measure appears under its requested spelling, its display name and its
        canonical name, so ``means["ndcg_cut.10"]`` and ``means["ndcg_cut_10"]`` work.
        """
        out: dict[str, float] = {}
        for m in self.measures:
            if m.is_text:
                continue
            v = self.aggregates[m.canonical]
            for key in (m.canonical, m.requested, m.display):
                if key:
                    out.setdefault(key, v)
        return out

    def rows(self) -> Iterator[tuple[Measure, str, float | str]]:
        """Yield ``(measure, qid or "all", value)`` in trec_eval's ``-q`` order.

        A text measure (``relstring``) yields its string, per query only.
        """
        columns: list[tuple[Measure, Any]] = [
            (m, self.texts[m.canonical] if m.is_text else self.per_query[m.canonical])
            for m in self.measures
        ]
        for i, qid in enumerate(self.qids):
            for m, values in columns:
                yield m, qid, (values[i] if m.is_text else float(values[i]))
        yield from self.summary_rows()

    def summary_rows(self) -> Iterator[tuple[Measure, str, float]]:
        """Yield ``(measure, "all", summary value)`` in request order (text measures have none)."""
        for m in self.measures:
            if not m.is_text:
                yield m, "all", self.aggregates[m.canonical]

    def to_dict(self, per_query: bool = True) -> dict[str, dict[str, Any]]:
        """Return ``{display name: {"all": x, qid: y, ...}}`` (NaN becomes ``None``).

        Measures trec_eval prints only over all queries (``num_q``, ``gm_map``,
        ``gm_bpref``) have only ``"all"``; a text measure (``relstring``) only its
        per-query strings, and nothing without ``per_query``.
        """
        out: dict[str, dict[str, Any]] = {}
        for m in self.measures:
            if m.is_text:  # per query only, like trec_eval's relstring
                if per_query:
                    out[m.display] = dict(zip(self.qids, self.texts[m.canonical], strict=True))
                continue
            vals: dict[str, float | None] = {"all": _none(self.aggregates[m.canonical])}
            if per_query and not m.summary_only:
                arr = self.per_query[m.canonical]
                for qid, v in zip(self.qids, arr.tolist(), strict=True):
                    vals[qid] = _none(v)
            out[m.display] = vals
        return out


def _none(v: float) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _aggregate(m: Measure, values: NDArray[np.float64]) -> float:
    """Summarise per-query values as trec_eval does, to the last bit.

    trec_eval adds the queries' values one after the other in query order, then
    divides; summing the same way (not with a compensated sum) makes the printed four
    decimals identical even when a mean falls on a rounding boundary.
    """
    if m.aggregate == "sum":
        return float(np.nansum(values))
    finite = values[~np.isnan(values)]
    if not len(finite):
        return math.nan
    if m.aggregate == "gm":
        finite = np.log(np.maximum(finite, MIN_GEO_MEAN))
    total = 0.0
    for v in finite.tolist():
        total += v
    mean = total / len(finite)
    return math.exp(mean) if m.aggregate == "gm" else mean


def _row_blocks(lengths: NDArray[np.int64]) -> list[NDArray[np.intp]]:
    """Split rows into blocks of at most ``_CELL_BUDGET`` padded cells.

    Rows are taken shortest first, so queries of similar length share a block and
    one very long ranking does not pad all the others.
    """
    n = len(lengths)
    longest = int(lengths.max(initial=0))
    if n * longest <= _CELL_BUDGET:
        return [np.arange(n)]
    order = np.argsort(lengths, kind="stable")
    sorted_len = np.maximum(lengths[order], 1)
    blocks: list[NDArray[np.intp]] = []
    start = 0
    while start < n:
        # the block's widest row is its last one (sorted), so grow while rows * width fits
        rows_fit = np.arange(1, n - start + 1) * sorted_len[start:]
        size = max(1, int(np.searchsorted(rows_fit, _CELL_BUDGET, side="right")))
        blocks.append(order[start : start + size])
        start += size
    return blocks


def _ranges(first: NDArray[np.int64], lens: NDArray[np.int64], order: NDArray[Any]) -> NDArray[Any]:
    """Return ``order[first[i] : first[i] + lens[i]]`` for every ``i``, concatenated."""
    total = int(lens.sum())
    if not total:
        return np.zeros(0, order.dtype)
    if int(lens.min()) == int(lens.max()):  # equal lengths: one broadcast gather
        return order[(first[:, None] + np.arange(int(lens[0]))).ravel()]
    ends = np.cumsum(lens)
    idx = np.repeat(first - (ends - lens), lens)
    idx += np.arange(total)
    return order[idx]


def _evaluate_parsed(
    qrels: Qrels,
    run: Run,
    measures: list[Measure],
    *,
    rel_level: float,
    missing: Missing,
    extra: Extra,
    max_ret: int | None = None,
    judged_only: bool = False,
) -> Evaluation:
    if max_ret is not None and max_ret < 0:
        raise ValueError(f"max_ret must be non-negative, not {max_ret!r}")
    if missing not in ("zero", "ignore"):
        raise ValueError(f"missing must be 'zero' or 'ignore', not {missing!r}")
    if extra not in ("ignore", "include"):
        raise ValueError(f"extra must be 'ignore' or 'include', not {extra!r}")
    q_index = qrels.index
    run_to_q = np.fromiter((q_index.get(name, -1) for name in run.qids), np.int64, len(run.qids))
    q_to_run = np.full(len(qrels.qids), -1, np.int64)
    present = run_to_q >= 0
    q_to_run[run_to_q[present]] = np.flatnonzero(present)
    missing_q = [qrels.qids[i] for i in np.flatnonzero(q_to_run < 0).tolist()]
    extra_codes = np.flatnonzero(~present)
    ignored = [run.qids[i] for i in extra_codes.tolist()]

    # Rows to evaluate: (qid, qrels index or -1, run code or -1), in byte order of qid.
    q_rows = np.arange(len(qrels.qids)) if missing == "zero" else np.flatnonzero(q_to_run >= 0)
    row_qidx = q_rows.astype(np.int64)
    row_run = q_to_run[q_rows]
    qids = [qrels.qids[i] for i in q_rows.tolist()]
    if extra == "include" and len(extra_codes):
        names = qids + [run.qids[c] for c in extra_codes.tolist()]
        row_qidx = np.concatenate([row_qidx, np.full(len(extra_codes), -1)])
        row_run = np.concatenate([row_run, extra_codes])
        order = sorted(range(len(names)), key=lambda i: S.encode(names[i]))
        qids = [names[i] for i in order]
        row_qidx, row_run = row_qidx[order], row_run[order]
        ignored = []

    order, starts, counts = run.ranking()
    if max_ret is not None:  # trec_eval -M: keep the best max_ret of each ranking
        counts = np.minimum(counts, max_ret)
    n_ret = np.where(row_run >= 0, counts[np.maximum(row_run, 0)], 0)
    need = required_depth(measures, rel_level=rel_level)
    max_len = int(n_ret.max(initial=0))
    depth = max_len if need is None else min(need, max_len)
    use = np.minimum(n_ret, depth)

    nrows = len(qids)
    per_query = {m.canonical: np.zeros(nrows) for m in measures if not m.is_text}
    texts = {m.canonical: [""] * nrows for m in measures if m.is_text}
    pool_all = qrels.pool
    # Block by block (bounded memory): the label of every needed (query, rank) cell of
    # the block's rows, row by row in rank order, then the padded matrix of them.
    run_start = starts[np.maximum(row_run, 0)]
    for rows in _row_blocks(use):
        lens = use[rows]
        width = int(lens.max(initial=0))
        flat_start = np.cumsum(lens) - lens
        src = _ranges(run_start[rows], lens, order)
        labels = qrels.lookup((flat_start, row_qidx[rows]), run, src)
        del src
        idx = flat_start[:, None] + np.arange(width)
        if len(rows) and int(lens.min()) == width:
            mat = labels[idx]
        else:
            np.minimum(idx, max(len(labels) - 1, 0), out=idx)
            mat = labels[idx] if len(labels) else np.full(idx.shape, np.nan)
            mat[np.arange(width)[None, :] >= lens[:, None]] = np.nan
        pool = pool_all.take(row_qidx[rows]) if len(pool_all.label) else JudgedPool.empty(len(rows))
        values = compute(measures, mat, n_ret[rows], pool, padded=True)
        for key, arr in values.items():
            per_query[key][rows] = arr
        for m in measures:
            if m.is_text:
                strings = relstrings(m, mat, n_ret[rows], padded=True)
                for row, text in zip(rows.tolist(), strings, strict=True):
                    texts[m.canonical][row] = text

    zero_omitted(measures, per_query, row_run < 0)  # judged queries the run does not have
    aggregates = {
        m.canonical: _aggregate(m, per_query[m.canonical]) for m in measures if not m.is_text
    }
    return Evaluation(
        run_tag=run.tag,
        run_name=run.name,
        qids=qids,
        measures=measures,
        per_query=per_query,
        aggregates=aggregates,
        missing_queries=missing_q,
        ignored_queries=ignored,
        rel_level=float(rel_level),
        judged_only=judged_only,
        texts=texts,
    )


def evaluate(
    qrels: Source | Qrels,
    run: Source | Run,
    measures: Sequence[str | Measure] | str,
    *,
    rel_level: float = 1,
    scale_top: float = DEFAULT_SCALE_TOP,
    missing: Missing = "zero",
    extra: Extra = "ignore",
    qrels_format: Format = "auto",
    run_format: Format = "auto",
    max_ret: int | None = None,
    judged_only: bool = False,
    num_docs: int = 0,
) -> Evaluation:
    """Evaluate one run against qrels for any list of measures, in one pass.

    Args:
        qrels: a :class:`Qrels`, or a path, bytes or file object to read.
        run: a :class:`Run`, or a path, bytes or file object to read.
        measures: measure names in any accepted spelling (trec_eval, ir_measures or
            Graded NDCG flavours); trec_eval names may expand (``P.5,10``).
        rel_level: default relevance level of binary measures (trec_eval ``-l``).
        scale_top: top grade of the scale (``ideal=max`` NDCG, ``ERR``).
        missing: ``"zero"`` (trec_eval ``-c``): judged queries absent from the run
            score 0 and count in the mean; ``"ignore"``: they are left out.
        extra: ``"ignore"``: run queries without judgments are skipped and listed
            in ``ignored_queries``; ``"include"``: they are evaluated against no
            judgments.
        qrels_format: ``"auto"``, ``"trec"``, ``"json"`` or ``"jsonl"``.
        run_format: likewise, for the run.
        max_ret: trec_eval ``-M``: evaluate only the best ``max_ret`` documents of
            each ranking (``None``: all).
        judged_only: trec_eval ``-J``: remove unjudged and negative-labelled
            documents from every ranking (after ``max_ret``) for every measure.
        num_docs: trec_eval ``-N``: documents in the collection (read only by
            ``utility`` with a non-zero fourth coefficient).

    Raises:
        EngineInputError: an input has errors (all of them are reported).
        MeasureError: a measure name is invalid.
    """
    ms = parse_measures(
        measures,
        rel_level=rel_level,
        scale_top=scale_top,
        judged_only=judged_only,
        num_docs=num_docs,
    )
    if not ms:
        raise MeasureError("no measures given")
    q = read_qrels(qrels, format=qrels_format)
    r = read_run(run, format=run_format)
    return _evaluate_parsed(
        q,
        r,
        ms,
        rel_level=rel_level,
        missing=missing,
        extra=extra,
        max_ret=max_ret,
        judged_only=judged_only,
    )


# --------------------------------------------------------------------------- many runs
_WORKER_QRELS: Qrels | None = None
# "forkserver" where the platform has it (POSIX), else "spawn"; never "fork" (see below).
_START_METHOD = "forkserver" if sys.platform != "win32" else "spawn"


def _init_worker(qrels: Qrels | None, parser_threads: bool = True) -> None:
    global _WORKER_QRELS
    # A worker reads one run after another: each run's arrays are mapped and given back
    # when freed, so the worker stays at one run's working set.
    _creader.mmap_threshold(_creader.MMAP_THRESHOLD)
    _WORKER_QRELS = qrels
    set_parser_threads(parser_threads)


def _worker(args: tuple[Any, list[Measure], Mapping[str, Any]]) -> Evaluation | EngineInputError:
    run, measures, opts = args
    assert _WORKER_QRELS is not None
    try:
        r = read_run(run, format=opts["run_format"])
    except EngineInputError as exc:
        return exc
    return _evaluate_parsed(
        _WORKER_QRELS,
        r,
        measures,
        rel_level=opts["rel_level"],
        missing=opts["missing"],
        extra=opts["extra"],
        max_ret=opts.get("max_ret"),
        judged_only=opts.get("judged_only", False),
    )


def evaluate_many(
    qrels: Source | Qrels,
    runs: Sequence[Source | Run],
    measures: Sequence[str | Measure] | str,
    processes: int | None = None,
    *,
    rel_level: float = 1,
    scale_top: float = DEFAULT_SCALE_TOP,
    missing: Missing = "zero",
    extra: Extra = "ignore",
    qrels_format: Format = "auto",
    run_format: Format = "auto",
    max_ret: int | None = None,
    judged_only: bool = False,
    num_docs: int = 0,
) -> list[Evaluation]:
    """Evaluate several runs against the same qrels; return one :class:`Evaluation` per run.

    The qrels are read once; runs are read and evaluated in ``processes`` worker
    processes (default: one per CPU; ``1`` evaluates in this process).  Pass runs as
    paths so that workers read them directly.  Options are those of :func:`evaluate`.

    Raises:
        EngineInputError: with the problems of every run that has any.
    """
    ms = parse_measures(
        measures,
        rel_level=rel_level,
        scale_top=scale_top,
        judged_only=judged_only,
        num_docs=num_docs,
    )
    if not ms:
        raise MeasureError("no measures given")
    if max_ret is not None and max_ret < 0:
        raise ValueError(f"max_ret must be non-negative, not {max_ret!r}")
    q = read_qrels(qrels, format=qrels_format)
    runs = list(runs)
    opts = {
        "rel_level": rel_level,
        "missing": missing,
        "extra": extra,
        "run_format": run_format,
        "max_ret": max_ret,
        "judged_only": judged_only,
    }
    n_proc = processes if processes is not None else (os.cpu_count() or 1)
    n_proc = max(1, min(n_proc, len(runs)))
    jobs = [(r, ms, opts) for r in runs]
    global _WORKER_QRELS
    if n_proc == 1:
        _WORKER_QRELS = q
        try:
            results = [_worker(job) for job in jobs]
        finally:
            _WORKER_QRELS = None
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # Workers come from a fork server, never a fork of this process: a fork copies
        # locks other threads hold (a web server's, pytest-xdist's channel) and can leave
        # the worker waiting on them forever. One single-threaded parser per worker: no
        # oversubscription of the cores.
        context = multiprocessing.get_context(_START_METHOD)
        with ProcessPoolExecutor(
            n_proc, mp_context=context, initializer=_init_worker, initargs=(q, False)
        ) as pool:
            results = list(pool.map(_worker, jobs))
    errors = [e for res in results if isinstance(res, EngineInputError) for e in res.errors]
    total = sum(res.total for res in results if isinstance(res, EngineInputError))
    if errors:
        raise EngineInputError(errors, total)
    return [res for res in results if isinstance(res, Evaluation)]
