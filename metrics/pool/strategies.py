"""Orders in which to judge a campaign's pooled pairs (pure numpy; no Django).

A *campaign* is the runs' rankings of each query, integer-coded (:class:`Campaign`). A
*strategy* picks the next (query, document) pair to judge and learns from each grade
(:meth:`Strategy.observe`), so the order adapts as judging goes. The strategies:

``depth``
    Depth-k pooling, the order Graded used so far: every document in some run's top
    ``k``, shallowest first (by its best rank over the runs, then its code).
``mtf``
    Move-to-front (Cormack, Palmer and Clarke, SIGIR 1998). Each run has a priority,
    all equal at first. Judging takes the next unjudged document of a run with the
    highest priority. After a relevant document it stays with that run (while the run
    has the highest priority); a non-relevant one lowers the run's priority by one and
    moves on to the next run with the highest priority, in cyclic order. So a run keeps
    the judge while it finds relevant documents and loses the judge at its first miss.
``mm-ns`` and ``thompson``
    Bandits (Losada, Parapar and Barreiro, SAC 2016 and IP&M 2017): the runs of a query
    are the arms; pulling an arm judges the run's next unjudged document, and the reward
    is 1 if it is relevant, else 0. ``thompson`` draws each arm's relevance rate from its
    Beta(1 + hits, 1 + misses) posterior and pulls the largest draw. ``mm-ns`` pulls the
    arm with the largest posterior mean (1 + hits) / (2 + hits + misses), with hits and
    misses discounted by ``decay`` at each pull of that arm: deeper documents are less
    often relevant, so a run's recent rewards say more than its early ones (our reading
    of the papers' non-stationary variant; see docs/pooling.md).
``swap``
    Graded's own: judge first the documents that settle the order of runs the leaderboard
    may be showing the wrong way round. Each run is compared with the ``window`` runs
    below it. For a pair of runs, the difference of their DCG at the cut-off (each query
    over its ideal DCG so far) is what the judged documents give plus a random part from
    the unjudged ones, whose grades are predicted from the grades judged at the same best
    rank. A normal approximation of that part gives the chance that the pair's true order
    is not the one the leaderboard shows. A document's weight is the sum, over the pairs,
    of that chance times how far its grade would move the pair (its expected gain times
    the difference of the two runs' rank discounts at it): a document every run ranks
    alike weighs nothing, nor does one that only moves pairs already settled. The idea is
    that of minimal test collections (Carterette, Allan and Sitaraman, SIGIR 2006): judge
    what decides the comparisons between systems, not what is likely relevant. Weighed
    again every ``refresh`` picks. One pick in ten (``explore``) is depth order's, and so
    is every pick when nothing above the cut-off weighs anything.
``steady``
    The order to pick when unsure (:data:`RECOMMENDED`; docs/pooling.md, *The family of
    campaigns*): ``hybrid``'s weighing, with the doubt of a pair counted in both
    directions (the chance that its unjudged part exceeds the gap shown), each run's
    documents within the cut-off judged from its top down (the pairs' weight counts only
    its shallowest unjudged one of a query), and every document also weighed by what its
    grade may add to its query's ideal DCG (:class:`Steady`).
``hybrid``
    ``steady``'s predecessor, recommended until issue 45 (docs/pooling.md). The same
    pairs of runs and the same chance that each is shown the wrong way round as ``swap``,
    but a document weighs how much judging it lowers the doubt-weighted expected squared
    error of the pairs' differences: a bias part (judge the documents of the run the
    unjudged part underrates, which keeps close runs evenly covered) and a variance part
    (judge the documents that split the runs). Grades are predicted per best-rank band and
    share of runs retrieving the document. Pairs near the top count more (as in τ_AP).
    Everything is kept up to date per grade (:class:`NdcgCut`, cell counts) and weighed
    with ``bincount`` over the (document, run) entries within the cut-off, so it needs no
    scorer and is fast.

The per-query strategies (``depth``, ``mtf``, bandits) share the budget between queries
round-robin: each pick goes to the next query that still has an unjudged pooled
document, so every query gets the same number of judgments while it has documents.
``swap``, ``hybrid`` and ``steady`` pick over all queries at once.

Relevant means a grade of at least ``rel_level`` (1: any grade above "not relevant").
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtr

from metrics.pool.stopping import RANK_BANDS

__all__ = [
    "RECOMMENDED",
    "STRATEGIES",
    "Bandit",
    "Campaign",
    "DepthK",
    "Hybrid",
    "MoveToFront",
    "NdcgCut",
    "Steady",
    "Strategy",
    "Swap",
    "make_strategy",
    "plan",
    "tie_key",
]

I64 = NDArray[np.int64]
F64 = NDArray[np.float64]
Pair = tuple[int, int]

#: Significant digits (of the largest magnitude) that orders compare: see :func:`tie_key`.
TIE_DIGITS = 9


def tie_key(values: F64, *, digits: int = TIE_DIGITS) -> F64:
    """Return ``values`` rounded to ``digits`` decimals of their largest finite magnitude.

    The weights and means the weighed strategies order by are sums whose last bits depend
    on the CPU: numpy's reductions and transcendental functions take other SIMD paths on
    other machines (AVX-512 or not), so two documents that weigh the same could compare
    one way on one machine and the other way on the next. Ordering by this key, with ties
    broken by index (a stable sort), gives the same order on every machine, unless a value
    falls within a few units in the last place of a rounding boundary (a chance of about
    1e-7 per value). Edge cases: an empty or all-zero array, and non-finite values, are
    returned as they are (NaN stays NaN, infinities stay infinite).
    """
    v = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(v)
    largest = float(np.max(np.abs(v[finite]))) if finite.any() else 0.0
    if largest == 0.0:
        return v.copy()
    return np.where(finite, np.round(v / largest, digits), v)


@dataclass(frozen=True)
class Campaign:
    """Runs over queries, integer-coded.

    ``rankings[q]`` is an int64 array ``(n_runs, depth)``: the code of the document each
    run ranks at each rank for query ``q``, ``-1`` past the end of a run's list. Codes
    of query ``q`` are ``0 .. n_docs[q] - 1``; ``docnos[q][code]`` names them.
    """

    queries: tuple[str, ...]
    runs: tuple[str, ...]
    rankings: tuple[I64, ...]
    docnos: tuple[tuple[str, ...], ...]

    @property
    def n_docs(self) -> list[int]:
        """Return the number of distinct documents of each query."""
        return [len(names) for names in self.docnos]

    @classmethod
    def from_rankings(
        cls, rankings: Mapping[str, Mapping[str, Sequence[str]]], depth: int | None = None
    ) -> Campaign:
        """Build a campaign from ``{run: {query: [docno, ... best first]}}``.

        ``depth`` keeps each run's top ``depth`` only. Queries are sorted; runs keep
        their order. A query no run ranks anything for is left out.
        """
        runs = tuple(rankings)
        queries = sorted({q for ranked in rankings.values() for q, docs in ranked.items() if docs})
        all_rankings, all_docnos = [], []
        for q in queries:
            codes: dict[str, int] = {}
            lists = [list(rankings[r].get(q, ()))[:depth] for r in runs]
            width = max(len(docs) for docs in lists)
            matrix = np.full((len(runs), width), -1, dtype=np.int64)
            for i, docs in enumerate(lists):
                matrix[i, : len(docs)] = [codes.setdefault(d, len(codes)) for d in docs]
            all_rankings.append(matrix)
            all_docnos.append(tuple(codes))
        return cls(tuple(queries), runs, tuple(all_rankings), tuple(all_docnos))

    def best_rank(self, q: int) -> I64:
        """Return each document's best (smallest, 0-based) rank over the runs of query ``q``."""
        matrix = self.rankings[q]
        best = np.full(len(self.docnos[q]), np.iinfo(np.int64).max, dtype=np.int64)
        ranks = np.broadcast_to(np.arange(matrix.shape[1]), matrix.shape)
        present = matrix >= 0
        np.minimum.at(best, matrix[present], ranks[present])
        return best


