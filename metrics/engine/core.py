"""The vectorised evaluation core: measures computed from padded label matrices.

Everything here works on whole matrices (one row per query), not query by query (the
exceptions: the gain levels and ideal rankings of trec_eval's rbp, G, ndcg_rel and
Rndcg, and relstring's text, are built in a short loop over the queries):

``ranked_labels``
    float64 ``(n_queries, depth)``: the label of the document at each rank, NaN for
    an unjudged document.  Cells at or beyond a row's ``n_ret`` are padding and
    ignored, whatever they hold.
``n_ret``
    int ``(n_queries,)``: how many documents the run retrieved for the query.  It may
    exceed ``depth`` when a stored ranking was truncated; measures that read deeper
    than ``depth`` are then computed on the stored part only (see
    :func:`metrics.engine.measures.required_depth` for the depth that keeps every
    value exact).
``judged_labels``
    per query, the labels of every judged document (a :class:`JudgedPool` or a
    sequence of 1-D arrays).  They give the ideal rankings, ``num_rel``,
    ``Rprec``'s R and ``bpref``'s count of judged non-relevant documents.

Label conventions (trec_eval's): a document is relevant at level ``r`` when its
label is ``>= r`` and ``>= 0``; a negative label is judged but unusable (gain 0,
never relevant, not in the ideal ranking, not counted as judged non-relevant by
``bpref``); NaN means unjudged.  Gains only come from positive labels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from metrics.engine.errors import MeasureError
from metrics.engine.measures import (
    DEFAULT_SCALE_TOP,
    IPREC_DEFAULT_LEVELS,
    Measure,
    parse_measures,
)

F64 = NDArray[np.float64]


class JudgedPool:
    """The judged labels of each query, flattened and grouped by query.

    Build it once per qrels (``Qrels.pool`` does) or from per-query arrays with
    :meth:`from_sequences`; :meth:`take` selects (and may repeat) queries cheaply,
    which is how one query's judgments are shared by many runs.  Ideal rankings
    only need the documents with a positive gain, which are sorted on first use.
    """

    __slots__ = ("_cache", "_grouped", "counts", "label", "n_queries", "query")

    def __init__(
        self, query: ArrayLike, label: ArrayLike, n_queries: int, *, presorted: bool = False
    ) -> None:
        """Store judged ``label`` of query index ``query`` (NaN labels are dropped).

        ``presorted`` promises that ``query`` is non-decreasing (grouped by query).
        """
        q = np.asarray(query, dtype=np.int64).ravel()
        lab = np.asarray(label, dtype=np.float64).ravel()
        if q.shape != lab.shape:
            raise ValueError("query and label arrays differ in length")
        keep = ~np.isnan(lab)
        if not keep.all():
            q, lab = q[keep], lab[keep]
        if len(q) and (q.min() < 0 or q.max() >= n_queries):
            raise ValueError("query index out of range")
        self.n_queries = int(n_queries)
        self.query = q
        self.label = lab
        self.counts = np.bincount(q, minlength=self.n_queries).astype(np.int64)
        self._grouped = presorted or len(q) < 2
        self._cache: dict[Any, Any] = {}

    def _group(self) -> None:
        """Order the labels by query (stable), once; only :meth:`take` and friends need it."""
        if not self._grouped:
            q = self.query
            if not bool((q[1:] >= q[:-1]).all()):
                small = q.astype(np.int16 if self.n_queries < 32768 else np.int64)
                order = np.argsort(small, kind="stable")
                self.query, self.label = q[order], self.label[order]
            self._grouped = True

    @property
    def starts(self) -> NDArray[np.int64]:
        """Return where each query's labels start (once grouped by query)."""
        self._group()
        return np.cumsum(self.counts) - self.counts

    @classmethod
    def from_sequences(cls, judged_labels: Sequence[ArrayLike]) -> JudgedPool:
        """Build a pool from one array of judged labels per query."""
        arrays = [np.asarray(a, dtype=np.float64).ravel() for a in judged_labels]
        n = len(arrays)
        lens = np.fromiter((len(a) for a in arrays), np.int64, n)
        flat = np.concatenate(arrays) if n else np.zeros(0)
        return cls(np.repeat(np.arange(n), lens), flat, n, presorted=True)

    @classmethod
    def empty(cls, n_queries: int) -> JudgedPool:
        """Return a pool of ``n_queries`` queries without any judgment."""
        return cls(np.zeros(0, np.int64), np.zeros(0), n_queries, presorted=True)

    def take(self, rows: ArrayLike) -> JudgedPool:
        """Return the pool of queries ``rows`` (indices into this pool, repeats allowed).

        A negative index gives a query with no judgments.
        """
        rows = np.asarray(rows, dtype=np.int64).ravel()
        if len(rows) == self.n_queries and np.array_equal(rows, np.arange(self.n_queries)):
            return self
        valid = rows >= 0
        safe = np.where(valid, rows, 0)
        lens = np.where(valid, self.counts[safe], 0)
        total = int(lens.sum())
        new_starts = np.cumsum(lens) - lens
        starts = self.starts
        idx = np.repeat(starts[safe] - new_starts, lens) + np.arange(total)
        q = np.repeat(np.arange(len(rows)), lens)
        return JudgedPool(q, self.label[idx], len(rows), presorted=True)

    def shared(self, rows: ArrayLike) -> SharedPool:
        """Return the pool of queries ``rows`` without copying any label (repeats allowed).

        Like :meth:`take`, but every statistic (``num_rel``, ideal DCG...) is computed once
        per query of this pool and gathered for the rows: a hundred runs scored against
        one query cost one ideal ranking, not a hundred. A negative index gives a query
        with no judgments.
        """
        return SharedPool(self, rows)

    def labels_of(self, row: int) -> NDArray[np.float64]:
        """Return the judged labels of one query."""
        start = int(self.starts[row])
        return self.label[start : start + int(self.counts[row])]

    def label_lists(self) -> list[NDArray[np.float64]]:
        """Return the judged labels of every query, one array each."""
        starts = self.starts.tolist()
        counts = self.counts.tolist()
        return [self.label[a : a + c] for a, c in zip(starts, counts, strict=True)]

    def num_rel(self, rel: float) -> NDArray[np.int64]:
        """Return, per query, how many judged documents are relevant at level ``rel``."""
        key = ("num_rel", rel)
        if key not in self._cache:
            mask = (self.label >= rel) & (self.label >= 0)
            self._cache[key] = np.bincount(self.query[mask], minlength=self.n_queries)
        return self._cache[key]

    def num_nonrel(self, rel: float) -> NDArray[np.int64]:
        """Return, per query, how many documents are judged non-relevant (``0 <= label < rel``)."""
        key = ("num_nonrel", rel)
        if key not in self._cache:
            mask = (self.label >= 0) & (self.label < rel)
            self._cache[key] = np.bincount(self.query[mask], minlength=self.n_queries)
        return self._cache[key]

    def _ranked(
        self, g: F64, q: NDArray[np.int64]
    ) -> tuple[F64, NDArray[np.int64], NDArray[np.int64]]:
        """Sort (gain, query) pairs by query, then gain descending; add the rank in the query."""
        order = np.argsort(-g)
        small = q[order].astype(np.int16 if self.n_queries < 32768 else np.int64)
        order = order[np.argsort(small, kind="stable")]
        g, q = g[order], q[order]
        counts = np.bincount(q, minlength=self.n_queries)
        rank = np.arange(len(q), dtype=np.int64) - (np.cumsum(counts) - counts)[q]
        return g, q, rank

    def ideal_dcg(
        self, gain: Callable[[F64], F64], monotone: bool, discount: str, cutoff: int | None
    ) -> F64:
        """Return, per query, the DCG of the best ``cutoff`` judged documents (positive gains).

        ``monotone`` says that ``gain`` preserves the label order and is zero for labels
        ``<= 0`` (linear, exp): the positive labels, sorted once, give every ideal.
        """
        if monotone:
            if "positive" not in self._cache:
                pos = self.label > 0
                self._cache["positive"] = self._ranked(self.label[pos], self.query[pos])
            lab, q, rank = self._cache["positive"]
            g = gain(lab)
        else:
            g_all = gain(self.label)
            pos = g_all > 0
            g, q, rank = self._ranked(g_all[pos], self.query[pos])
        mask = g > 0
        if cutoff is not None:
            mask &= rank < cutoff
        if not mask.any():
            return np.zeros(self.n_queries)
        r = rank[mask]
        disc = discounts(discount, int(r.max()) + 1)
        return np.bincount(q[mask], weights=g[mask] * disc[r], minlength=self.n_queries)


