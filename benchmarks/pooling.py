"""Pooling strategies compared: judgments needed for a faithful system ranking.

``python -m benchmarks.pooling [--queries 50] [--runs 30] [--seed 1] [--step 50]
[--seeds 1 2 3 4 5]``

``python -m benchmarks.pooling --family [--seeds 1 2 3 4 5] [--strategies ...]``: the
family of campaigns instead (:data:`SHAPES`, each drawn with each seed; see
:func:`family_report`). ``python -m benchmarks.pooling --speed``: the simulation time of
``steady``, ``hybrid`` and ``swap`` over every pair of a 42k-pair campaign.

Two campaigns, each judged in every strategy's order (:mod:`metrics.pool.strategies`)
with its full qrels as the oracle (:mod:`metrics.pool.simulation`):

- the demo collection shipped in ``demo/`` (3 runs, its reference qrels);
- a synthetic TREC-like campaign: ``--queries`` topics, ``--runs`` systems of varied
  quality in families that share errors (as TREC runs from one group do), each returning
  100 documents per topic from 2,000; the qrels grade the depth-100 pool (0-4, about 8%
  of a topic's documents relevant), as a TREC depth-100 pool would.

Reported per strategy: the judgments after which Kendall's τ-b between the runs'
ranking by ``ndcg_cut.10`` so far and their ranking under the full qrels reaches 0.9 and
stays there, that count as a share of depth-k's, and the relevant documents found by
then. ``--seeds`` adds a table of depth-k against ``swap`` on the synthetic campaign drawn
with each seed. No database; the Markdown report goes to stdout.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from metrics.pool import simulation
from metrics.pool.strategies import STRATEGIES, Campaign, DepthK, make_strategy

ROOT = Path(__file__).resolve().parent.parent
MEASURE = "ndcg_cut.10"


def synthetic(queries: int, runs: int, seed: int) -> tuple[Campaign, dict[str, dict[str, float]]]:
    """Return a TREC-like campaign and the qrels of its depth-100 pool."""
    rng = np.random.default_rng(seed)
    universe, depth = 2000, 100
    quality = np.linspace(2.5, 0.3, runs)  # run 0 is the best
    family = np.arange(runs) % 6  # six groups of runs sharing part of their errors
    rankings: dict[str, dict[str, list[str]]] = {f"sys{r:02d}": {} for r in range(runs)}
    qrels: dict[str, dict[str, float]] = {}
    for q in range(queries):
        qid = f"T{q:03d}"
        grades = rng.choice(5, universe, p=[0.92, 0.03, 0.025, 0.015, 0.01]).astype(float)
        shared = rng.normal(0, 1.0, (6, universe))
        pooled: set[int] = set()
        for r in range(runs):
            score = quality[r] * grades + shared[family[r]] + rng.normal(0, 1.0, universe)
            top = np.argsort(-score)[:depth]
            rankings[f"sys{r:02d}"][qid] = [f"D{q:03d}-{d:04d}" for d in top]
            pooled.update(top.tolist())
        qrels[qid] = {f"D{q:03d}-{d:04d}": grades[d] for d in sorted(pooled)}
    return Campaign.from_rankings(rankings), qrels


@dataclass(frozen=True)
class Shape:
    """One kind of campaign of the family."""

    label: str
    queries: int
    runs: int
    dense: bool  # about 12% of a topic's documents relevant, else about 3%
    close: bool  # systems of close quality, else far apart
    #: The runs' qualities, best to worst, when not the default of ``close`` (1.5 -> 1.0
    #: close, 2.5 -> 0.3 far apart): e.g. (1.25, 1.15), runs within noise of each other.
    spread: tuple[float, float] | None = None

    @property
    def quality(self) -> tuple[float, float]:
        """Return the best and the worst run's quality."""
        if self.spread is not None:
            return self.spread
        return (1.5, 1.0) if self.close else (2.5, 0.3)

    @property
    def systems(self) -> str:
        """Return how far apart the runs are, in words."""
        hi, lo = self.quality
        words = "within noise" if hi - lo < 0.3 else "close" if self.close else "far"
        return f"{words} ({hi:g} → {lo:g})"