class NdcgCut:
    """Each run's ``ndcg_cut.k`` kept up to date one grade at a time.

    The same numbers as :func:`metrics.pool.simulation.make_scorer` gives for
    ``ndcg_cut.k`` (gain = grade, discount ``1 / log2(rank + 1)`` at 1-based ranks, each
    query's ideal from its judged grades, 0 for a query without a positive grade), without
    rescoring every run on every query: a grade adds its gain times each run's discount
    at the document to that run's DCG of the query, and updates that query's ideal. The
    simulation and the ``hybrid`` strategy use it. Edge cases: grading a pair twice
    replaces the first grade; a negative grade gains nothing (it counts as 0).
    """

    def __init__(self, campaign: Campaign, k: int = 10) -> None:
        """Index, per query and document, the runs that rank it within ``k`` and where."""
        self.k = k
        n_runs, n_queries = len(campaign.runs), len(campaign.queries)
        self._dcg = np.zeros((n_queries, n_runs))  # row per query: one contiguous update
        self.ideal = np.zeros(n_queries)
        self._top: list[list[float]] = [[] for _ in range(n_queries)]
        self._gain: list[dict[int, float]] = [{} for _ in range(n_queries)]  # judged grades
        self._weights = (1.0 / np.log2(np.arange(k) + 2.0)).tolist()
        self._entries: list[list[tuple[I64, F64] | None]] = []
        for matrix, n in zip(campaign.rankings, campaign.n_docs, strict=True):
            top = matrix[:, :k]
            runs, ranks = np.nonzero(top >= 0)
            docs = top[runs, ranks]
            order = np.argsort(docs, kind="stable")
            runs, discounts = runs[order], np.asarray(self._weights)[ranks[order]]
            start = np.searchsorted(docs[order], np.arange(n + 1)).tolist()
            self._entries.append(
                [
                    (runs[lo:hi], discounts[lo:hi]) if hi > lo else None
                    for lo, hi in itertools.pairwise(start)
                ]
            )

    @property
    def dcg(self) -> F64:
        """Return each run's DCG@k of each query (``(n_runs, n_queries)``)."""
        return self._dcg.T

    def observe(self, q: int, d: int, grade: float) -> None:
        """Add (or replace) the grade of document ``d`` of query ``q``."""
        gain = max(float(grade), 0.0)
        known = self._gain[q]
        old = known.get(d)
        known[d] = gain
        entry = self._entries[q][d]
        if entry is not None and gain != (old or 0.0):
            runs, discounts = entry
            self._dcg[q, runs] += (gain - (old or 0.0)) * discounts
        top = self._top[q]
        if old is not None:  # a replaced grade: rebuild this query's ideal
            if old == gain:
                return
            top[:] = sorted((g for g in known.values() if g > 0), reverse=True)[: self.k]
        elif gain > 0 and (len(top) < self.k or gain > top[-1]):
            top.append(gain)
            top.sort(reverse=True)
            del top[self.k :]
        else:
            return  # the ideal is unchanged
        self.ideal[q] = sum(g * w for g, w in zip(top, self._weights, strict=False))

    def scores(self) -> F64:
        """Return each run's nDCG@k of each query (``(n_runs, n_queries)``)."""
        dcg = self.dcg
        return np.divide(dcg, self.ideal, out=np.zeros_like(dcg), where=self.ideal > 0)

    def means(self) -> F64:
        """Return each run's mean nDCG@k over the queries."""
        return self.scores().mean(axis=1)


class Strategy:
    """Pick pairs to judge one at a time; learn from each grade."""

    name = ""

    def __init__(self, campaign: Campaign, *, rel_level: float = 1.0) -> None:
        """Start with nothing judged."""
        self.campaign = campaign
        self.rel_level = rel_level
        self.judged = [np.zeros(n, dtype=bool) for n in campaign.n_docs]

    def next_pair(self) -> Pair | None:
        """Return the next (query, document code) to judge, or ``None`` when none is left."""
        raise NotImplementedError

    #: Whether the strategy weighs every known grade at once (``swap``): :func:`plan` then
    #: tells it all of them before asking for picks.
    global_view = False

    def observe(self, q: int, d: int, grade: float) -> None:
        """Record the grade of a pair (judged by anyone: the strategy's pick or not)."""
        self.judged[q][d] = True

    def pend(self, q: int, d: int) -> None:
        """Take a picked pair whose grade is not known yet: never pick it again, learn nothing."""
        self.judged[q][d] = True


class _PerQuery(Strategy):
    """A strategy that orders each query's documents on its own, queries in turn."""

    def __init__(self, campaign: Campaign, *, rel_level: float = 1.0) -> None:
        """Start the round-robin at the first query."""
        super().__init__(campaign, rel_level=rel_level)
        self._turn = 0

    def pick(self, q: int) -> int | None:
        """Return query ``q``'s next document to judge, or ``None`` if it has none left."""
        raise NotImplementedError

    def next_pair(self) -> Pair | None:
        """Return the next query's pick, skipping queries with nothing left to judge."""
        n = len(self.campaign.queries)
        for step in range(n):
            q = (self._turn + step) % n
            d = self.pick(q)
            if d is not None:
                self._turn = (q + 1) % n
                return q, d
        return None


class DepthK(_PerQuery):
    """Depth-k pooling: the documents in some run's top ``k``, shallowest first."""

    name = "depth"

    def __init__(self, campaign: Campaign, *, k: int = 100, rel_level: float = 1.0) -> None:
        """Order each query's pool by best rank over the runs, then by document code."""
        super().__init__(campaign, rel_level=rel_level)
        self._order = []
        for q in range(len(campaign.queries)):
            best = campaign.best_rank(q)
            pooled = np.flatnonzero(best < k)
            self._order.append(pooled[np.lexsort((pooled, best[pooled]))])
        self._next = [0] * len(campaign.queries)

    def pick(self, q: int) -> int | None:
        """Return the shallowest pooled document of ``q`` not judged yet."""
        order, judged = self._order[q], self.judged[q]
        i = self._next[q]
        while i < len(order) and judged[order[i]]:
            i += 1
        self._next[q] = i
        return int(order[i]) if i < len(order) else None