class SharedPool:
    """Rows that share the queries of a :class:`JudgedPool` (see :meth:`JudgedPool.shared`).

    Offers what the measures read of a pool -- ``num_rel``, ``num_nonrel``,
    ``ideal_dcg``, ``label_lists`` and ``n_queries`` -- computed on the base pool's
    queries and gathered by row; a row of index -1 has no judgments (0, an empty list).
    """

    __slots__ = ("base", "n_queries", "rows", "valid")

    def __init__(self, base: JudgedPool, rows: ArrayLike) -> None:
        """Index ``base`` by ``rows`` (one query index per row, -1 for none)."""
        r = np.asarray(rows, dtype=np.int64).ravel()
        if len(r) and int(r.max()) >= base.n_queries:
            raise ValueError("query index out of range")
        self.base = base
        self.valid = r >= 0
        self.rows = np.where(self.valid, r, 0)
        self.n_queries = len(r)

    def _gather(self, per_query: NDArray[Any]) -> NDArray[Any]:
        if not self.base.n_queries:
            return np.zeros(self.n_queries, dtype=per_query.dtype)
        out = per_query[self.rows]
        if not self.valid.all():
            out = np.where(self.valid, out, 0).astype(per_query.dtype)
        return out

    def num_rel(self, rel: float) -> NDArray[np.int64]:
        """Return, per row, how many judged documents are relevant at level ``rel``."""
        return self._gather(self.base.num_rel(rel))

    def num_nonrel(self, rel: float) -> NDArray[np.int64]:
        """Return, per row, how many documents are judged non-relevant."""
        return self._gather(self.base.num_nonrel(rel))

    def ideal_dcg(
        self, gain: Callable[[F64], F64], monotone: bool, discount: str, cutoff: int | None
    ) -> F64:
        """Return, per row, the ideal DCG of its query (see :meth:`JudgedPool.ideal_dcg`)."""
        return self._gather(self.base.ideal_dcg(gain, monotone, discount, cutoff))

    def label_lists(self) -> list[NDArray[np.float64]]:
        """Return the judged labels of every row's query, one array each."""
        lists = self.base.label_lists()
        empty = np.zeros(0)
        return [
            lists[r] if ok else empty
            for r, ok in zip(self.rows.tolist(), self.valid.tolist(), strict=True)
        ]


@lru_cache(maxsize=64)
def _discounts_cached(kind: str, n: int) -> F64:
    ranks = np.arange(1, n + 1, dtype=np.float64)
    if kind == "log2":
        d = 1.0 / np.log2(ranks + 1.0)
    elif kind == "jk":
        d = 1.0 / np.maximum(1.0, np.log2(ranks))
    elif kind == "rank":
        d = 1.0 / ranks
    else:  # pragma: no cover - validated by the parser
        raise MeasureError(f"unknown discount {kind!r}")
    d.setflags(write=False)
    return d


def discounts(kind: str, n: int) -> F64:
    """Return the discounts of ranks ``1..n``.

    ``log2`` is 1/log2(i+1); ``jk`` (Järvelin-Kekäläinen) is 1/max(1, log2 i), so ranks
    1 and 2 are undiscounted; ``rank`` is 1/i.
    """
    return _discounts_cached(kind, max(int(n), 0))


