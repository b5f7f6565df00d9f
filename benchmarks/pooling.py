"""Pooling strategies compared: judgments needed for a faithful system ranking.

``python -m benchmarks.pooling [--queries 50] [--runs 30] [--seed 1] [--step 50]
[--seeds 1 2 3 4 5]``

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
import sys
import time
from pathlib import Path

import numpy as np

from metrics.pool import simulation
from metrics.pool.strategies import STRATEGIES, Campaign, make_strategy

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
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
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