class _RunPointers(_PerQuery):
    """Per query and run: the rank of the run's next document that is not judged yet."""

    def __init__(self, campaign: Campaign, *, rel_level: float = 1.0) -> None:
        """Point every run at its first document."""
        super().__init__(campaign, rel_level=rel_level)
        self._pointer = [np.zeros(len(campaign.runs), dtype=np.int64) for _ in campaign.queries]
        self._pulled: dict[Pair, int] = {}  # pair picked -> the run it was picked from

    def _next_document(self, q: int, r: int) -> int | None:
        """Return run ``r``'s next unjudged document of ``q`` (advancing past judged ones)."""
        row, judged, pointer = self.campaign.rankings[q][r], self.judged[q], self._pointer[q]
        i = int(pointer[r])
        while i < len(row) and row[i] >= 0 and judged[row[i]]:
            i += 1
        pointer[r] = i
        return int(row[i]) if i < len(row) and row[i] >= 0 else None

    def _live_runs(self, q: int) -> list[int]:
        """Return the runs of ``q`` that still have an unjudged document."""
        return [r for r in range(len(self.campaign.runs)) if self._next_document(q, r) is not None]

    def choose_run(self, q: int, live: list[int]) -> int:
        """Return the run to take ``q``'s next document from (``live`` is not empty)."""
        raise NotImplementedError

    def pick(self, q: int) -> int | None:
        """Take the next unjudged document of the run :meth:`choose_run` names."""
        live = self._live_runs(q)
        if not live:
            return None
        r = self.choose_run(q, live)
        d = self._next_document(q, r)
        assert d is not None
        self._pulled[(q, d)] = r
        return d

    def observe(self, q: int, d: int, grade: float) -> None:
        """Record the grade, and reward the run the pair was picked from."""
        super().observe(q, d, grade)
        r = self._pulled.pop((q, d), None)
        if r is not None:
            self.reward(q, r, grade >= self.rel_level)

    def pend(self, q: int, d: int) -> None:
        """Take the pick without a reward: the run keeps its state (see :func:`plan`)."""
        super().pend(q, d)
        self._pulled.pop((q, d), None)

    def reward(self, q: int, r: int, relevant: bool) -> None:
        """Learn from the outcome of judging run ``r``'s document of query ``q``."""
        raise NotImplementedError


class MoveToFront(_RunPointers):
    """Move-to-front pooling (Cormack, Palmer and Clarke, 1998)."""

    name = "mtf"

    def __init__(self, campaign: Campaign, *, rel_level: float = 1.0) -> None:
        """Give every run of every query the same priority; start before the first run."""
        super().__init__(campaign, rel_level=rel_level)
        self.priority = [np.zeros(len(campaign.runs), dtype=np.int64) for _ in campaign.queries]
        self._current = [len(campaign.runs) - 1] * len(campaign.queries)
        self._stay = [False] * len(campaign.queries)

    def choose_run(self, q: int, live: list[int]) -> int:
        """Return the run to judge from next.

        Stay with the run that just found a relevant document while it has the top
        priority; otherwise take the next run with the top priority in cyclic order.
        """
        priority, current = self.priority[q], self._current[q]
        top = max(int(priority[r]) for r in live)
        if self._stay[q] and current in live and priority[current] == top:
            return current
        n = len(self.campaign.runs)
        for step in range(1, n + 1):  # the runs after the current one, the current one last
            r = (current + step) % n
            if r in live and priority[r] == top:
                self._current[q] = r
                return r
        raise AssertionError("a live run has the top priority")

    def reward(self, q: int, r: int, relevant: bool) -> None:
        """Keep the run after a relevant document; lower its priority by one after a miss."""
        self._stay[q] = relevant
        if not relevant:
            self.priority[q][r] -= 1


class Bandit(_RunPointers):
    """Runs as the arms of a Bernoulli bandit per query (Losada, Parapar and Barreiro)."""

    def __init__(
        self,
        campaign: Campaign,
        *,
        rule: str = "mm-ns",
        decay: float = 0.9,
        seed: int = 0,
        rel_level: float = 1.0,
    ) -> None:
        """Start every arm at Beta(1, 1): no hits, no misses."""
        if rule not in ("mm-ns", "mm", "thompson"):
            raise ValueError(f"unknown bandit rule {rule!r}; use mm-ns, mm or thompson")
        if not 0 < decay <= 1:
            raise ValueError("decay must be in (0, 1]")
        super().__init__(campaign, rel_level=rel_level)
        self.name = rule
        self.decay = decay if rule == "mm-ns" else 1.0
        self.hits = [np.zeros(len(campaign.runs)) for _ in campaign.queries]
        self.misses = [np.zeros(len(campaign.runs)) for _ in campaign.queries]
        self._rng = np.random.default_rng(seed)

    def choose_run(self, q: int, live: list[int]) -> int:
        """Pull the live arm with the largest posterior mean (or Thompson draw); ties: first."""
        arms = np.asarray(live)
        alpha, beta = 1.0 + self.hits[q][arms], 1.0 + self.misses[q][arms]
        thompson = self.name == "thompson"
        score = self._rng.beta(alpha, beta) if thompson else alpha / (alpha + beta)
        return int(arms[int(np.argmax(score))])

    def reward(self, q: int, r: int, relevant: bool) -> None:
        """Add the reward (1 relevant, else 0) to the arm, after discounting its past."""
        self.hits[q][r] = self.decay * self.hits[q][r] + (1.0 if relevant else 0.0)
        self.misses[q][r] = self.decay * self.misses[q][r] + (0.0 if relevant else 1.0)


#: ``scores(labels)`` -> ``(n_runs, n_queries)`` measure values from the labels so far
#: (a list of one float array per query, NaN where not judged).
Scorer = Callable[[list[F64]], F64]


class _Weighed(Strategy):
    """What ``swap`` and ``hybrid`` share: weighed picks, some in depth order, and a queue.

    Both compare each run with the ``window`` runs below it at the ``cutoff``, weigh the
    documents every ``refresh`` picks (or so) into a queue of picks, take a share
    ``explore`` of their picks in depth order (:meth:`_explore_pick`), and fall back on
    depth order for a while when nothing weighs anything (:meth:`_cooling_pick`).
    """

    global_view = True

    def __init__(
        self,
        campaign: Campaign,
        *,
        cutoff: int,
        refresh: int,
        window: int,
        explore: float,
        rel_level: float,
    ) -> None:
        """Check ``explore``; set up the depth order, the queue and the explore credit."""
        if not 0 <= explore <= 1:
            raise ValueError("explore must be in [0, 1]")
        super().__init__(campaign, rel_level=rel_level)
        self.cutoff, self.refresh, self.window = cutoff, max(1, refresh), max(1, window)
        self.explore = explore
        self._credit = 0.0  # depth-order picks owed
        self._cooldown = 0  # picks left in depth order after a weighing found nothing
        self._fallback = DepthK(campaign, k=max(m.shape[1] for m in campaign.rankings))

    def _explore_pick(self) -> Pair | None:
        """Return a depth-order pick when one is owed (one in ``1 / explore``), else None."""
        self._credit += self.explore
        if self._credit >= 1.0:
            self._credit -= 1.0
            return self._fallback.next_pair()
        return None

    def _cooling_pick(self) -> tuple[bool, Pair | None]:
        """Return (True, a depth-order pick) while cooling down after an empty weighing."""
        if self._cooldown > 0:
            self._cooldown -= 1
            return True, self._fallback.next_pair()
        return False, None