def gain_function(m: Measure) -> tuple[Callable[[F64], F64], bool]:
    """Return (label -> gain function, whether it preserves label order) for an NDCG measure.

    Unjudged (NaN) and negative labels always get gain 0.  ``linear`` gives the label
    itself, ``exp`` gives ``2**label - 1``; a custom map gives the mapped gain of
    listed labels and the label itself for the others (trec_eval's ``ndcg.l=g``).
    """
    if m.gains is not None:
        table = m.gains

        def custom(labels: F64) -> F64:
            labels = np.asarray(labels, dtype=np.float64)
            usable = labels >= 0
            out = np.where(usable, labels, 0.0)
            for level, value in table:
                out[labels == level] = value
            out[~usable] = 0.0
            return out

        return custom, False
    if m.gain == "exp":

        def exp(labels: F64) -> F64:
            labels = np.asarray(labels, dtype=np.float64)
            pos = labels > 0
            with np.errstate(over="ignore", invalid="ignore"):
                return np.where(pos, np.exp2(np.where(pos, labels, 0.0)) - 1.0, 0.0)

        return exp, True

    def linear(labels: F64) -> F64:
        labels = np.asarray(labels, dtype=np.float64)
        return np.where(labels > 0, labels, 0.0)

    return linear, True


class _View:
    """A ranking matrix plus lazily computed, cached derived matrices."""

    def __init__(self, labels: F64, n_eff: NDArray[np.int64], n_ret: NDArray[np.int64]) -> None:
        self.L = labels  # NaN beyond n_eff
        self.n_eff = n_eff
        self.n_ret = n_ret
        self.width = labels.shape[1]
        self._cache: dict[Any, Any] = {}

    def _width(self, k: int | None) -> int | None:
        """Return the cutoff to apply, or ``None`` when it covers the whole matrix."""
        return None if k is None or k >= self.width else k

    def rel(self, r: float, k: int | None = None) -> NDArray[np.bool_]:
        """Return whether each cell (of the first ``k`` columns) is relevant at level ``r``."""
        k = self._width(k)
        key = ("rel", r, k)
        if key not in self._cache:
            if k is not None and ("rel", r, None) in self._cache:
                self._cache[key] = self._cache[("rel", r, None)][:, :k]
            else:
                lab = self.L if k is None else self.L[:, :k]
                self._cache[key] = (lab >= r) if r > 0 else ((lab >= r) & (lab >= 0))
        return self._cache[key]

    def hits(self, r: float, k: int | None = None) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """Return (row, column) of every relevant cell (of the first ``k`` columns), row by row."""
        k = self._width(k)
        key = ("hits", r, k)
        if key not in self._cache:
            rel = self.rel(r, k)
            # One flat scan and a division: twice as fast as np.nonzero on a 2-D matrix.
            flat = np.flatnonzero(rel)
            self._cache[key] = np.divmod(flat, max(rel.shape[1], 1))
        return self._cache[key]

    def cumrel(self, r: float, k: int | None = None) -> NDArray[np.int32]:
        """Return the running count of relevant documents along each row."""
        k = self._width(k)
        key = ("cumrel", r, k)
        if key not in self._cache:
            self._cache[key] = np.cumsum(self.rel(r, k), axis=1, dtype=np.int32)
        return self._cache[key]

    def gains(self, m: Measure, k: int | None = None) -> F64:
        """Return the gain of each cell (of the first ``k`` columns)."""
        k = self._width(k)
        key = ("gain", m.gain, m.gains, k)
        if key not in self._cache:
            lab = self.L if k is None else self.L[:, :k]
            self._cache[key] = gain_function(m)[0](lab)
        return self._cache[key]

    def sorted_gains(self, m: Measure) -> F64:
        """Return each row's gains sorted in decreasing order (the 'recall' ideal)."""
        key = ("sorted_gain", m.gain, m.gains)
        if key not in self._cache:
            g = self.gains(m)
            self._cache[key] = -np.sort(-g, axis=1)
        return self._cache[key]


class _Context:
    """Everything one call of :func:`evaluate_ranked` shares between measures."""

    def __init__(
        self,
        labels: F64,
        n_ret: NDArray[np.int64],
        pool: JudgedPool | SharedPool,
        abstain: F64 | None = None,
        padded: bool = False,
    ) -> None:
        nq, depth = labels.shape
        self.nq = nq
        self.pool = pool
        self.abstain = abstain
        n_eff = np.minimum(n_ret, depth)
        if padded:  # the caller guarantees NaN beyond n_ret
            full = labels
        else:
            valid = np.arange(depth)[None, :] < n_eff[:, None]
            full = labels if valid.all() else np.where(valid, labels, np.nan)
        self.full = _View(full, n_eff, n_ret)
        self._judged: _View | None = None

    def view(self, judged_only: bool) -> _View:
        if not judged_only:
            return self.full
        if self._judged is None:
            L = self.full.L
            keep = L >= 0  # judged with a usable label (trec_eval -J)
            counts = keep.sum(axis=1)
            width = int(counts.max()) if self.nq else 0
            if keep.all():
                compact = L
            else:
                order = np.argsort(~keep, axis=1, kind="stable")[:, :width]
                compact = np.take_along_axis(L, order, axis=1)
                compact[np.arange(width)[None, :] >= counts[:, None]] = np.nan
            self._judged = _View(compact, counts.astype(np.int64), counts.astype(np.int64))
        return self._judged


def _cut(mat: NDArray[Any], k: int | None) -> NDArray[Any]:
    return mat if k is None else mat[:, :k]


def _safe_div(num: F64, den: NDArray[Any]) -> F64:
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _first_hit(hits: NDArray[np.bool_]) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    if hits.shape[1] == 0:
        return np.zeros(hits.shape[0], bool), np.zeros(hits.shape[0], np.int64)
    return hits.any(axis=1), hits.argmax(axis=1)