#: The family: runs 10 to 80, topics 25 to 150, dense and sparse relevance, systems far
#: apart, close, and within noise of each other. A-F are the family of issue 33; G-M were
#: added for issue 45 (few runs whose qualities differ little, as on the campaigns that
#: the old recommendation lost; many runs close together; few runs far apart).
SHAPES = (
    Shape("A", 50, 30, dense=False, close=False),
    Shape("B", 25, 10, dense=True, close=True),
    Shape("C", 50, 80, dense=False, close=True),
    Shape("D", 150, 30, dense=True, close=False),
    Shape("E", 150, 10, dense=False, close=True),
    Shape("F", 25, 80, dense=True, close=False),
    Shape("G", 120, 10, dense=False, close=True, spread=(1.25, 1.15)),
    Shape("H", 30, 12, dense=True, close=True, spread=(1.25, 1.15)),
    Shape("I", 60, 11, dense=False, close=True, spread=(1.22, 1.18)),
    Shape("J", 100, 40, dense=True, close=True, spread=(1.3, 1.1)),
    Shape("K", 50, 10, dense=False, close=False),
    Shape("L", 40, 12, dense=True, close=True, spread=(1.8, 0.8)),
    Shape("M", 75, 12, dense=False, close=True, spread=(1.21, 1.19)),
)


def family_campaign(
    shape: Shape, seed: int, *, universe: int = 2000, depth: int = 100
) -> tuple[Campaign, dict[str, dict[str, float]]]:
    """Return a campaign of ``shape`` drawn with ``seed`` and the qrels of its pool.

    Per topic: each of ``universe`` documents is relevant with a topic's own chance (a
    Beta draw around 3% or 12%: topics differ in how many relevant documents they
    have), graded 1-4 (45/30/15/10%). A run scores a document by its grade times the
    run's fit to the topic (its quality, times the topic's ease, times the run's own luck
    on the topic, both lognormal) plus noise shared by its family of runs (six families,
    as the runs of one group share errors) plus its own noise, and returns its top
    ``depth``; so runs share most of their top documents, and quality varies by topic.
    Qualities are spread from 2.5 to 0.3 (far apart), from 1.5 to 1.0 (close), or as
    ``shape.spread`` says. The qrels grade every pooled document (the depth-``depth``
    pool, as at TREC). Shapes without a ``spread`` draw what they drew before it existed.
    """
    key = [seed, shape.queries, shape.runs, shape.dense, shape.close]
    if shape.spread is not None:
        key += [round(q * 100) for q in shape.spread]
    rng = np.random.default_rng(key)
    runs = shape.runs
    quality = np.linspace(*shape.quality, runs)
    families = min(6, runs)
    family = np.arange(runs) % families
    rel_mean = 0.12 if shape.dense else 0.03
    names = tuple(f"sys{r:02d}" for r in range(runs))
    qids, matrices, docnos = [], [], []
    qrels: dict[str, dict[str, float]] = {}
    for q in range(shape.queries):
        qid = f"T{q:03d}"
        share = rng.beta(2.0, 2.0 / rel_mean - 2.0)
        levels = rng.choice([1, 2, 3, 4], universe, p=[0.45, 0.3, 0.15, 0.1])
        grades = np.where(rng.random(universe) < share, levels, 0).astype(float)
        ease = rng.lognormal(0.0, 0.4)
        shared = rng.normal(0.0, 1.0, (families, universe))
        fit = quality * ease * rng.lognormal(0.0, 0.25, runs)
        score = fit[:, None] * grades + shared[family] + rng.normal(0.0, 1.0, (runs, universe))
        top = np.argsort(-score, axis=1)[:, :depth]
        pooled = np.unique(top)
        names_q = tuple(f"D{q:03d}-{d:04d}" for d in pooled.tolist())
        qids.append(qid)
        matrices.append(np.searchsorted(pooled, top).astype(np.int64))
        docnos.append(names_q)
        qrels[qid] = dict(zip(names_q, grades[pooled].tolist(), strict=True))
    return Campaign(tuple(qids), names, tuple(matrices), tuple(docnos)), qrels