class Swap(_Weighed):
    """Judge first the pairs that decide the order of runs still in doubt (see module)."""

    name = "swap"

    def __init__(
        self,
        campaign: Campaign,
        *,
        scores: Scorer,
        cutoff: int = 10,
        refresh: int = 20,
        window: int = 6,
        explore: float = 0.1,
        rel_level: float = 1.0,
    ) -> None:
        """Keep the scorer; weigh pairs every ``refresh`` picks.

        ``window``: each run is compared with the ``window`` runs below it on the
        leaderboard (runs further apart are rarely in doubt, and all pairs of many runs
        cost their square). ``explore``: the share of picks taken in depth order. The
        weighing learns the chance of relevance at each rank and each query's ideal DCG
        from the grades so far, and its own picks are documents that split runs; the
        depth-order picks are an even sample of every query's top ranks that keeps those
        estimates honest (without them, τ stalled below 0.9 on some simulated campaigns;
        one pick in ten did best over the campaigns of docs/pooling.md).
        """
        super().__init__(
            campaign,
            cutoff=cutoff,
            refresh=refresh,
            window=window,
            explore=explore,
            rel_level=rel_level,
        )
        self.scores = scores
        self.labels = [np.full(n, np.nan) for n in campaign.n_docs]
        self._queue: list[Pair] = []
        self._best = [campaign.best_rank(q) for q in range(len(campaign.queries))]
        # each run's rank discount at each document of each query, within the cut-off
        self._discount = []
        for matrix in campaign.rankings:
            table = np.zeros((len(campaign.runs), int(matrix.max(initial=-1)) + 1))
            top = matrix[:, : self.cutoff]
            runs, ranks = np.nonzero(top >= 0)
            table[runs, top[runs, ranks]] = 1.0 / np.log2(ranks + 2.0)
            self._discount.append(table)

    def observe(self, q: int, d: int, grade: float) -> None:
        """Record the grade (the next weighing uses it)."""
        super().observe(q, d, grade)
        self.labels[q][d] = grade
        self._fallback.observe(q, d, grade)

    def pend(self, q: int, d: int) -> None:
        """Take the pick without a grade (the fallback order skips it too)."""
        super().pend(q, d)
        self._fallback.pend(q, d)

    def weights(self) -> list[F64]:
        """Return each query's weight per document (0 for judged ones)."""
        out = self.impact(self.labels, judged=self.judged)
        for q, weight in enumerate(out):
            weight[self.judged[q][: len(weight)]] = 0.0
        return out

    def _pairs(self, labels: list[F64]) -> tuple[I64, I64]:
        """Return the compared runs: each with the ``window`` runs below it now."""
        per_run = self.scores(labels).mean(axis=1)
        order = np.argsort(-tie_key(per_run), kind="stable")
        upper, lower = [], []
        for step in range(1, min(self.window, len(order) - 1) + 1):
            upper.append(order[:-step])
            lower.append(order[step:])
        if not upper:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(upper), np.concatenate(lower)

    def _band_moments(
        self, seen: Sequence[NDArray[np.bool_]], labels: list[F64]
    ) -> tuple[list[F64], list[F64]]:
        """Return per query the mean and second moment of the grade of each document.

        Both come from the grades of the ``seen`` documents (those with a grade; a pick
        still waiting for its grade counts for nothing) at the same best rank band
        (the bands of :func:`metrics.pool.stopping.grade_prior`), over all queries, with one
        added count per grade 0-4 (Laplace); a fractional grade counts as its value.
        """
        bands = np.asarray(RANK_BANDS)
        n_bands = len(RANK_BANDS) + 1
        sums = np.full(n_bands, 10.0)  # one count of each grade 0-4: 0 + 1 + 2 + 3 + 4
        squares = np.full(n_bands, 30.0)  # 0 + 1 + 4 + 9 + 16
        counts = np.full(n_bands, 5.0)
        band_of = [np.searchsorted(bands, best, side="right") for best in self._best]
        for band, s, lab in zip(band_of, seen, labels, strict=True):
            graded = s & ~np.isnan(lab)  # a pick taken without its grade yet says nothing
            grades = np.clip(lab[graded], 0.0, 4.0)
            np.add.at(counts, band[graded], 1.0)
            np.add.at(sums, band[graded], grades)
            np.add.at(squares, band[graded], grades**2)
        mean, second = sums / counts, squares / counts
        return [mean[b] for b in band_of], [second[b] for b in band_of]

    def impact(
        self, labels: list[F64], *, judged: Sequence[NDArray[np.bool_]] | None = None
    ) -> list[F64]:
        """Return each query's weight per document under ``labels`` (NaN: not judged).

        The difference of two runs' mean DCG@cutoff (each query's normalised by its ideal
        DCG from the grades known, at least 1) is a sum over documents: a judged one adds
        its gain times the difference of the runs' discounts at it, an unjudged one a
        random amount whose mean and variance come from the grades judged at the same
        best rank (:meth:`_band_moments`). So each compared pair of runs has a normal
        estimate of its difference, and the chance that the leaderboard shows the pair
        the wrong way round is the normal CDF at ``-sign(measured) * (measured + missing)
        / sd`` (one half for a tie shown as a tie). A document's weight is the sum, over
        the pairs, of that chance times how far its grade would move the pair (the
        difference of the two runs' discounts at it times the expected grade at its
        rank): the judgments go to the documents that settle pairs in doubt, not to those
        every run ranks alike (a document all runs put at rank 1 moves no pair). Judged
        documents weigh 0 in :meth:`weights`; here they weigh like unjudged ones, for the
        LLM-first checks that re-judge them.
        ``judged`` (default: the labelled documents) is what counts as known.
        """
        upper, lower = self._pairs(labels)
        seen = [~np.isnan(lab) if judged is None else judged[q] for q, lab in enumerate(labels)]
        first, second = self._band_moments(seen, labels)
        n_q = max(len(labels), 1)
        measured = np.zeros(len(upper))  # the difference the leaderboard shows now
        missing = np.zeros(len(upper))  # the expected difference still unjudged
        var = np.zeros(len(upper))
        parts = []
        for q, table in enumerate(self._discount):
            width = table.shape[1]
            open_ = ~seen[q][:width]
            gain_known = np.where(open_, 0.0, np.nan_to_num(labels[q][:width]))
            band_mean, band_second = first[q][:width], second[q][:width]
            expected = np.where(open_, band_mean, 0.0)
            spread = np.where(open_, band_second - band_mean**2, 0.0)
            judged_gains = np.sort(np.nan_to_num(labels[q][seen[q]]))[::-1][: self.cutoff]
            ideal = float(judged_gains @ (1.0 / np.log2(np.arange(len(judged_gains)) + 2.0)))
            scale = 1.0 / (max(ideal, 1.0) * n_q)
            delta = (table[upper] - table[lower]) * scale
            measured += delta @ gain_known
            missing += delta @ expected
            var += delta**2 @ spread
            # How far the document's grade moves the pair: judged or not, as a grade drawn
            # at its rank would (the LLM-first checks weigh judged pairs too).
            parts.append(np.abs(delta) * band_mean)
        # The chance that the leaderboard has the pair the wrong way round: the true
        # difference is normal around measured + missing; the sign shown is measured's.
        sign = np.where(np.abs(measured) > 1e-12, np.sign(measured), 0.0)  # ties: no sign
        sd = np.sqrt(var)
        wrong = np.full(len(upper), 0.5)
        decided = sign != 0
        z = np.divide(
            -sign * (measured + missing), sd, out=np.full(len(upper), -np.inf), where=sd > 0
        )
        z = np.where((sd == 0) & (sign * (measured + missing) < 0), np.inf, z)
        wrong[decided] = ndtr(z[decided])  # the standard normal CDF
        out = []
        for q, part in enumerate(parts):
            weight = np.zeros(len(labels[q]))
            weight[: part.shape[1]] = wrong @ part
            out.append(weight)
        return out

    def next_pair(self) -> Pair | None:
        """Return the heaviest pair of the last weighing not judged since, or fall back.

        Every ``1 / explore``-th pick (on average) is depth order's instead.
        """
        pick = self._explore_pick()
        if pick is not None:
            return pick
        while self._queue:
            q, d = self._queue.pop()
            if not self.judged[q][d]:
                return q, d
        cooling, pick = self._cooling_pick()  # the last weighing found nothing to weigh
        if cooling:
            return pick
        weights = self.weights()
        flat = tie_key(np.concatenate(weights))
        top = np.argsort(-flat, kind="stable")[: self.refresh]
        top = top[flat[top] > 0]
        starts = np.cumsum([0, *(len(w) for w in weights)])
        queries = np.searchsorted(starts, top, side="right") - 1
        picks = list(zip(queries.tolist(), (top - starts[queries]).tolist(), strict=True))
        self._queue = picks[::-1]  # popped from the end: heaviest first
        if self._queue:
            return self._queue.pop()
        # Nothing above the cut-off moves a pair in doubt: depth order for ``refresh``
        # picks, then weigh again (the grades that arrive meanwhile may change that).
        self._cooldown = self.refresh - 1
        return self._fallback.next_pair()