def _ndcg(m: Measure, ctx: _Context) -> F64:
    v = ctx.view(m.judged_only)
    k = m.cutoff
    g = v.gains(m, k)
    w = g.shape[1]
    disc = discounts(m.discount, max(w, k or 0, 1))
    dcg = g @ disc[:w] if w else np.zeros(ctx.nq)
    gain_fn, monotone = gain_function(m)
    if m.ideal == "global":
        ideal = ctx.pool.ideal_dcg(gain_fn, monotone, m.discount, k)
    elif m.ideal == "recall":
        s = _cut(v.sorted_gains(m), k)
        s = np.where(s > 0, s, 0.0)
        ideal = s @ disc[: s.shape[1]] if s.shape[1] else np.zeros(ctx.nq)
    elif m.ideal == "local":
        s = -np.sort(-g, axis=1)
        s = np.where(s > 0, s, 0.0)
        ideal = s @ disc[:w] if w else np.zeros(ctx.nq)
    else:  # max: every one of the k ranks holds a document of the scale's top grade
        top_gain = float(gain_fn(np.array([m.top]))[0])
        if k is not None:
            ideal = np.full(ctx.nq, top_gain * float(disc[:k].sum()))
        else:
            n = v.n_eff
            cum = np.concatenate([[0.0], np.cumsum(discounts(m.discount, int(n.max(initial=0))))])
            ideal = top_gain * cum[n]
        if top_gain <= 0:
            ideal = np.zeros(ctx.nq)
    empty = {"zero": 0.0, "one": 1.0, "skip": np.nan}[m.empty]
    out = np.full(ctx.nq, empty)
    np.divide(dcg, ideal, out=out, where=ideal > 0)
    return out


def _precision(m: Measure, ctx: _Context) -> F64:
    v = ctx.view(m.judged_only)
    hits = v.rel(m.rel, m.cutoff).sum(axis=1)
    return hits / float(m.cutoff)  # type: ignore[arg-type]


def _recall(m: Measure, ctx: _Context) -> F64:
    v = ctx.view(m.judged_only)
    hits = v.rel(m.rel, m.cutoff).sum(axis=1)
    return _safe_div(hits.astype(np.float64), ctx.pool.num_rel(m.rel))


def _success(m: Measure, ctx: _Context) -> F64:
    v = ctx.view(m.judged_only)
    return v.rel(m.rel, m.cutoff).any(axis=1).astype(np.float64)


def _rr(m: Measure, ctx: _Context) -> F64:
    v = ctx.view(m.judged_only)
    has, first = _first_hit(v.rel(m.rel, m.cutoff))
    return np.where(has, 1.0 / (first + 1.0), 0.0)


def _ap(m: Measure, ctx: _Context) -> F64:
    v = ctx.view(m.judged_only)
    rows, cols = v.hits(m.rel, m.cutoff)
    # Hits come row by row in rank order, so a hit's place among its row's hits is the
    # number of relevant documents up to it (no running count over the whole matrix).
    counts = np.bincount(rows, minlength=ctx.nq)
    seen = np.arange(1, len(rows) + 1) - (np.cumsum(counts) - counts)[rows]
    prec = seen / (cols + 1.0)
    prec_sum = np.bincount(rows, weights=prec, minlength=ctx.nq)
    return _safe_div(prec_sum, ctx.pool.num_rel(m.rel))


def _rprec(m: Measure, ctx: _Context) -> F64:
    v = ctx.view(m.judged_only)
    num_rel = ctx.pool.num_rel(m.rel)
    look = np.minimum(num_rel, v.n_eff)
    out = np.zeros(ctx.nq)
    rows = np.flatnonzero(look > 0)
    if len(rows):
        cum = v.cumrel(m.rel)
        out[rows] = cum[rows, look[rows] - 1] / num_rel[rows]
    return out


def _bpref(m: Measure, ctx: _Context) -> F64:
    v = ctx.full
    r = m.rel
    nonrel = (v.L >= 0) & (r > v.L)
    before = np.cumsum(nonrel, axis=1, dtype=np.int32)  # at a relevant cell: non-relevant above
    rows, cols = v.hits(r)
    seen = before[rows, cols]
    num_rel = ctx.pool.num_rel(r)
    denom = np.maximum(np.minimum(ctx.pool.num_nonrel(r), num_rel), 1)
    penalty = np.minimum(seen, num_rel[rows]) / denom[rows]
    contrib = np.where(seen > 0, 1.0 - penalty, 1.0)
    total = np.bincount(rows, weights=contrib, minlength=ctx.nq)
    return _safe_div(total, num_rel)


def _judged(m: Measure, ctx: _Context) -> F64:
    v = ctx.full
    k = int(m.cutoff)  # type: ignore[arg-type]
    judged = (~np.isnan(_cut(v.L, k))).sum(axis=1)
    return _safe_div(judged.astype(np.float64), np.minimum(k, v.n_ret))


