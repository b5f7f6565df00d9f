"""Replay judging in a strategy's order with known grades as the oracle (pure; no Django).

:func:`simulate` asks a strategy (:mod:`metrics.pool.strategies`) for pairs, answers
each with the campaign's full qrels, and every ``step`` judgments scores all runs with
the grades found so far. The runs are then ranked by their mean score and compared with
their ranking under the full qrels (Kendall's τ-b and τ_AP,
:mod:`metrics.engine.rankcorr`). This is how the literature compares pooling strategies
(Losada et al. 2017): judgments spent against relevant documents found and against the
fidelity of the system ranking.

Edge cases: a pair the qrels do not grade counts as judged not relevant (grade 0), as a
pooled document missing from TREC qrels would. The reference ranking uses every qrels
grade, also of documents no run retrieved (they count in the ideal ranking). With fewer
than two runs, or all runs tied, τ is undefined (NaN).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from metrics.engine import JudgedPool, evaluate_ranked, read_qrels, read_run
from metrics.engine.rankcorr import RankCorrelationUndefinedWarning, tau_ap
from metrics.engine.rankcorr import kendall_tau_b as kendall_tau_b_scipy
from metrics.pool.strategies import Campaign, NdcgCut, Scorer, Strategy

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class Step:
    """The state after ``judged`` judgments."""

    judged: int
    relevant: int
    tau: float
    tau_ap: float


def oracle(campaign: Campaign, qrels: Mapping[str, Mapping[str, float]]) -> list[F64]:
    """Return each query's grade per document code (0 where the qrels give none)."""
    out = []
    for q, names in zip(campaign.queries, campaign.docnos, strict=True):
        graded = qrels.get(q, {})
        out.append(np.array([float(graded.get(d, 0.0)) for d in names]))
    return out


def make_scorer(
    campaign: Campaign, measure: str = "ndcg_cut.10", extra: list[F64] | None = None
) -> Scorer:
    """Return a function scoring every run on every query from labels per document code.

    The labels are one float array per query, NaN where not judged. ``extra`` adds, per
    query, judged labels of documents outside the campaign's rankings (for the ideal).
    """
    n_runs, n_queries = len(campaign.runs), len(campaign.queries)
    width = max(m.shape[1] for m in campaign.rankings)
    offsets = np.concatenate(([0], np.cumsum(campaign.n_docs)))
    hole = int(offsets[-1])  # index of a NaN cell after every query's labels
    codes = np.full((n_runs, n_queries, width), hole, dtype=np.int64)
    for q, matrix in enumerate(campaign.rankings):
        present = matrix >= 0
        block = np.where(present, matrix + offsets[q], hole)
        codes[:, q, : matrix.shape[1]] = block
    codes = codes.reshape(n_runs * n_queries, width)
    n_ret = (codes != hole).sum(axis=1)
    row_query = np.tile(np.arange(n_queries), n_runs)

    def scores(labels: list[F64]) -> F64:
        flat = np.concatenate([*labels, [np.nan]])
        ranked = flat[codes]
        judged = [lab[~np.isnan(lab)] for lab in labels]
        if extra is not None:
            judged = [np.concatenate((a, b)) for a, b in zip(judged, extra, strict=True)]
        pool = JudgedPool.from_sequences(judged).shared(row_query)
        values = evaluate_ranked(ranked, n_ret, pool, [measure])
        (column,) = values.values()
        return np.nan_to_num(column).reshape(n_runs, n_queries)

    return scores


def reference_scores(
    campaign: Campaign, qrels: Mapping[str, Mapping[str, float]], measure: str = "ndcg_cut.10"
) -> F64:
    """Return each run's mean score under the full qrels (the ranking to reproduce).

    Graded documents that no run pooled count too: they are part of the ideal ranking.
    """
    outside = []
    for q, names in zip(campaign.queries, campaign.docnos, strict=True):
        pooled = set(names)
        graded = qrels.get(q, {})
        outside.append(np.array([g for d, g in graded.items() if d not in pooled], dtype=float))
    scores = make_scorer(campaign, measure, extra=outside)
    return scores(oracle(campaign, qrels)).mean(axis=1)