class Hybrid(_Weighed):
    """Depth-first to a shallow depth, then the pairs that can flip runs in doubt (module)."""

    name = "hybrid"

    def __init__(
        self,
        campaign: Campaign,
        *,
        cutoff: int = 10,
        shallow: int = 0,
        refresh: int = 20,
        window: int = 6,
        explore: float = 0.1,
        top_weight: float = 1.0,
        growth: float = 0.02,
        rel_level: float = 1.0,
    ) -> None:
        """Index each query's top ``cutoff`` documents by run; nothing weighed yet.

        ``shallow``: every document some run ranks within its top ``shallow`` is judged
        first, in depth order. ``refresh``: picks between two weighings. ``window``: each
        run is compared with the ``window`` runs below it on the leaderboard. ``explore``:
        the share of later picks taken in depth order (they find the relevant documents
        the ideal DCG needs and keep the rank-band estimates honest). ``top_weight``:
        how much more a pair near the top of the leaderboard counts (a pair whose lower
        run is at place ``i`` weighs ``top_weight / (i - 1) + 2 / runs``, after τ_AP's
        weights; 0: all pairs alike, as Kendall's τ). ``growth``: after ``refresh / growth``
        grades, weigh every ``growth`` share of the grades known instead (the weights move
        less with each grade as grades add up).
        """
        super().__init__(
            campaign,
            cutoff=cutoff,
            refresh=refresh,
            window=window,
            explore=explore,
            rel_level=rel_level,
        )
        self.tracker = NdcgCut(campaign, cutoff)
        self._shallow = DepthK(campaign, k=shallow) if shallow > 0 else None
        n_runs, n_q = len(campaign.runs), len(campaign.queries)
        sizes = campaign.n_docs
        self._offset = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        total = int(self._offset[-1])
        # each document's rank band (by its best rank) and vote bucket (runs retrieving it)
        best = np.concatenate([campaign.best_rank(q) for q in range(n_q)]) if n_q else np.zeros(0)
        votes = np.zeros(total)
        for q, matrix in enumerate(campaign.rankings):
            present = matrix[matrix >= 0]
            np.add.at(votes, present + self._offset[q], 1.0)
        share = votes / max(n_runs, 1)
        band = np.searchsorted(np.asarray(RANK_BANDS), best, side="right")
        bucket = np.searchsorted(np.asarray([0.1, 0.25, 0.5]), share, side="right")
        self._cell = band * 4 + bucket
        self._n_cells = (len(RANK_BANDS) + 1) * 4
        self._query_of = np.repeat(np.arange(n_q), sizes)
        # the rank discounts within the cut-off, as a sparse matrix: the documents some
        # run ranks within it (``_top``, flat codes) x runs
        rows, cols, vals = [], [], []
        weights = 1.0 / np.log2(np.arange(cutoff) + 2.0)
        for q, matrix in enumerate(campaign.rankings):
            top = matrix[:, :cutoff]
            runs, ranks = np.nonzero(top >= 0)
            rows.append(top[runs, ranks] + self._offset[q])
            cols.append(runs)
            vals.append(weights[ranks])
        flat_rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        self._top, inverse = np.unique(flat_rows, return_inverse=True)
        by_row = np.argsort(inverse, kind="stable")
        self._rows = inverse[by_row]
        self._cols = (np.concatenate(cols) if cols else np.zeros(0, np.int64))[by_row]
        self._vals = (np.concatenate(vals) if vals else np.zeros(0))[by_row]
        # every ordered pair of entries of one document (itself included): the products
        # of two runs' terms at a document, summed per run pair or per document, give
        # the pairs' variances and the documents' split without a runs x runs product
        size = np.bincount(self._rows, minlength=len(self._top))
        start = np.concatenate(([0], np.cumsum(size)))
        reps = size[self._rows]
        first = np.repeat(np.arange(len(self._rows)), reps)
        local = np.arange(len(first)) - np.repeat(np.cumsum(reps) - reps, reps)
        second = start[self._rows[first]] + local
        self._pair_rows = self._rows[first]
        self._pair_cells = self._cols[first] * n_runs + self._cols[second]
        self._pair_vals = self._vals[first] * self._vals[second]
        self._first, self._second = first, second
        self._judged = np.zeros(total, dtype=bool)
        self._grade = np.zeros(total)
        self._queue: list[int] = []
        self.top_weight, self.growth = top_weight, growth
        self._counts = [5.0] * self._n_cells  # one of each grade 0-4 per cell
        self._sums = [10.0] * self._n_cells
        self._squares = [30.0] * self._n_cells
        self._cell_list = self._cell.tolist()
        self._offset_list = self._offset.tolist()
        for order in (self._shallow, self._fallback):  # one record of what is judged
            if order is not None:
                order.judged = self.judged

    def observe(self, q: int, d: int, grade: float) -> None:
        """Record the grade (the next weighing uses it)."""
        self.judged[q][d] = True  # shared with the depth orders
        g = self._offset_list[q] + d
        cell = self._cell_list[g]
        counts, sums, squares = self._counts, self._sums, self._squares
        if self._judged[g]:  # a new grade replaces the old one
            old = min(max(float(self._grade[g]), 0.0), 4.0)
            counts[cell] -= 1.0
            sums[cell] -= old
            squares[cell] -= old * old
        self._judged[g] = True
        self._grade[g] = grade
        clipped = min(max(float(grade), 0.0), 4.0)
        counts[cell] += 1.0
        sums[cell] += clipped
        squares[cell] += clipped * clipped
        self.tracker.observe(q, d, grade)

    def pend(self, q: int, d: int) -> None:
        """Take the pick without a grade (nothing is learnt from it)."""
        super().pend(q, d)  # the depth orders share ``judged``

    def _moments(self, docs: I64) -> tuple[F64, F64]:
        """Return the expected grade of ``docs`` (flat codes) and its variance.

        Both come from the judged documents alike to each: of the same best-rank band and
        the same share of runs retrieving it (under 10%, 25%, 50%, or more), with one
        added count of each grade 0-4 (Laplace).
        """
        counts = np.asarray(self._counts)
        mean = np.asarray(self._sums) / counts
        var = np.asarray(self._squares) / counts - mean**2
        return mean[self._cell[docs]], var[self._cell[docs]]

    def weights(self) -> F64:
        """Return the weight of each document some run ranks within the cut-off.

        Aligned with ``_top`` (flat document codes); 0 for judged documents. The
        leaderboard's mean DCG@cutoff over each query's ideal (at least 1) is, for each
        compared pair of runs, a known part plus a random part from the unjudged
        documents (their grades: mean and variance of judged alike documents). The
        chance ``wrong_p`` that pair ``p`` is shown the wrong way round is the normal CDF
        of a flip of that sum's sign. The doubt-weighted expected squared error of the
        differences, ``sum_p wrong_p (B_p^2 + V_p)`` (``B_p`` the expected unjudged part,
        ``V_p`` its variance), falls by ``sum_p wrong_p (2 B_p mu_d delta_pd + (sigma_d^2 -
        mu_d^2) delta_pd^2)`` when document ``d`` (expected grade ``mu_d``, variance
        ``sigma_d^2``, moving pair ``p`` by ``delta_pd`` per grade point) is judged: its
        weight. The first term favours documents of the runs the unjudged part
        underrates, so coverage stays even between close runs (the bias that sinks
        greedy orders); the second, documents that split the runs.
        """
        n_runs, n_top = len(self.campaign.runs), len(self._top)
        if n_runs < 2 or n_top == 0:
            return np.zeros(n_top)
        mean, var = self._moments(self._top)
        n_q = max(len(self.campaign.queries), 1)
        ideal = np.maximum(self.tracker.ideal, 1.0)
        scale = 1.0 / (ideal[self._query_of[self._top]] * n_q)
        judged = self._judged[self._top]
        open_e = ~judged[self._rows]
        unit = self._vals * scale[self._rows]
        known = np.bincount(
            self._cols,
            weights=unit * np.where(open_e, 0.0, self._grade[self._top][self._rows]),
            minlength=n_runs,
        )
        missing = np.bincount(
            self._cols, weights=unit * np.where(open_e, mean[self._rows], 0.0), minlength=n_runs
        )
        entry_sd = unit * np.sqrt(np.where(open_e, var[self._rows], 0.0))
        first, second = self._first, self._second
        gram = np.bincount(
            self._pair_cells,
            weights=entry_sd[first] * entry_sd[second],
            minlength=n_runs * n_runs,
        ).reshape(n_runs, n_runs)
        order = np.argsort(-tie_key(self.tracker.means()), kind="stable")
        offsets = range(1, min(self.window, n_runs - 1) + 1)
        upper = np.concatenate([order[:-j] for j in offsets])
        lower = np.concatenate([order[j:] for j in offsets])
        measured = known[upper] - known[lower]
        bias = missing[upper] - missing[lower]
        pvar = np.maximum(gram[upper, upper] + gram[lower, lower] - 2.0 * gram[upper, lower], 0)
        wrong = self._doubt(measured, bias, np.sqrt(pvar))
        if self.top_weight:
            # τ_AP weighs a pair by 1 / (the lower run's place - 1): the top's pairs count more
            place = np.empty(n_runs)
            place[order] = np.arange(n_runs)
            wrong = wrong * (self.top_weight / np.maximum(place[lower], 1.0) + 2.0 / n_runs)
        self._weighed_pairs = (upper, lower, wrong, bias)
        pull = np.bincount(upper, weights=wrong * bias, minlength=n_runs) - np.bincount(
            lower, weights=wrong * bias, minlength=n_runs
        )
        sym = np.zeros((n_runs, n_runs))
        np.add.at(sym, (upper, lower), wrong)
        sym += sym.T
        # sum_p wrong_p (c_u - c_l)^2 per document: over its entry pairs, the sum of
        # sym[r, r] c_r^2 (sym[r, r] = the sum of r's pairs' wrong) minus sym[r, r'] c_r c_r'
        np.fill_diagonal(sym, -sym.sum(axis=1))
        split = np.maximum(
            -np.bincount(
                self._pair_rows,
                weights=sym.ravel()[self._pair_cells] * self._pair_vals,
                minlength=n_top,
            ),
            0.0,
        )
        shift = np.bincount(self._rows, weights=self._vals * pull[self._cols], minlength=n_top)
        weight = 2.0 * mean * scale * shift + (var - mean**2) * scale**2 * split
        return np.where(judged, 0.0, np.maximum(weight, 0.0))

    @staticmethod
    def _doubt(measured: F64, bias: F64, sd: F64) -> F64:
        """Return each pair's chance that the leaderboard shows it the wrong way round.

        The true difference is normal around ``measured + bias`` with deviation ``sd``;
        the leaderboard shows the sign of ``measured`` (a tie, no sign: one half).
        """
        sign = np.where(np.abs(measured) > 1e-12, np.sign(measured), 0.0)  # ties: no sign
        z = np.divide(-sign * (measured + bias), sd, out=np.full(len(sd), -np.inf), where=sd > 0)
        z = np.where((sd == 0) & (sign * (measured + bias) < 0), np.inf, z)
        return np.where(sign != 0, ndtr(z), 0.5)

    def next_pair(self) -> Pair | None:
        """Return the next pair: shallow depth first, then by weight, now and then depth."""
        if self._shallow is not None:
            pick = self._shallow.next_pair()
            if pick is not None:
                return pick
            self._shallow = None
        pick = self._explore_pick()
        if pick is not None:
            return pick
        while self._queue:
            g = self._queue.pop()
            if not self._judged[g] and not self._pended(g):
                return self._pair(g)
        cooling, pick = self._cooling_pick()
        if cooling:
            return pick
        weight = self.weights()
        pended = np.concatenate(self.judged)[self._top]  # picks still without a grade
        weight[pended] = 0.0
        weight = tie_key(weight)  # the same order on every CPU; ties by document code
        # every ``refresh`` picks at first, then every ``growth`` share of the grades known
        count = min(max(self.refresh, int(self.growth * int(self._judged.sum()))), len(weight))
        top = np.argsort(-weight, kind="stable")[:count]  # a full sort: argpartition's
        top = self._top[top[weight[top] > 0]]  # choice among ties depends on the CPU
        self._queue = top[::-1].tolist()
        if self._queue:
            return self._pair(self._queue.pop())
        # Nothing within the cut-off weighs anything: depth order until the next weighing
        self._cooldown = count - 1
        return self._fallback.next_pair()

    def _pair(self, g: int) -> Pair:
        q = int(self._query_of[g])
        return q, int(g - self._offset[q])

    def _pended(self, g: int) -> bool:
        q, d = self._pair(g)
        return bool(self.judged[q][d])