def _err(m: Measure, ctx: _Context) -> F64:
    v = ctx.full
    lab = _cut(v.L, m.cutoff)
    g = np.where(lab > 0, lab, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        stop = (np.exp2(g) - 1.0) / np.exp2(m.top)
    w = stop.shape[1]
    if w == 0:
        return np.zeros(ctx.nq)
    reach = np.ones_like(stop)
    reach[:, 1:] = np.cumprod(1.0 - stop[:, :-1], axis=1)
    return (stop * reach / np.arange(1.0, w + 1.0)).sum(axis=1)


def _num_q(m: Measure, ctx: _Context) -> F64:
    return np.ones(ctx.nq)


def _num_ret(m: Measure, ctx: _Context) -> F64:
    return ctx.view(m.judged_only).n_ret.astype(np.float64)


def _num_rel(m: Measure, ctx: _Context) -> F64:
    return ctx.pool.num_rel(m.rel).astype(np.float64)


def _num_rel_ret(m: Measure, ctx: _Context) -> F64:
    return ctx.full.rel(m.rel).sum(axis=1).astype(np.float64)


def _num_nonrel_judged_ret(m: Measure, ctx: _Context) -> F64:
    L = ctx.full.L
    return ((L >= 0) & (m.rel > L)).sum(axis=1).astype(np.float64)


def _set_counts(m: Measure, ctx: _Context) -> tuple[F64, F64, F64]:
    """Return (retrieved, relevant retrieved, relevant) per query, as floats."""
    v = ctx.view(m.judged_only)
    ret = v.n_ret.astype(np.float64)
    rel_ret = v.rel(m.rel).sum(axis=1).astype(np.float64)
    return ret, rel_ret, ctx.pool.num_rel(m.rel).astype(np.float64)


def _set_p(m: Measure, ctx: _Context) -> F64:
    ret, rel_ret, _ = _set_counts(m, ctx)
    return _safe_div(rel_ret, ret)


def _set_r(m: Measure, ctx: _Context) -> F64:
    _, rel_ret, num_rel = _set_counts(m, ctx)
    return _safe_div(rel_ret, num_rel)


def _set_f(m: Measure, ctx: _Context) -> F64:
    ret, rel_ret, num_rel = _set_counts(m, ctx)
    p, r = _safe_div(rel_ret, ret), _safe_div(rel_ret, num_rel)
    x = m.beta
    return _safe_div((x + 1.0) * p * r, x * p + r)  # 0 when nothing relevant is retrieved


def _set_ap(m: Measure, ctx: _Context) -> F64:
    ret, rel_ret, num_rel = _set_counts(m, ctx)
    return _safe_div(rel_ret * rel_ret, ret * num_rel)


def _set_rel_p(m: Measure, ctx: _Context) -> F64:
    ret, rel_ret, num_rel = _set_counts(m, ctx)
    return _safe_div(rel_ret, np.minimum(ret, num_rel))


def _iprec_levels(m: Measure, ctx: _Context, levels: Sequence[float]) -> F64:
    """Return interpolated precision at each recall level, ``(n_queries, len(levels))``.

    trec_eval's definition: the level is turned into a count of relevant documents,
    ``round(level * num_rel)`` (halves away from zero); the value is the highest
    precision at or below the rank where that many relevant documents have been
    retrieved (for a count of 0, the highest precision anywhere), and 0 when the run
    never retrieves that many.
    """
    v = ctx.view(m.judged_only)
    rel = v.rel(m.rel)
    nq, w = rel.shape
    num_rel = ctx.pool.num_rel(m.rel).astype(np.float64)
    out = np.zeros((nq, len(levels)))
    if not w:
        return out
    cum = v.cumrel(m.rel)
    prec = cum / np.arange(1.0, w + 1.0)
    prec[np.arange(w)[None, :] >= v.n_eff[:, None]] = 0.0
    interp = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]  # max over ranks >= i
    rel_ret = cum[:, -1].astype(np.int64)
    rows = np.arange(nq)
    for j, level in enumerate(levels):
        x = level * num_rel
        target = np.floor(x) + ((x - np.floor(x)) >= 0.5)
        target = target.astype(np.int64)
        reach = (target <= rel_ret) & (rel_ret > 0)
        # rank of the target-th relevant document (target 0: the first rank)
        pos = np.where(target > 0, np.argmax(cum >= np.maximum(target, 1)[:, None], axis=1), 0)
        out[:, j] = np.where(reach, interp[rows, pos], 0.0)
    return out


def _iprec(m: Measure, ctx: _Context) -> F64:
    return _iprec_levels(m, ctx, [m.level])[:, 0]  # type: ignore[list-item]


def _iprec_avg(m: Measure, ctx: _Context) -> F64:
    values = _iprec_levels(m, ctx, IPREC_DEFAULT_LEVELS)
    return values.sum(axis=1) / len(IPREC_DEFAULT_LEVELS)


# --------------------------------------------------------------------------- trec_eval's
# remaining measures (infAP, rbp, rbp_resid, utility, relative_P, Rprec_mult, binG, G,
# ndcg_rel, Rndcg, unj). Each follows its m_*.c in trec_eval 10.0 step for step where
# the order of floating-point operations could change a last digit.
INFAP_EPSILON = 0.00001  # trec_eval.h


def _infap(m: Measure, ctx: _Context) -> F64:
    """Return trec_eval's inferred AP (Yilmaz and Aslam, CIKM 2006).

    NaN cells (not in the qrels) are skipped; negative labels are in the pool but
    unjudged. At the relevant document of 0-based rank ``j`` (``j > 0``) the term is
    ``1/(j+1) + j/(j+1) * (above/j) * ((rel_above + e)/(rel_above + nonrel_above + 2e))``
    with ``above`` the pooled documents above it, relevant, non-relevant or unjudged.
    """
    v = ctx.view(m.judged_only)
    L = v.L
    r = m.rel
    pooled_unjudged = np.cumsum(L < 0, axis=1, dtype=np.int64)
    nonrel = np.cumsum((L >= 0) & (r > L), axis=1, dtype=np.int64)
    rows, cols = v.hits(r)
    counts = np.bincount(rows, minlength=ctx.nq)
    rel_before = np.arange(len(rows)) - (np.cumsum(counts) - counts)[rows]  # rel_so_far - 1
    # counts strictly above the hit (the hit itself is relevant, so the inclusive cumsum
    # of the other two kinds is the same as the exclusive one)
    nr = nonrel[rows, cols]
    pu = pooled_unjudged[rows, cols]
    fj = cols.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel_before + nr + pu) / fj) * (
            (rel_before + INFAP_EPSILON) / (rel_before + nr + 2 * INFAP_EPSILON)
        )
    term = np.where(cols == 0, 1.0, term)
    total = np.bincount(rows, weights=term, minlength=ctx.nq)
    return _safe_div(total, ctx.pool.num_rel(r))


def _level_gains(m: Measure, ctx: _Context) -> list[F64]:
    """Return, per query, the gains of trec_eval's gain levels (``setup_gains``).

    The levels are every whole label from 0 to the query's highest non-negative label,
    the labels themselves (decimal labels) and the levels of the measure's gain map.
    """
    gain_fn, _ = gain_function(m)
    extra = [level for level, _ in m.gains] if m.gains is not None else []
    out: list[F64] = []
    for labels in ctx.pool.label_lists():
        usable = labels[labels >= 0]
        top = int(np.floor(usable.max())) if len(usable) else -1
        levels = np.unique(np.concatenate([np.arange(top + 1.0), usable, extra]))
        out.append(gain_fn(levels))
    return out