#: The fidelity bars: Kendall's τ-b and τ_AP of the ranking so far against the final one.
BARS = {"tau": 0.95, "tau_ap": 0.9}
#: Losses are counted up to this many swaps ("3" reads "3 or more").
LOSS_CAP = 3


@dataclass(frozen=True)
class Outcome:
    """One strategy on one campaign."""

    to_tau: int | None  # judgments until τ ≥ 0.95 and staying, within the horizon
    to_tau_ap: int | None  # judgments until τ_AP ≥ 0.9 and staying
    area: float  # mean τ over the horizon (the area under the τ curve over its width)
    seconds: float
    #: per fidelity ("tau", "tau_ap"): the worst later loss, in swaps of neighbouring runs,
    #: after the bar was first touched (``touched``) and after it was first held for one
    #: judgment per topic (``held``); see :func:`metrics.pool.simulation.worst_loss`
    touched: dict[str, int] = field(default_factory=dict)
    held: dict[str, int] = field(default_factory=dict)
    #: per fidelity: judgments until it reached the bar and never fell more than one swap
    #: below it again (None: not within the horizon)
    within_one: dict[str, int | None] = field(default_factory=dict)


def _within_one(rows, means, reference, bar: float, name: str) -> int | None:
    """Return the judgments from which the fidelity is at the bar or one swap below, to the end."""
    reached = None
    for row, now in zip(rows, means, strict=True):
        value = getattr(row, name)
        if value >= bar:
            reached = row.judged if reached is None else reached
        elif simulation.swaps_below(now, reference, bar, field=name, cap=2) > 1:
            reached = None
    return reached


class ShuffledDepth(DepthK):
    """Depth-k with its ties broken otherwise: how much of a campaign's result is luck.

    The same order as ``depth`` (each query's documents by best rank, queries in turn),
    but documents of one best rank come in a seeded random order instead of by code, and
    the turn starts at a seeded query. Benchmark only (``depth~1``, ``depth~2``, ...).
    """

    def __init__(self, campaign: Campaign, seed: int) -> None:
        """Draw the ties' order and the first query from ``seed``."""
        super().__init__(campaign)
        rng = np.random.default_rng(seed)
        for q in range(len(campaign.queries)):
            best = campaign.best_rank(q)
            pooled = np.flatnonzero(best < 100)
            self._order[q] = pooled[np.lexsort((rng.permutation(len(pooled)), best[pooled]))]
        self._turn = int(rng.integers(len(campaign.queries))) if campaign.queries else 0


def _strategy(name: str, campaign: Campaign):
    """Return strategy ``name`` of :data:`STRATEGIES`, or ``depth~<seed>``."""
    if name.startswith("depth~"):
        return ShuffledDepth(campaign, int(name.removeprefix("depth~")))
    scorer = simulation.make_scorer(campaign, MEASURE) if name == "swap" else None
    return make_strategy(name, campaign, scores=scorer)