class Steady(Hybrid):
    """``hybrid``'s weighing, made to keep the ranking it reaches (see module and docs).

    Three changes to :class:`Hybrid`, each against a way its order lost to depth-k on
    campaigns of few close runs (docs/pooling.md, *The family of campaigns*):

    - **Doubt in both directions.** A pair counts with the chance that the unjudged part
      of its difference is larger than the gap the leaderboard shows, either way
      (:meth:`_doubt`), not only with the chance that it would flip the pair. So a pair
      shown the right way round still counts while its unjudged part is large, and
      judging its neighbours' documents unevenly, which would make the leaderboard show
      it the wrong way round on the way, is weighed against.
    - **Each run from the top down.** Within the cut-off the pairs' weight counts only
      each run's shallowest unjudged document of a query (its *frontier*), so a run's
      judged documents of a query are mostly its top ranks, as under depth-k, and the
      scores the leaderboard shows are close to each run's measure truncated at some
      rank, not a run judged here and there. (The depth-order picks and the ideal's
      weight below can still take a document off a run's frontier.)
    - **The ideal is in doubt too.** A query's ideal DCG comes from the grades found so
      far; a document deeper than the cut-off can still raise it, which rescales every
      run's score on that query. Every unjudged document (within the cut-off or not)
      also weighs how much its grade is expected to lower the pairs' squared error
      through the ideal (:meth:`ideal_weights`), from the chance of each grade among the
      judged documents alike to it. So the deep documents likely to complete the ideals
      of the queries that the pairs in doubt rest on come before the rest of the depth
      order. The doubt itself comes from the unjudged documents within the cut-off:
      once none is left in doubt, the order is depth order, as ``hybrid``'s.
    """

    name = "steady"

    def __init__(
        self,
        campaign: Campaign,
        *,
        cutoff: int = 10,
        refresh: int = 20,
        window: int = 6,
        explore: float = 0.1,
        top_weight: float = 1.0,
        growth: float = 0.02,
        rel_level: float = 1.0,
    ) -> None:
        """Set up :class:`Hybrid`'s index, each run's frontier groups and grade counts."""
        super().__init__(
            campaign,
            cutoff=cutoff,
            refresh=refresh,
            window=window,
            explore=explore,
            top_weight=top_weight,
            growth=growth,
            rel_level=rel_level,
        )
        n_runs = len(campaign.runs)
        # the (query, run) of each entry within the cut-off: a run's frontier in a query
        self._group = self._query_of[self._top][self._rows] * n_runs + self._cols
        self._n_groups = len(campaign.queries) * n_runs
        self._histogram = np.zeros((self._n_cells, 5))  # judged grades 0-4 per cell
        self._weighed_pairs: tuple[I64, I64, F64, F64] | None = None
        self._discount = 1.0 / np.log2(np.arange(cutoff) + 2.0)

    def observe(self, q: int, d: int, grade: float) -> None:
        """Record the grade, in the grade counts of its cell too."""
        g = self._offset_list[q] + d
        cell = self._cell_list[g]
        if self._judged[g]:
            self._count(cell, float(self._grade[g]), -1.0)
        super().observe(q, d, grade)
        self._count(cell, float(grade), 1.0)

    def _count(self, cell: int, grade: float, sign: float) -> None:
        """Add ``sign`` times a grade to the cell's counts (a fraction splits linearly)."""
        x = min(max(grade, 0.0), 4.0)
        low = int(np.floor(x))
        self._histogram[cell, low] += sign * (1.0 - (x - low))
        if x > low:
            self._histogram[cell, low + 1] += sign * (x - low)

    def grade_chances(self) -> F64:
        """Return each cell's chance of each grade 0-4 (``(cells, 5)``).

        The counts of the judged grades plus a prior of five counts: one of each grade in
        the top rank band, and in each deeper band five spread as the band above it
        ends up (per share of runs retrieving the document). So a deep band nobody has
        judged yet is expected to be no more relevant than the band above it, instead of
        being as likely to hold a grade 4 as a grade 0.
        """
        bands = len(RANK_BANDS) + 1
        counts = self._histogram.reshape(bands, 4, 5)
        out = np.empty_like(counts)
        prior = np.ones((4, 5))
        for band in range(bands):
            posterior = counts[band] + prior
            out[band] = posterior / posterior.sum(axis=1, keepdims=True)
            prior = 5.0 * out[band]
        return out.reshape(self._n_cells, 5)

    @staticmethod
    def _doubt(measured: F64, bias: F64, sd: F64) -> F64:
        """Return each pair's chance that its unjudged part exceeds the gap shown, either way.

        The unjudged part is normal around ``bias`` with deviation ``sd``; the gap shown
        is ``|measured|``. A pair shown as a tie counts 1. Without deviation the chance is
        0 or 1: whether ``bias`` alone exceeds the gap.
        """
        gap = np.abs(measured)
        spread = sd > 0
        safe = np.where(spread, sd, 1.0)
        above = np.where(spread, ndtr((bias - gap) / safe), (bias > gap).astype(float))
        below = np.where(spread, ndtr((-gap - bias) / safe), (bias < -gap).astype(float))
        return np.where(gap > 1e-12, np.minimum(above + below, 1.0), 1.0)

    def weights(self) -> F64:
        """Return :class:`Hybrid`'s weights, 0 off each run's frontier (aligned with ``_top``)."""
        self._weighed_pairs = None  # set by the weighing, unless there is nothing to weigh
        weight = super().weights()
        if len(weight) == 0:
            return weight
        # picked: graded, or planned and waiting for its grade (the frontier moves on)
        open_entry = ~np.concatenate(self.judged)[self._top][self._rows]
        deepest = np.full(self._n_groups, -1.0)  # the largest discount = the shallowest rank
        np.maximum.at(deepest, self._group[open_entry], self._vals[open_entry])
        front = open_entry & (self._vals == deepest[self._group])
        on_front = np.zeros(len(self._top), dtype=bool)
        on_front[self._rows[front]] = True
        return np.where(on_front, weight, 0.0)

    def ideal_weights(self) -> F64:
        """Return each document's weight through the ideal DCG (flat codes; 0 if judged).

        Call after :meth:`weights` (it uses the pairs weighed there: ``upper``,
        ``lower``, their doubt-and-top weight ``w_p`` and expected unjudged part
        ``B_p``). A query's share of pair ``p``'s difference as the leaderboard shows it
        is ``a_pq`` (the two runs' judged DCG difference over the ideal so far, at least
        1, and the number of queries). If the ideal grows by ``h`` of itself, that share
        shrinks by about ``h a_pq``. A document whose grade ``g`` would raise its query's
        ideal by ``dI(g)`` (the ideal with ``g`` among the top grades, minus the ideal)
        therefore moves the pair's error by ``-h a_pq`` with ``h = dI(g) / ideal``, and
        judging it lowers the doubt-weighted squared error by ``-2 E[h] sum_p w_p B_p a_pq
        + (E[h^2] - 2 E[h]^2) sum_p w_p a_pq^2``, the same form as the within-cut-off
        weight (grades drawn from :meth:`grade_chances` of its cell).
        """
        n_q = len(self.campaign.queries)
        if self._weighed_pairs is None or n_q == 0 or len(self._weighed_pairs[0]) == 0:
            return np.zeros(int(self._offset[-1]))  # fewer than two runs: no pair
        upper, lower, wrong, bias = self._weighed_pairs
        tracker, k = self.tracker, self.cutoff
        top = np.zeros((n_q, k))  # each query's best judged grades, best first
        for q, grades in enumerate(tracker._top):
            top[q, : len(grades)] = grades
        above = np.concatenate([np.zeros((n_q, 1)), top[:, :-1]], axis=1)  # shifted down
        rank = np.arange(k)
        raise_by = np.zeros((n_q, 5))
        for g in range(1, 5):
            at = (top >= g).sum(axis=1)[:, None]  # where grade g would enter the top
            new = np.where(rank < at, top, np.where(rank == at, float(g), above))
            raise_by[:, g] = (new - top) @ self._discount
        ideal = np.maximum(tracker.ideal, 1.0)
        share = (tracker.dcg[upper] - tracker.dcg[lower]) / (ideal * n_q)  # pairs x queries
        linear = (wrong * bias) @ share
        square = wrong @ share**2
        h = (raise_by / ideal[:, None])[self._query_of]  # documents x grades
        chances = self.grade_chances()[self._cell]
        mean = (chances * h).sum(axis=1)
        second = (chances * h**2).sum(axis=1)
        q = self._query_of
        weight = -2.0 * mean * linear[q] + (second - 2.0 * mean**2) * square[q]
        return np.where(self._judged, 0.0, np.maximum(weight, 0.0))

    def next_pair(self) -> Pair | None:
        """Return the next pair: by weight (within the cut-off and through the ideal)."""
        pick = self._explore_pick()
        if pick is not None:
            return pick
        while self._queue:
            g = self._queue.pop()
            if not self._judged[g] and not self._pended(g):
                return self._pair(g)
        cooling, pick = self._cooling_pick()
        if cooling:
            return pick
        within = self.weights()
        weight = self.ideal_weights()
        weight[self._top] += within
        weight[np.concatenate(self.judged)] = 0.0  # picks still without a grade too
        weight = tie_key(weight)  # the same order on every CPU; ties by document code
        count = min(max(self.refresh, int(self.growth * int(self._judged.sum()))), len(weight))
        top = np.argsort(-weight, kind="stable")[:count]
        self._queue = top[weight[top] > 0][::-1].tolist()
        if self._queue:
            return self._pair(self._queue.pop())
        # Nothing weighs anything: depth order until the next weighing
        self._cooldown = count - 1
        return self._fallback.next_pair()