def kendall_tau_b(x: F64, y: F64) -> float:
    """Return Kendall's τ-b of two score vectors over all pairs (NaN when undefined).

    The same number as :func:`metrics.engine.rankcorr.kendall_tau_b` (scipy's), by one
    vectorised pass over the n² pairs: the simulation takes τ of a few dozen runs
    hundreds of times, where scipy's per-call overhead dominates.
    """
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(len(x), 1)
    sx, sy = dx[upper], dy[upper]
    n_x, n_y = np.count_nonzero(sx), np.count_nonzero(sy)
    if n_x == 0 or n_y == 0:
        return float("nan")
    return float(np.dot(sx, sy) / np.sqrt(float(n_x) * float(n_y)))


def _correlations(estimated: F64, reference: F64) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankCorrelationUndefinedWarning)
        if len(estimated) < 2 or not np.isfinite(estimated).all():
            tau = kendall_tau_b_scipy(estimated, reference)
        else:
            tau = kendall_tau_b(np.asarray(estimated, float), np.asarray(reference, float))
        return tau, tau_ap(estimated, reference)


def simulate(
    campaign: Campaign,
    grades: list[F64],
    strategy: Strategy,
    *,
    budget: int,
    step: int,
    scores: Scorer | None = None,
    reference: F64,
    rel_level: float = 1.0,
    tracker: NdcgCut | None = None,
    means: list[F64] | None = None,
) -> list[Step]:
    """Judge up to ``budget`` pairs in ``strategy``'s order; report every ``step`` of them.

    ``grades`` answers each pair (:func:`oracle`); ``reference`` is each run's mean score
    under the full qrels. The runs are scored with ``scores`` (a full rescoring at each
    step) or, for ``ndcg_cut.k``, with a fresh :class:`NdcgCut` ``tracker`` updated at
    each grade (the same numbers, much faster). The last row is the state when the budget
    or the pool ran out. ``means``, when given, receives each row's mean score per run
    (what :func:`worst_loss` needs).
    """
    if budget < 1 or step < 1:
        raise ValueError("budget and step must be positive")
    if (scores is None) == (tracker is None):
        raise ValueError("give either scores or a tracker")
    labels = [np.full(len(g), np.nan) for g in grades]
    rows: list[Step] = []
    judged = relevant = 0

    def report() -> None:
        now = tracker.means() if tracker is not None else scores(labels).mean(axis=1)
        tau, tap = _correlations(now, reference)
        rows.append(Step(judged, relevant, tau, tap))
        if means is not None:
            means.append(np.array(now, dtype=float))

    report()
    while judged < budget:
        pair = strategy.next_pair()
        if pair is None:
            break
        q, d = pair
        grade = float(grades[q][d])
        labels[q][d] = grade
        strategy.observe(q, d, grade)
        if tracker is not None:
            tracker.observe(q, d, grade)
        judged += 1
        relevant += grade >= rel_level
        if judged % step == 0:
            report()
    if rows[-1].judged != judged:
        report()
    return rows


def judgments_to_reach(rows: list[Step], tau: float = 0.9, *, field: str = "tau") -> int | None:
    """Return the judgments after which τ first reached ``tau`` and stayed, or ``None``.

    ``field`` names the correlation: ``"tau"`` (Kendall's τ-b) or ``"tau_ap"``.
    """
    reached = None
    for row in rows:
        below = not getattr(row, field) >= tau  # NaN counts as below
        reached = None if below else (row.judged if reached is None else reached)
    return reached


def _fidelity(order: NDArray[np.int64], reference: F64, field: str) -> float:
    """Return τ-b or τ_AP of the ranking ``order`` (best first, strict) against ``reference``."""
    placed = np.empty(len(order))
    placed[order] = -np.arange(len(order), dtype=float)  # a strict score: no ties
    return _correlations(placed, reference)[0 if field == "tau" else 1]