def _rbp(m: Measure, ctx: _Context) -> F64:
    """Return rank-biased precision ``(1 - p) * sum(gain_i * p**i)`` (Moffat and Zobel 2008).

    As trec_eval does, gains outside [0, 1] are rescaled per query to
    ``(g - lo) / (hi - lo)`` over its gain levels, ``lo``/``hi`` taken with 0 (see
    docs/measures.md); a document outside the qrels, or with a negative label, has gain 0.
    """
    v = ctx.view(m.judged_only)
    L = v.L
    gain_fn, _ = gain_function(m)
    judged = L >= 0
    g = np.where(judged, gain_fn(np.where(judged, L, 0.0)), 0.0)
    levels = _level_gains(m, ctx)
    lo = np.array([min(0.0, float(x.min(initial=0.0))) for x in levels])
    hi = np.array([max(0.0, float(x.max(initial=0.0))) for x in levels])
    rescale = (lo < 0) | (hi > 1)
    if rescale.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = (g - lo[:, None]) / (hi - lo)[:, None]
        g = np.where(rescale[:, None] & judged, scaled, g)
    w = g.shape[1]
    weights = np.cumprod(np.concatenate([[1.0], np.full(max(w - 1, 0), m.p)]))[:w]
    return (1.0 - m.p) * (g @ weights if w else np.zeros(ctx.nq))


def _rbp_resid(m: Measure, ctx: _Context) -> F64:
    """Return RBP's residual: ``p**n + (1 - p) * sum(p**i)`` over unjudged ranks ``i``.

    trec_eval's rule: 0 when no retrieved document is unjudged (a document outside the
    qrels or with a negative label), even though the ranking's tail ``p**n`` remains.
    """
    v = ctx.view(m.judged_only)
    L = v.L
    unj = ~(L >= 0)
    unj &= np.arange(L.shape[1])[None, :] < v.n_eff[:, None]
    w = L.shape[1]
    weights = np.cumprod(np.concatenate([[1.0], np.full(w, m.p)]))  # p**0 .. p**w
    total = unj.astype(np.float64) @ weights[:w] if w else np.zeros(ctx.nq)
    tail = weights[np.minimum(v.n_eff, w)]
    return np.where(unj.any(axis=1), tail + (1.0 - m.p) * total, 0.0)


def _utility(m: Measure, ctx: _Context) -> F64:
    """Return ``a*relret + b*(ret - relret) + c*(R - relret) + d*(N + relret - ret - R)``."""
    v = ctx.view(m.judged_only)
    ret = v.n_ret.astype(np.float64)
    rel_ret = v.rel(m.rel).sum(axis=1).astype(np.float64)
    num_rel = ctx.pool.num_rel(m.rel).astype(np.float64)
    a, b, c, d = m.coeffs
    return (
        a * rel_ret
        + b * (ret - rel_ret)
        + c * (num_rel - rel_ret)
        + d * (m.n_docs + rel_ret - ret - num_rel)
    )


def _rel_p(m: Measure, ctx: _Context) -> F64:
    """Return relevant documents in the top k / min(k, R); 0 when R is 0."""
    v = ctx.view(m.judged_only)
    k = int(m.cutoff)  # type: ignore[arg-type]
    hits = v.rel(m.rel, k).sum(axis=1).astype(np.float64)
    return _safe_div(hits, np.minimum(k, ctx.pool.num_rel(m.rel)))


def _rprec_mult(m: Measure, ctx: _Context) -> F64:
    """Return precision at ``floor(x * R + 0.9)`` documents (trec_eval's Rprec_mult.x).

    Beyond the end of the ranking the missing documents count as non-relevant; a
    cutoff of 0 (R = 0, or a small x) scores 0.
    """
    v = ctx.view(m.judged_only)
    num_rel = ctx.pool.num_rel(m.rel)
    cut = np.floor(float(m.level) * num_rel.astype(np.float64) + 0.9).astype(np.int64)  # type: ignore[arg-type]
    look = np.minimum(cut, v.n_eff)
    out = np.zeros(ctx.nq)
    rows = np.flatnonzero(look > 0)
    if len(rows):
        cum = v.cumrel(m.rel)
        out[rows] = cum[rows, look[rows] - 1] / cut[rows]
    return out


def _bing(m: Measure, ctx: _Context) -> F64:
    """Return trec_eval's binG: 1/log2(2 + non-relevant above) per relevant hit, / R."""
    v = ctx.view(m.judged_only)
    rows, cols = v.hits(m.rel)
    counts = np.bincount(rows, minlength=ctx.nq)
    seen = np.arange(1, len(rows) + 1) - (np.cumsum(counts) - counts)[rows]
    term = 1.0 / np.log2((3 + cols - seen).astype(np.float64))
    total = np.bincount(rows, weights=term, minlength=ctx.nq)
    return _safe_div(total, ctx.pool.num_rel(m.rel))


def _unj(m: Measure, ctx: _Context) -> F64:
    """Return the unjudged documents (outside the qrels or negative) in the top k, / k."""
    v = ctx.view(m.judged_only)
    k = int(m.cutoff)  # type: ignore[arg-type]
    lab = _cut(v.L, k)
    unj = ~(lab >= 0)
    unj &= np.arange(lab.shape[1])[None, :] < v.n_eff[:, None]
    return unj.sum(axis=1) / float(k)


def _gain_matrices(m: Measure, ctx: _Context) -> tuple[F64, F64, NDArray[np.int64], F64]:
    """Return the results' gains, the ideal gains (both padded to one width), P and R-sums.

    The ideal is trec_eval's: the positive gains of the query's judged documents, highest
    first; ``P`` is how many there are and the last array their total.
    """
    v = ctx.view(m.judged_only)
    L = v.L
    gain_fn, _ = gain_function(m)
    judged = L >= 0
    g = np.where(judged, gain_fn(np.where(judged, L, 0.0)), 0.0)
    ideals = []
    for labels in ctx.pool.label_lists():
        gains = gain_fn(labels[labels >= 0])
        ideals.append(-np.sort(-gains[gains > 0]))
    n_pos = np.array([len(x) for x in ideals], dtype=np.int64)
    width = max(g.shape[1], int(n_pos.max(initial=0)))
    ideal = np.zeros((ctx.nq, width))
    for i, x in enumerate(ideals):
        ideal[i, : len(x)] = x
    if g.shape[1] < width:
        g = np.concatenate([g, np.zeros((ctx.nq, width - g.shape[1]))], axis=1)
    total = np.array([float(x.sum()) for x in ideals])
    return g, ideal, n_pos, total