def plan(
    strategy: Strategy,
    known: Sequence[F64],
    n: int,
    *,
    eligible: Sequence[NDArray[np.bool_]] | None = None,
) -> list[Pair]:
    """Return the next ``n`` pairs ``strategy`` would have judged, given the grades known.

    ``known[q]`` holds query ``q``'s grade per document code, NaN where no grade is known
    yet. The strategy is replayed from its start: a pick whose grade is known is told that
    grade for free (as if it had just been judged) and judging goes on; a pick whose grade
    is unknown is the next pair of the plan, taken without a grade (:meth:`Strategy.pend`:
    move-to-front and the bandits keep the run's state, so the plan goes on as the
    strategy would before that grade arrives). So the plan is the strategy's own order
    over the pairs nobody has judged, and it follows every grade that arrives: replanned
    after a grade, it is the order the strategy takes after that outcome. Strategies that
    weigh all grades at once (``global_view``) are told them first. A pick that is not
    ``eligible`` (not open for judging) is passed over without a grade.

    Edge cases: ``n <= 0`` gives ``[]``; fewer than ``n`` unjudged pairs give them all.
    """
    out: list[Pair] = []
    if n <= 0:
        return out
    if strategy.global_view:
        for q, grades in enumerate(known):
            for d in np.flatnonzero(~np.isnan(grades)).tolist():
                strategy.observe(q, d, float(grades[d]))
    while len(out) < n:
        pick = strategy.next_pair()
        if pick is None:
            break
        q, d = pick
        grade = known[q][d]
        if not np.isnan(grade):
            strategy.observe(q, d, float(grade))
            continue
        strategy.pend(q, d)
        if eligible is None or eligible[q][d]:
            out.append(pick)
    return out