def swaps_below(
    estimated: F64, reference: F64, bar: float, *, field: str = "tau", cap: int = 5
) -> int:
    """Return how many swaps of neighbours the ranking by ``estimated`` is from the bar.

    0 when its τ-b (``field="tau"``) or τ_AP (``"tau_ap"``) against ``reference`` is at
    least ``bar``. Otherwise swaps of two neighbouring runs are made one at a time, each
    time the one that raises the fidelity most, until the bar is met: the count, at most
    ``cap`` (``cap`` means "``cap`` or more"). For τ-b and a reference without ties this
    is exact: swapping two neighbours changes the discordant pairs by exactly one, so the
    count is the discordant pairs beyond the most the bar allows. For τ_AP it is an upper
    bound of the fewest swaps (a greedy search). Ties in ``estimated`` are broken by run
    order (a stable sort), as the leaderboard lists tied runs.
    """
    estimated = np.asarray(estimated, dtype=float)
    reference = np.asarray(reference, dtype=float)
    if not _correlations(estimated, reference)[0 if field == "tau" else 1] < bar:
        return 0
    order = np.argsort(-estimated, kind="stable")
    n = len(order)
    if field == "tau" and len(np.unique(reference)) == n:
        # exact and fast: one swap of neighbours changes the discordant pairs by one
        ranked = reference[order]
        discordant = int(np.triu(ranked[:, None] < ranked[None, :], 1).sum())
        pairs = n * (n - 1) // 2
        allowed = next(d for d in range(discordant, -1, -1) if 1.0 - 2.0 * d / pairs >= bar)
        return min(cap, max(discordant - allowed, 1))
    for count in range(1, cap + 1):
        best, best_value = None, -np.inf
        for i in range(len(order) - 1):
            trial = order.copy()
            trial[i], trial[i + 1] = trial[i + 1], trial[i]
            value = _fidelity(trial, reference, field)
            if value > best_value:
                best, best_value = trial, value
        if best is None:
            return cap
        if best_value >= bar:
            return count
        order = best
    return cap


def worst_loss(
    rows: list[Step],
    means: list[F64],
    reference: F64,
    bar: float,
    *,
    field: str = "tau",
    hold: int = 0,
    cap: int = 5,
) -> tuple[int | None, int]:
    """Return when a fidelity was first held at ``bar`` and how far it fell below it later.

    The fidelity (``field``: ``"tau"`` or ``"tau_ap"``) is *held* from the first row from
    which it stays at or above ``bar`` for at least ``hold`` judgments (``hold=0``: the
    first row that touches the bar), or to the last row. The loss is the largest
    :func:`swaps_below` over the rows after that one (0 when it never falls below the bar
    again). ``means[i]`` holds row ``i``'s mean per run (:func:`simulate`'s ``means``).
    Returns ``(None, 0)`` when the bar is never held.
    """
    values = [getattr(row, field) for row in rows]
    start = None
    for i, value in enumerate(values):
        if not value >= bar:
            continue
        j = i
        while j + 1 < len(rows) and values[j + 1] >= bar and rows[j].judged - rows[i].judged < hold:
            j += 1
        if rows[j].judged - rows[i].judged >= hold or j == len(rows) - 1:
            start = i
            break
    if start is None:
        return None, 0
    worst = 0
    for i in range(start + 1, len(rows)):
        if not values[i] >= bar:
            worst = max(worst, swaps_below(means[i], reference, bar, field=field, cap=cap))
    return rows[start].judged, worst


def load_files(
    qrels_path: str, run_paths: list[str], depth: int | None = None
) -> tuple[Campaign, dict[str, dict[str, float]]]:
    """Read TREC (or JSON) qrels and runs with the engine; return the campaign and qrels.

    Each run keeps its top ``depth`` per query; it is named by its run tag (the file name
    when two runs share one). Raises the engine's :class:`EngineInputError` on bad input.
    """
    judged = read_qrels(qrels_path)
    qrels: dict[str, dict[str, float]] = {}
    names = [b.decode("utf-8") for b in judged.docnos.to_pylist()]
    for code, docno, label in zip(
        judged.qcode.tolist(), names, judged.labels.tolist(), strict=True
    ):
        qrels.setdefault(judged.qids[code], {})[docno] = label
    rankings: dict[str, dict[str, list[str]]] = {}
    for path in run_paths:
        run = read_run(path)
        order, start, count = run.ranking()
        docnos = [b.decode("utf-8") for b in run.docnos.to_pylist()]
        per_query = {}
        for code, qid in enumerate(run.qids):
            rows = order[start[code] : start[code] + count[code]][:depth]
            per_query[qid] = [docnos[i] for i in rows.tolist()]
        tag = run.tag if run.tag not in rankings else path
        rankings[tag] = per_query
    return Campaign.from_rankings(rankings, depth), qrels
