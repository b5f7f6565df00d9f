"""Every pair of runs: false differences and power of Holm and Tukey's HSD on synthetic boards.

``python -m benchmarks.pairs [--draws 400] [--seed 1]``

Each draw builds a board of ``runs`` runs over ``topics`` topics and compares every pair
with :func:`metrics.engine.pairs.all_pairs` under both corrections (alpha 0.05):

- a run's score on a topic is the topic's effect (uniform on 0.2–0.8, shared by every
  run), plus the run's true mean, plus noise. How the noise is shared is the shape:
  **alike**, every run has its own noise of sd 0.1; **variants**, all but two runs are
  variants of one system (its noise, sd 0.1, plus their own, sd 0.02) and the other two
  are systems of their own (sd 0.1); **spread**, the runs' own noise sd grows from 0.03 to
  0.2 down the board. Scores are not clipped to [0, 1] (the tests do not need it).
- **null** boards give every run the same true mean: any significant pair is a false
  difference, and the family-wise error is the share of boards with at least one.
- **staircase** boards space the true means ``step`` apart: every pair truly differs,
  and power is the share of pairs found.

Reported per shape: the family-wise error (null) or the mean share of pairs found
(staircase) with each correction, and how often the two disagree on a pair. No database;
the Markdown report goes to stdout.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np

from metrics.engine.pairs import all_pairs

SHAPES = ("alike", "variants", "spread")


def board(rng: np.random.Generator, shape: str, runs: int, topics: int, step: float) -> np.ndarray:
    """Return one synthetic board (runs × topics) of the given noise shape."""
    topic = rng.uniform(0.2, 0.8, topics)
    means = -step * np.arange(runs)
    if shape == "alike":
        noise = rng.normal(0.0, 0.1, (runs, topics))
    elif shape == "variants":
        shared = rng.normal(0.0, 0.1, topics)
        noise = shared + rng.normal(0.0, 0.02, (runs, topics))
        noise[-2:] = rng.normal(0.0, 0.1, (2, topics))
    else:
        noise = rng.normal(0.0, 1.0, (runs, topics)) * np.linspace(0.03, 0.2, runs)[:, None]
    return topic + means[:, None] + noise


def measure(shape: str, runs: int, topics: int, step: float, draws: int, seed: int) -> dict:
    """Return the figures of one board shape over ``draws`` boards."""
    rng = np.random.default_rng(seed)
    any_found = {"holm": 0, "tukey": 0}
    found = {"holm": 0.0, "tukey": 0.0}
    disagree = 0
    pairs = runs * (runs - 1) // 2
    for _ in range(draws):
        scores = board(rng, shape, runs, topics, step)
        order = np.arange(runs)  # the true order: pairs line up across corrections
        marked = {}
        for correction in ("holm", "tukey"):
            result = all_pairs(scores, correction=correction, order=order)
            marked[correction] = np.array([p.significant for p in result.pairs])
            any_found[correction] += bool(marked[correction].any())
            found[correction] += marked[correction].mean()
        disagree += int(np.sum(marked["holm"] != marked["tukey"]))
    return {
        "shape": shape,
        "runs": runs,
        "topics": topics,
        "step": step,
        "holm_any": any_found["holm"] / draws,
        "tukey_any": any_found["tukey"] / draws,
        "holm_found": found["holm"] / draws,
        "tukey_found": found["tukey"] / draws,
        "disagree": disagree / (draws * pairs),
    }


def main(argv: list[str] | None = None) -> int:
    """Run every shape and print the Markdown report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.time()
    print(f"# Every pair: Holm and Tukey's HSD ({args.draws} boards a row, seed {args.seed})\n")
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}\n")
    for step, label, what in (
        (0.0, "null", "share of boards with any false difference (family-wise error)"),
        (0.02, "staircase", "mean share of the (all truly different) pairs found"),
    ):
        print(f"**{label}**: {what}.\n")
        print("| shape | runs | topics | true gap | Holm | Tukey | pairs they disagree on |")
        print("|---|---|---|---|---|---|---|")
        for shape in SHAPES:
            for runs, topics in ((8, 50), (4, 25), (20, 150)):
                row = measure(shape, runs, topics, step, args.draws, args.seed)
                key = "any" if step == 0.0 else "found"
                print(
                    f"| {shape} | {runs} | {topics} | {step:g} | {row['holm_' + key]:.3f} | "
                    f"{row['tukey_' + key]:.3f} | {row['disagree']:.3f} |"
                )
        print()
    print(f"{time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