STRATEGIES = ("depth", "steady", "hybrid", "mtf", "mm-ns", "thompson", "swap")

#: The strategy the settings page and the docs recommend (docs/pooling.md says why).
RECOMMENDED = "steady"


def make_strategy(
    name: str,
    campaign: Campaign,
    *,
    scores: Scorer | None = None,
    depth: int = 100,
    cutoff: int = 10,
    refresh: int = 20,
    window: int = 6,
    explore: float = 0.1,
    seed: int = 0,
    rel_level: float = 1.0,
) -> Strategy:
    """Return strategy ``name`` (one of :data:`STRATEGIES`) over ``campaign``."""
    if name == "depth":
        return DepthK(campaign, k=depth, rel_level=rel_level)
    if name == "mtf":
        return MoveToFront(campaign, rel_level=rel_level)
    if name in ("mm-ns", "thompson"):
        return Bandit(campaign, rule=name, seed=seed, rel_level=rel_level)
    if name == "swap":
        if scores is None:
            raise ValueError("the swap strategy needs a scorer")
        return Swap(
            campaign,
            scores=scores,
            cutoff=cutoff,
            refresh=refresh,
            window=window,
            explore=explore,
            rel_level=rel_level,
        )
    if name == "steady":
        return Steady(
            campaign,
            cutoff=cutoff,
            refresh=refresh,
            window=window,
            explore=explore,
            rel_level=rel_level,
        )
    if name == "hybrid":
        return Hybrid(
            campaign,
            cutoff=cutoff,
            refresh=refresh,
            window=window,
            explore=explore,
            rel_level=rel_level,
        )
    raise ValueError(f"unknown strategy {name!r}; use one of {', '.join(STRATEGIES)}")
