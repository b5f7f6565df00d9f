"""How often do scheduled alerts fire when the engine did not change, changed a little, a lot?

``python -m benchmarks.alerts [--schedules 300] [--seed 1]`` simulates schedules whose
true change is known and runs every pair of consecutive snapshots through
:func:`metrics.schedules.noise.judge_change`, the alert rule of the app, with the
per-query scores from the engine (``ndcg_cut.10`` by :func:`metrics.engine.evaluate`,
trec_eval's definition). It reports, per shape and scenario, the share of schedules
that alerted, beside Quepid's rule (alert on any drop of the mean).

A simulated schedule: a collection of ``topics`` topics, 300 documents each, each
relevant with the topic's own chance (a Beta draw), graded 1–4, and an engine that
scores a document by its grade times its quality times the topic's ease, plus a
document's fixed noise (the engine's errors) and fresh noise at every snapshot (*index
churn*: new documents, shards, ties; σ ``churn``). Two snapshots: the baseline and a
later one at quality × (1 − change). ``none`` is change 0 (only churn differs), ``small``
2 %, ``large`` 10 %. Shapes vary the topics (25, 50, 150) and the churn (low, high).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass

import numpy as np

from metrics.engine import evaluate
from metrics.engine.io import Qrels, Run
from metrics.schedules import noise

DOCS = 300
DEPTH = 100
SCENARIOS = {"none": 0.0, "small": 0.02, "large": 0.10}


@dataclass(frozen=True)
class Shape:
    """One kind of collection and engine."""

    name: str
    topics: int
    churn: float


SHAPES = (
    Shape("25 topics, low churn", 25, 0.15),
    Shape("50 topics, low churn", 50, 0.15),
    Shape("50 topics, high churn", 50, 0.5),
    Shape("150 topics, high churn", 150, 0.5),
)


@dataclass(frozen=True)
class Collection:
    """Grades per topic (topics × DOCS, 0–4) and the engine's fixed per-document part."""

    grades: np.ndarray
    ease: np.ndarray
    fixed: np.ndarray
    qrels: Qrels


def collection(topics: int, rng: np.random.Generator) -> Collection:
    """Draw a collection of ``topics`` topics."""
    chance = rng.beta(2.0, 14.0, size=(topics, 1))
    relevant = rng.random((topics, DOCS)) < chance
    grades = np.where(relevant, rng.integers(1, 5, size=(topics, DOCS)), 0)
    ease = rng.lognormal(0.0, 0.4, size=(topics, 1))
    fixed = rng.normal(0.0, 1.0, size=(topics, DOCS))
    qids = [f"t{t}" for t in range(topics)]
    qrels = Qrels.from_arrays(
        qids=np.repeat(qids, DOCS),
        docnos=np.tile([f"d{d}" for d in range(DOCS)], topics),
        labels=grades.ravel().astype(float),
    )
    return Collection(grades=grades, ease=ease, fixed=fixed, qrels=qrels)


def snapshot_scores(
    coll: Collection, quality: float, churn: float, rng: np.random.Generator
) -> np.ndarray:
    """Return one snapshot's ndcg_cut.10 per topic."""
    topics = coll.grades.shape[0]
    score = (
        coll.grades * quality * coll.ease + coll.fixed + rng.normal(0.0, churn, coll.fixed.shape)
    )
    order = np.argsort(-score, axis=1, kind="stable")[:, :DEPTH]
    qids = np.repeat([f"t{t}" for t in range(topics)], DEPTH)
    docnos = np.array([f"d{d}" for d in range(DOCS)])[order].ravel()
    scores = np.take_along_axis(score, order, axis=1).ravel()
    run = Run.from_arrays(qids=qids, docnos=docnos, scores=scores)
    result = evaluate(coll.qrels, run, ["ndcg_cut.10"])
    return np.array([result.value("ndcg_cut.10", f"t{t}") for t in range(topics)])


@dataclass(frozen=True)
class Outcome:
    """One simulated schedule's verdicts: the app's rule and Quepid's (any drop)."""

    fired: bool
    dropped: bool
    change: float


def simulate(shape: Shape, scenario: str, schedules: int, seed: int) -> list[Outcome]:
    """Run ``schedules`` simulated schedules of one shape and scenario."""
    rng = np.random.default_rng([seed, shape.topics, int(shape.churn * 100), len(scenario)])
    out = []
    for _ in range(schedules):
        coll = collection(shape.topics, rng)
        before = snapshot_scores(coll, 1.0, shape.churn, rng)
        after = snapshot_scores(coll, 1.0 - SCENARIOS[scenario], shape.churn, rng)
        verdict = noise.judge_change(before, after, resamples=2000)
        out.append(
            Outcome(
                fired=verdict.fired,
                dropped=bool(after.mean() < before.mean()),
                change=float(after.mean() - before.mean()),
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the table of docs/search.md (alerts)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", type=int, default=300, help="Schedules per cell.")
    parser.add_argument("--seed", type=int, default=1, help="Seed of the draws.")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(
        "| Shape | Scenario | Schedules | Mean change of ndcg_cut.10 | Alerted (Graded) "
        "| Any drop (Quepid's rule) |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for shape in SHAPES:
        for scenario in SCENARIOS:
            found = simulate(shape, scenario, args.schedules, args.seed)
            fired = sum(o.fired for o in found) / len(found)
            dropped = sum(o.dropped for o in found) / len(found)
            change = statistics.fmean(o.change for o in found)
            print(
                f"| {shape.name} | {scenario} | {len(found)} | {change:+.4f} | "
                f"{fired:.1%} | {dropped:.1%} |"
            )
    print(f"\n{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