def _g(m: Measure, ctx: _Context) -> F64:
    """Return trec_eval's G (normalised gain; see docs/measures.md)."""
    g, ideal, _, _ = _gain_matrices(m, ctx)
    if not g.shape[1]:
        return np.zeros(ctx.nq)
    cost = np.cumsum(np.maximum(ideal, 1.0), axis=1)
    got = np.cumsum(g, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(g != 0, g / np.log2(2.0 + cost - got), 0.0)
    total = term.sum(axis=1)
    sum_ideal = np.cumsum(ideal, axis=1)[:, -1]
    out = np.zeros(ctx.nq)
    np.divide(total, sum_ideal, out=out, where=sum_ideal > 0)
    return out


def _dcg_curves(g: F64, ideal: F64) -> tuple[F64, F64]:
    """Return the running DCG of the results and of the ideal (log2 discount, divided)."""
    disc = np.log2(np.arange(2.0, g.shape[1] + 2.0))
    return np.cumsum(g / disc, axis=1), np.cumsum(ideal / disc, axis=1)


def _ndcg_rel(m: Measure, ctx: _Context) -> F64:
    """Return trec_eval's ndcg_rel: NDCG averaged over the positive-gain documents."""
    g, ideal, n_pos, _ = _gain_matrices(m, ctx)
    if not g.shape[1]:
        return np.zeros(ctx.nq)
    rdcg, idcg = _dcg_curves(g, ideal)
    hit = g > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        at_hits = np.where(hit, rdcg / idcg, 0.0)
    # sequential sums, in rank order, as trec_eval adds them
    rows, cols = np.nonzero(hit)
    total = np.bincount(rows, weights=at_hits[rows, cols], minlength=ctx.nq).astype(np.float64)
    n_hits = hit.sum(axis=1)
    final = rdcg[:, -1]
    full = idcg[:, -1]
    out = np.zeros(ctx.nq)
    ok = n_pos > 0
    total[ok] += (n_pos[ok] - n_hits[ok]) * final[ok] / full[ok]
    good = ok & (total > 0)
    out[good] = total[good] / n_pos[good]
    return out


def _rlevel_ndcg(m: Measure, ctx: _Context) -> F64:
    """Return trec_eval's Rndcg: NDCG averaged at the ideal ranking's gain-level changes.

    At every rank ``b`` where the ideal gain changes (``1 <= b <= P``, the last being
    where the positive gains run out) it takes NDCG of the top ``min(b, n)`` results
    against the ideal's top ``b``; if the run retrieves more than ``P + 1`` documents,
    NDCG of the whole ranking against the whole ideal is one more point. 0 when R (at
    the relevance level) is 0 or nothing has a positive gain.
    """
    g, ideal, n_pos, _ = _gain_matrices(m, ctx)
    out = np.zeros(ctx.nq)
    if not g.shape[1]:
        return out
    rdcg, idcg = _dcg_curves(g, ideal)
    zero = np.zeros((ctx.nq, 1))
    rdcg = np.concatenate([zero, rdcg], axis=1)  # rdcg[:, k]: DCG of the top k
    idcg = np.concatenate([zero, idcg], axis=1)
    v = ctx.view(m.judged_only)
    n = v.n_eff
    num_rel = ctx.pool.num_rel(m.rel)
    for i in np.flatnonzero((num_rel > 0) & (n_pos > 0)).tolist():
        p = int(n_pos[i])
        row = ideal[i, :p]
        bounds = [b for b in range(1, p) if row[b] != row[b - 1]] + [p]
        total, count = 0.0, 0
        for b in bounds:
            total += rdcg[i, min(b, int(n[i]))] / idcg[i, b]
            count += 1
        if n[i] > p + 1:
            total += rdcg[i, int(n[i])] / idcg[i, p]
            count += 1
        out[i] = total / count
    return out


def _udcg(m: Measure, ctx: _Context) -> F64:
    from metrics.engine.udcg import udcg

    v = ctx.full
    return udcg(v.rel(m.rel), ctx.abstain, v.n_eff, m.cutoff, w_irr=m.w_irr)


def _pool_lists(pool: JudgedPool | SharedPool) -> list[F64]:
    return pool.label_lists()


def _sndcg(m: Measure, ctx: _Context) -> F64:
    from metrics.engine.standardized import sndcg

    v = ctx.full
    return sndcg(v.L, v.n_eff, _pool_lists(ctx.pool), m.cutoff, gain=m.gain)  # type: ignore[arg-type]


def _rndcg(m: Measure, ctx: _Context) -> F64:
    from metrics.engine.standardized import rndcg

    return rndcg(_pool_lists(ctx.pool), m.cutoff, gain=m.gain)  # type: ignore[arg-type]


_FAMILIES: dict[str, Callable[[Measure, _Context], F64]] = {
    "nDCG": _ndcg,
    "P": _precision,
    "R": _recall,
    "Success": _success,
    "RR": _rr,
    "AP": _ap,
    "Rprec": _rprec,
    "Bpref": _bpref,
    "Judged": _judged,
    "ERR": _err,
    "NumQ": _num_q,
    "NumRet": _num_ret,
    "NumRel": _num_rel,
    "NumRelRet": _num_rel_ret,
    "UDCG": _udcg,
    "sNDCG": _sndcg,
    "RNDCG": _rndcg,
    "GMAP": _ap,
    "GMBpref": _bpref,
    "IPrec": _iprec,
    "IPrecAvg": _iprec_avg,
    "SetP": _set_p,
    "SetR": _set_r,
    "SetF": _set_f,
    "SetAP": _set_ap,
    "SetRelP": _set_rel_p,
    "NumNonRelJudgedRet": _num_nonrel_judged_ret,
    "InfAP": _infap,
    "RBP": _rbp,
    "RBPResid": _rbp_resid,
    "Utility": _utility,
    "RelP": _rel_p,
    "RprecMult": _rprec_mult,
    "BinG": _bing,
    "G": _g,
    "nDCGRel": _ndcg_rel,
    "RLevelNDCG": _rlevel_ndcg,
    "Unj": _unj,
}


def as_pool(
    judged_labels: JudgedPool | SharedPool | Sequence[ArrayLike], n_queries: int
) -> JudgedPool | SharedPool:
    """Return ``judged_labels`` as a pool (shared or not) of ``n_queries`` queries."""
    pool = (
        judged_labels
        if isinstance(judged_labels, (JudgedPool, SharedPool))
        else JudgedPool.from_sequences(judged_labels)
    )
    if pool.n_queries != n_queries:
        raise ValueError(
            f"judged_labels has {pool.n_queries} queries but ranked_labels has {n_queries} rows"
        )
    return pool


def evaluate_ranked(
    ranked_labels: ArrayLike,
    n_ret: ArrayLike,
    judged_labels: JudgedPool | SharedPool | Sequence[ArrayLike],
    measures: Sequence[str | Measure] | str,
    *,
    rel_level: float = 1,
    scale_top: float = DEFAULT_SCALE_TOP,
    abstain: ArrayLike | None = None,
    padded: bool = False,
) -> dict[str, F64]:
    """Evaluate measures on padded rankings; return ``{canonical name: per-query values}``.

    Args:
        ranked_labels: float ``(n_queries, depth)``; the label of the document at each
            rank, NaN for unjudged.  Cells at or beyond ``n_ret`` are ignored.
        n_ret: int ``(n_queries,)``; documents retrieved per query.  May exceed
            ``depth`` (a truncated stored ranking): counts such as ``num_ret`` and the
            denominator of ``Judged@k`` use it, measures reading past ``depth`` see only
            the stored part.
        judged_labels: per query, the labels of all its judged documents (a
            :class:`JudgedPool`, a :class:`SharedPool` of one, or a sequence of arrays;
            NaN entries are ignored).
        measures: names in any accepted spelling (see :mod:`metrics.engine.measures`).
        rel_level: default relevance level of binary measures (trec_eval ``-l``).
        scale_top: top grade of the scale, for ``ideal=max`` and ``ERR``.
        abstain: optional float ``(n_queries, depth)`` of per-document abstention
            probabilities for ``UDCG`` (NaN or ``None``: 0).
        padded: the caller promises that every cell at or beyond ``n_ret`` already
            holds NaN, which saves masking the matrix (a third of the time for
            100 × 1,000 labels); a wrong promise gives wrong values.

    Returns:
        One float64 array of length ``n_queries`` per distinct canonical name.  A
        query whose ideal DCG is zero gets 0, 1 or NaN per the measure's ``empty=``
        policy; every other value is finite.  Counts (``num_ret``...) are floats.

    Raises:
        MeasureError: a name cannot be parsed.
        ValueError: the arrays do not fit together.
    """
    labels = np.asarray(ranked_labels, dtype=np.float64)
    if labels.ndim != 2:
        raise ValueError("ranked_labels must be a 2-D (n_queries, depth) array")
    nq = labels.shape[0]
    nret = np.asarray(n_ret, dtype=np.int64).ravel()
    if nret.shape != (nq,):
        raise ValueError(f"n_ret has {nret.size} entries but ranked_labels has {nq} rows")
    if nq and nret.min() < 0:
        raise ValueError("n_ret must be non-negative")
    pool = as_pool(judged_labels, nq)
    p0 = None
    if abstain is not None:
        p0 = np.asarray(abstain, dtype=np.float64)
        if p0.shape != labels.shape:
            raise ValueError(f"abstain has shape {p0.shape}, ranked_labels {labels.shape}")
    ms = parse_measures(measures, rel_level=rel_level, scale_top=scale_top)
    return compute(ms, labels, nret, pool, abstain=p0, padded=padded)


def compute(
    measures: Sequence[Measure],
    labels: F64,
    n_ret: NDArray[np.int64],
    pool: JudgedPool | SharedPool,
    *,
    abstain: F64 | None = None,
    padded: bool = False,
) -> dict[str, F64]:
    """Evaluate already parsed measures (no input checks; see :func:`evaluate_ranked`).

    ``padded=True`` promises that cells at or beyond ``n_ret`` already hold NaN.
    """
    ctx = _Context(labels, n_ret, pool, abstain, padded)
    out: dict[str, F64] = {}
    for m in measures:
        name = m.canonical
        if name not in out and not m.is_text:
            out[name] = np.asarray(_FAMILIES[m.family](m, ctx), dtype=np.float64)
    return out


def relstrings(
    m: Measure, labels: F64, n_ret: NDArray[np.int64], *, padded: bool = False
) -> list[str]:
    """Return trec_eval's ``relstring`` of each row: one character per top-k document.

    ``0``-``9`` a label (decimal labels shown by their whole part), ``>`` above 9, ``-``
    a document outside the qrels, ``.`` a negative label (in the qrels, unjudged).
    Text measures are not computed by :func:`compute` (they have no numeric value).
    """
    v = _Context(labels, n_ret, JudgedPool.empty(labels.shape[0]), None, padded).view(m.judged_only)
    k = int(m.cutoff)  # type: ignore[arg-type]
    out = []
    for row, n in zip(v.L[:, :k].tolist(), np.minimum(v.n_eff, k).tolist(), strict=True):
        chars = []
        for x in row[:n]:
            if x != x:  # NaN: not in the qrels
                chars.append("-")
            elif x < 0:
                chars.append(".")
            elif x > 9:
                chars.append(">")
            else:
                chars.append(str(int(x)))
        out.append("".join(chars))
    return out


def zero_omitted(measures: Sequence[Measure], values: dict[str, F64], omitted: ArrayLike) -> None:
    """Score the queries a run omits 0 on every averaged measure, in place (trec_eval ``-c``).

    The one rule for a judged query the run has no ranking for, shared by ``evaluate``
    and live scoring: 0 on every measure that is averaged (``mean`` and ``gm``), whatever
    an empty ranking would score otherwise -- ``nDCG(ideal=local,empty=one)`` of nothing
    would be 1, and sNDCG of nothing undefined. Counts (``num_rel``...) keep their values:
    the query's relevant documents still count. ``omitted`` is a boolean mask over the
    rows of ``values``.
    """
    mask = np.asarray(omitted, dtype=bool)
    if not mask.any():
        return
    for m in measures:
        if m.aggregate in ("mean", "gm"):
            values[m.canonical][mask] = 0.0