def run_family_campaign(
    campaign: Campaign,
    qrels: dict[str, dict[str, float]],
    names: tuple[str, ...],
    *,
    per_topic: int = 120,
    step: int | None = None,
) -> tuple[int, int, int, dict[str, Outcome]]:
    """Simulate ``names`` on one campaign up to ``per_topic`` judgments per topic.

    Return the pool size, the horizon, the step and each strategy's outcome. τ is taken
    every ``step`` judgments, by default 10 per 25 topics (10 for 25 topics, 20 for 50,
    60 for 150).
    """
    grades = simulation.oracle(campaign, qrels)
    reference = simulation.reference_scores(campaign, qrels, MEASURE)
    pool = sum(campaign.n_docs)
    n_q = len(campaign.queries)
    horizon = min(pool, per_topic * n_q)
    step = step or 10 * -(-n_q // 25)
    out = {}
    for name in names:
        started = time.perf_counter()
        strategy = _strategy(name, campaign)
        means: list[np.ndarray] = []
        rows = simulation.simulate(
            campaign,
            grades,
            strategy,
            budget=horizon,
            step=step,
            reference=reference,
            tracker=simulation.NdcgCut(campaign, 10),
            means=means,
        )
        seconds = time.perf_counter() - started
        losses = {
            hold: {
                f: simulation.worst_loss(
                    rows, means, reference, bar, field=f, hold=hold, cap=LOSS_CAP
                )[1]
                for f, bar in BARS.items()
            }
            for hold in (0, n_q)
        }
        out[name] = Outcome(
            simulation.judgments_to_reach(rows, BARS["tau"]),
            simulation.judgments_to_reach(rows, BARS["tau_ap"], field="tau_ap"),
            float(np.mean([0.0 if np.isnan(r.tau) else r.tau for r in rows])),
            seconds,
            touched=losses[0],
            held=losses[n_q],
            within_one={f: _within_one(rows, means, reference, bar, f) for f, bar in BARS.items()},
        )
    return pool, horizon, step, out


def _share(count: int | None, base: int | None) -> float:
    """Return ``count / base`` (infinite when ``count`` was not reached; NaN without base)."""
    if base is None:
        return float("nan")
    return float("inf") if count is None else count / base


def _cell(count: int | None, base: int | None) -> str:
    """Return a report cell: the share of depth-k's, or the count where depth-k has none."""
    if base is None:
        return f"{count:,} (depth-k: none)" if count is not None else "not reached"
    return _pct(_share(count, base))


def _pct(value: float) -> str:
    if np.isnan(value):
        return "—"
    return "not reached" if np.isinf(value) else f"{value:.0%}"


@dataclass(frozen=True)
class FamilyCampaign:
    """One campaign of the family: a shape drawn with a seed, or the demo collection."""

    shape: Shape | None  # None: the demo collection
    seed: int | None

    @property
    def label(self) -> str:
        """Return e.g. ``"B3"`` (shape B, seed 3), or ``"demo"``."""
        return "demo" if self.shape is None else f"{self.shape.label}{self.seed}"

    def draw(self) -> tuple[Campaign, dict[str, dict[str, float]]]:
        """Return the campaign and its qrels."""
        return demo() if self.shape is None else family_campaign(self.shape, self.seed)


def family(
    seeds: list[int], shapes: tuple[Shape, ...] = SHAPES, *, with_demo: bool = True
) -> list[FamilyCampaign]:
    """Return every shape drawn with every seed, then the demo collection."""
    out = [FamilyCampaign(shape, seed) for shape in shapes for seed in seeds]
    return [*out, FamilyCampaign(None, None)] if with_demo else out


def _simulate_one(args: tuple[FamilyCampaign, tuple[str, ...], int]):
    """Draw one campaign and simulate every strategy on it (one task of ``--jobs``)."""
    member, names, per_topic = args
    campaign, qrels = member.draw()
    pool, horizon, _, out = run_family_campaign(campaign, qrels, names, per_topic=per_topic)
    return member, len(campaign.queries), len(campaign.runs), pool, horizon, out


def _quantiles(values: list[float]) -> str:
    """Return "median (quartiles q1–q3)" of shares, for the report."""
    finite = [v for v in values if not np.isnan(v)]
    if not finite:
        return "—"
    q1, q2, q3 = np.quantile(np.asarray(finite), [0.25, 0.5, 0.75], method="lower")
    return f"{_pct(float(q2))} ({_pct(float(q1))}–{_pct(float(q3))})"


def family_report(
    seeds: list[int],
    names: tuple[str, ...],
    shapes: tuple[Shape, ...] = SHAPES,
    *,
    with_demo: bool = True,
    per_topic: int = 120,
    jobs: int = 1,
) -> str:
    """Simulate every strategy on every campaign of the family; return the Markdown report.

    Per campaign: depth-k's judgments until τ ≥ 0.95 and until τ_AP ≥ 0.9 (reached and
    kept to the horizon), every other strategy's as a share of depth-k's, and the area
    under each one's τ curve. Then per strategy: the median share and its quartiles, the
    worst campaign, the campaigns where it needed more than depth-k, the median area, and
    how far a fidelity fell again once it was reached (:class:`Outcome`).
    """
    if "depth" not in names:
        names = ("depth", *names)
    others = [n for n in names if n != "depth"]
    members = family(seeds, shapes, with_demo=with_demo)
    tasks = [(m, names, per_topic) for m in members]
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(jobs) as workers:
            done = workers.map(_simulate_one, tasks, chunksize=1)
    else:
        done = [_simulate_one(task) for task in tasks]
    lines = [
        "| Campaign | Topics | Runs | Relevance | Systems | Pool | Horizon | depth: τ, τ_AP | "
        + " | ".join(f"{n}: τ, τ_AP" for n in others)
        + " | Area under τ: "
        + ", ".join(names)
        + " |",
        "| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | "
        + " | ".join("---:" for _ in others)
        + " | ---: |",
    ]
    for member, n_q, n_runs, pool, horizon, out in done:
        base = out["depth"]
        shape = member.shape
        cells = [
            f"{_cell(out[n].to_tau, base.to_tau)}, {_cell(out[n].to_tau_ap, base.to_tau_ap)}"
            for n in others
        ]
        lines.append(
            f"| {member.label} | {n_q} | {n_runs} | "
            + (
                f"{'dense' if shape.dense else 'sparse'} | {shape.systems} | "
                if shape
                else "demo qrels | 3 real runs | "
            )
            + f"{pool:,} | {horizon:,} | {base.to_tau or 'not reached'}, "
            f"{base.to_tau_ap or 'not reached'} | "
            + " | ".join(cells)
            + " | "
            + ", ".join(f"{out[n].area:.3f}" for n in names)
            + " |"
        )
    lines += [
        "",
        "| Strategy | τ ≥ 0.95: median (quartiles) | worst | above depth-k | "
        "τ_AP ≥ 0.9: median (quartiles) | worst | above depth-k | area under τ: median "
        "(lowest) | lost more than one swap once held (τ, τ_AP) | within one swap: median "
        "share (τ, τ_AP) |",
        "| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | --- | ---: |",
    ]
    for name in names:
        row = [f"`{name}`"]
        for attr in ("to_tau", "to_tau_ap"):
            shares = [
                (m.label, _share(getattr(o[name], attr), getattr(o["depth"], attr)))
                for m, *_, o in done
            ]
            valid = [(label, v) for label, v in shares if not np.isnan(v)]
            worse = [f"{label} {_pct(v)}" for label, v in valid if v > 1]
            worst = max(valid, key=lambda lv: lv[1]) if valid else ("—", float("nan"))
            row += [
                _quantiles([v for _, v in valid]),
                f"{_pct(worst[1])} ({worst[0]})",
                f"{len(worse)} of {len(valid)}" + (f": {', '.join(worse)}" if worse else ""),
            ]
        areas = [(m.label, o[name].area) for m, *_, o in done]
        low = min(areas, key=lambda la: la[1])
        row.append(f"{statistics.median(a for _, a in areas):.3f} ({low[1]:.3f}, {low[0]})")
        lost = [
            f"{m.label} ({o[name].held['tau']}, {o[name].held['tau_ap']})"
            for m, *_, o in done
            if max(o[name].held.values()) > 1
        ]
        row.append(f"{len(lost)} of {len(done)}" + (f": {', '.join(lost)}" if lost else ""))
        within = []
        for fid in BARS:
            shares = [
                _share(o[name].within_one[fid], o["depth"].within_one[fid]) for _, *_, o in done
            ]
            valid = [v for v in shares if not np.isnan(v)]
            within.append(_pct(statistics.median(valid)) if valid else "—")
        row.append(", ".join(within))
        lines.append("| " + " | ".join(row) + " |")
    touched = [
        f"`{name}` {sum(max(o[name].touched.values()) > 1 for *_, o in done)}" for name in names
    ]
    lines += [
        "",
        "Campaigns where a fidelity, once it first touched its bar, later fell more than one "
        "swap below it: " + ", ".join(touched) + f" (of {len(done)}).",
        "",
        "| Shape | " + " | ".join(others) + " |",
        "| --- | " + " | ".join("---:" for _ in others) + " |",
    ]
    for shape in [*shapes, None] if with_demo else shapes:
        mine = [o for m, *_, o in done if m.shape == shape]
        cells = []
        for n in others:
            parts = []
            for attr in ("to_tau", "to_tau_ap"):
                shares = [_share(getattr(o[n], attr), getattr(o["depth"], attr)) for o in mine]
                valid = [v for v in shares if not np.isnan(v)]
                parts.append(_pct(statistics.median(valid)) if valid else "—")
            cells.append(" / ".join(parts))
        label = shape.label if shape else "demo"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def speed_report(names: tuple[str, ...] = ("steady", "hybrid", "swap")) -> str:
    """Time ``names`` judging every pair of a 42k-pair campaign (step 50)."""
    campaign, qrels = synthetic(50, 30, 1)
    grades = simulation.oracle(campaign, qrels)
    reference = simulation.reference_scores(campaign, qrels, MEASURE)
    pool = sum(campaign.n_docs)
    lines = [
        f"{len(campaign.queries)} topics, {len(campaign.runs)} runs, {pool:,} pooled pairs; "
        "every pair judged, τ every 50 judgments (runs scored by the incremental `NdcgCut`).\n",
        "| Strategy | Simulation time (wall clock) | CPU time of the process |",
        "| --- | ---: | ---: |",
    ]
    for name in names:
        scorer = simulation.make_scorer(campaign, MEASURE)
        started, cpu = time.perf_counter(), time.process_time()
        strategy = make_strategy(name, campaign, scores=scorer)
        simulation.simulate(
            campaign,
            grades,
            strategy,
            budget=pool,
            step=50,
            reference=reference,
            tracker=simulation.NdcgCut(campaign, 10),
        )
        wall, used = time.perf_counter() - started, time.process_time() - cpu
        lines.append(f"| {name} | {wall:.1f} s | {used:.1f} s |")
        print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def demo() -> tuple[Campaign, dict[str, dict[str, float]]]:
    """Return the demo collection's runs and reference qrels."""
    paths = sorted(str(p) for p in (ROOT / "demo" / "runs").iterdir())
    return simulation.load_files(str(ROOT / "demo" / "qrels-reference.txt"), paths, 100)


def compare(
    campaign: Campaign,
    qrels: dict[str, dict[str, float]],
    step: int,
    names: tuple[str, ...] = STRATEGIES,
) -> dict[str, tuple[int | None, int | None, float]]:
    """Simulate each strategy; return its judgments to τ ≥ 0.9, relevant found, seconds."""
    grades = simulation.oracle(campaign, qrels)
    reference = simulation.reference_scores(campaign, qrels, MEASURE)
    scorer = simulation.make_scorer(campaign, MEASURE)
    pool = sum(campaign.n_docs)
    results = {}
    for name in names:
        started = time.perf_counter()
        strategy = make_strategy(name, campaign, scores=scorer, refresh=max(1, step // 5))
        rows = simulation.simulate(
            campaign, grades, strategy, budget=pool, step=step, scores=scorer, reference=reference
        )
        reached = simulation.judgments_to_reach(rows, 0.9)
        found = next((r.relevant for r in rows if r.judged == reached), None)
        results[name] = (reached, found, time.perf_counter() - started)
    return results


def table_rows(results: dict[str, tuple[int | None, int | None, float]]) -> list[str]:
    """Return Markdown table rows: each strategy against depth-k."""
    base = results["depth"][0]
    lines = []
    for name, (reached, found, seconds) in results.items():
        share = f"{reached / base:.0%}" if reached is not None and base else "—"
        lines.append(
            f"| {name} | {reached if reached is not None else 'not reached'} | {share} | "
            f"{found if found is not None else '—'} | {seconds:.1f} s |"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    """Run both campaigns and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--step", type=int, default=50)
    parser.add_argument("--seeds", type=int, nargs="*", default=[])
    parser.add_argument("--family", action="store_true", help="The family of campaigns.")
    parser.add_argument(
        "--strategies",
        nargs="*",
        default=["hybrid", "thompson", "mm-ns", "mtf"],
        choices=STRATEGIES,
        help="With --family: the strategies besides depth.",
    )
    parser.add_argument(
        "--shapes", default="".join(s.label for s in SHAPES), help="With --family: e.g. ABC."
    )
    parser.add_argument(
        "--no-demo", action="store_true", help="With --family: leave the demo collection out."
    )
    parser.add_argument(
        "--per-topic",
        type=int,
        default=120,
        help="With --family: the horizon, in judgments per topic.",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="With --family: campaigns simulated at once."
    )
    parser.add_argument(
        "--depth-draws",
        type=int,
        default=0,
        help="With --family: also depth-k with its ties broken by this many seeded draws.",
    )
    parser.add_argument(
        "--speed", action="store_true", help="Time steady, hybrid and swap (42k pairs)."
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.speed:
        print(speed_report())
        return
    if args.family:
        shapes = tuple(s for s in SHAPES if s.label in args.shapes)
        print(
            family_report(
                args.seeds or [1, 2, 3, 4, 5],
                (*args.strategies, *(f"depth~{i}" for i in range(1, args.depth_draws + 1))),
                shapes,
                with_demo=not args.no_demo,
                per_topic=args.per_topic,
                jobs=args.jobs,
            )
        )
        return
    header = [
        "| Strategy | Judgments to τ ≥ 0.9 | Share of depth-k | Relevant found by then | "
        "Simulation time |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    campaigns = [
        ("Demo collection", demo(), 10),
        (
            f"Synthetic TREC-like campaign ({args.queries} topics, {args.runs} runs, seed "
            f"{args.seed})",
            synthetic(args.queries, args.runs, args.seed),
            args.step,
        ),
    ]
    for title, (campaign, qrels), step in campaigns:
        pool = sum(campaign.n_docs)
        print(
            f"### {title}\n\n{len(campaign.runs)} runs, {len(campaign.queries)} queries, "
            f"{pool:,} pooled pairs; τ checked every {step} judgments.\n"
        )
        print("\n".join([*header, *table_rows(compare(campaign, qrels, step))]) + "\n")
    if args.seeds:
        print(
            f"### depth-k against swap, synthetic campaign ({args.queries} topics, "
            f"{args.runs} runs) drawn with each seed; τ checked every {args.step} judgments\n"
        )
        print("| Seed | depth | swap | swap / depth |\n| ---: | ---: | ---: | ---: |")
        for seed in args.seeds:
            campaign, qrels = synthetic(args.queries, args.runs, seed)
            results = compare(campaign, qrels, args.step, ("depth", "swap"))
            depth, swap = results["depth"][0], results["swap"][0]
            share = f"{swap / depth:.0%}" if depth and swap else "—"
            print(f"| {seed} | {depth} | {swap} | {share} |")


if __name__ == "__main__":
    main()
