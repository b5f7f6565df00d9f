"""Bias-corrected LLM-filled means: coverage and width of PPI intervals on synthetic campaigns.

``python -m benchmarks.ppi [--draws 200] [--seed 1] [--resamples 1000]``

Each draw builds a fresh synthetic campaign, grades it twice, audits it and scores it:

- **Campaign.** ``topics`` topics and ``runs`` systems of varied quality; each run returns
  the top 20 of 1,000 documents per topic (graded 0–3; 1–8% relevant, and some topics
  harder to rank than others); the pool is the union of the runs' top 20, and every pooled pair
  is graded.
- **Grades.** The human grade is the truth. The LLM's grade is one too high on 30% of
  the non-relevant pairs (so they count as relevant) and one too low on 20% of the
  relevant ones, drawn per pair: the LLM-filled grades are the LLM's everywhere except
  on the audited queries, which also have human grades.
- **Audit.** A simple random sample of ``round(share × topics)`` topics (at least 2),
  every pooled pair of which has a human grade (the query-level audit that
  ``metrics.engine.ppi.audited_mean`` assumes; docs/measures.md says why).
- **Scores.** Per run and query, nDCG@10, P@10 and AP under the human grades (``h``)
  and under the LLM grades (``f``), with ``metrics.engine.evaluate_ranked``.

Per run and measure the target is the *human-judged mean*: the mean of ``h`` over all
the campaign's topics. Reported per campaign shape (topics, runs, audit share), over
draws × runs:

- the share of 95% intervals that cover the target, for PPI++ (``audited_mean``, tuned
  λ, the ``collection`` target), for the same with the ``topics`` target, for the
  LLM-filled mean's bootstrap over queries (``metrics.engine.uncertainty``, as the
  leaderboard shows it) and for the human-only mean of the audited topics (λ = 0);
- the median interval width of each, and the mean λ;
- the mean absolute error of the LLM-filled mean and of the PPI++ estimate.

No database; the Markdown report goes to stdout.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from metrics.engine import evaluate_ranked
from metrics.engine.ppi import audited_mean
from metrics.engine.uncertainty import leaderboard_uncertainty

MEASURES = ("nDCG@10", "P@10", "AP")
DEPTH = 20
UNIVERSE = 1000
SHAPES = (  # topics, runs, audit share
    (25, 10, 0.2),
    (25, 10, 0.4),
    (50, 30, 0.1),
    (50, 30, 0.2),
    (100, 10, 0.1),
    (100, 30, 0.3),
)


def campaign(
    rng: np.random.Generator, topics: int, runs: int
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Return human and LLM labels at each rank ``(runs·topics, DEPTH)`` and per-topic pools.

    Rows are run-major: row ``r·topics + t`` is run ``r`` on topic ``t``.
    """
    quality = np.linspace(1.5, 0.3, runs)
    human_rows = np.empty((runs, topics, DEPTH))
    llm_rows = np.empty((runs, topics, DEPTH))
    human_pool: list[np.ndarray] = []
    llm_pool: list[np.ndarray] = []
    for t in range(topics):
        density = rng.uniform(0.01, 0.08)
        difficulty = rng.uniform(0.3, 1.5)  # how well systems separate this topic's relevant
        relevant = rng.random(UNIVERSE) < density
        grades = np.where(relevant, rng.choice([1, 2, 3], UNIVERSE, p=[0.5, 0.3, 0.2]), 0)
        grades = grades.astype(np.float64)
        up = (grades == 0) & (rng.random(UNIVERSE) < 0.3)
        down = (grades > 0) & (rng.random(UNIVERSE) < 0.2)
        llm = grades + up - down
        pooled: set[int] = set()
        for r in range(runs):
            score = quality[r] * difficulty * grades + rng.normal(0, 1.0, UNIVERSE)
            top = np.argsort(-score)[:DEPTH]
            human_rows[r, t] = grades[top]
            llm_rows[r, t] = llm[top]
            pooled.update(top.tolist())
        pool = np.fromiter(sorted(pooled), dtype=np.int64)
        human_pool.append(grades[pool])
        llm_pool.append(llm[pool])
    shape = (runs * topics, DEPTH)
    return human_rows.reshape(shape), llm_rows.reshape(shape), human_pool, llm_pool


def score(labels: np.ndarray, pools: list[np.ndarray], runs: int) -> dict[str, np.ndarray]:
    """Return ``{measure: (runs, topics) per-query scores}``."""
    topics = len(pools)
    out = evaluate_ranked(
        labels, np.full(labels.shape[0], DEPTH), pools * runs, list(MEASURES), rel_level=1
    )
    return {
        m: values.reshape(runs, topics) for m, values in zip(MEASURES, out.values(), strict=True)
    }


@dataclass
class Tally:
    """Coverage counts and widths of one kind of interval."""

    covered: int = 0
    total: int = 0
    widths: list[float] = field(default_factory=list)

    def add(self, low: float, high: float, truth: float) -> None:
        """Count one interval."""
        self.covered += bool(low <= truth <= high)
        self.total += 1
        self.widths.append(high - low)

    @property
    def coverage(self) -> float:
        """Return the share of intervals that covered the truth."""
        return self.covered / self.total

    @property
    def width(self) -> float:
        """Return the median width."""
        return float(np.median(self.widths))


@dataclass
class ShapeResult:
    """Everything measured on one campaign shape."""

    kinds: dict[str, Tally] = field(
        default_factory=lambda: {k: Tally() for k in ("ppi", "topics", "llm", "human")}
    )
    per_measure: dict[str, Tally] = field(default_factory=lambda: {m: Tally() for m in MEASURES})
    llm_error: list[float] = field(default_factory=list)
    ppi_error: list[float] = field(default_factory=list)
    lams: list[float] = field(default_factory=list)
    seconds: float = 0.0


def run_shape(
    topics: int, runs: int, share: float, draws: int, seed: int, resamples: int
) -> ShapeResult:
    """Simulate ``draws`` campaigns of one shape."""
    rng = np.random.default_rng([seed, topics, runs, int(share * 100)])
    result = ShapeResult()
    started = time.perf_counter()
    audit_size = max(2, round(share * topics))
    for draw in range(draws):
        human_rows, llm_rows, human_pool, llm_pool = campaign(rng, topics, runs)
        h_all = score(human_rows, human_pool, runs)
        f_all = score(llm_rows, llm_pool, runs)
        audit = np.zeros(topics, dtype=bool)
        audit[rng.choice(topics, audit_size, replace=False)] = True
        for m in MEASURES:
            h, f = h_all[m], f_all[m]
            # the LLM-filled scores: human where audited, LLM elsewhere (the live list)
            filled = np.where(audit, h, f)
            order = np.argsort(-filled.mean(axis=1), kind="stable")
            boot, _pairs = leaderboard_uncertainty(filled, order, resamples=resamples, seed=draw)
            for r in range(runs):
                truth = float(h[r].mean())
                # f: the LLM's grades alone on every topic, audited or not
                ppi = audited_mean(f[r], h[r], audit)
                wide = audited_mean(f[r], h[r], audit, target="topics")
                human = audited_mean(f[r], h[r], audit, lam=0.0)
                result.kinds["ppi"].add(ppi.low, ppi.high, truth)
                result.kinds["topics"].add(wide.low, wide.high, truth)
                result.kinds["human"].add(human.low, human.high, truth)
                result.kinds["llm"].add(boot[r].low, boot[r].high, truth)
                result.per_measure[m].add(ppi.low, ppi.high, truth)
                result.llm_error.append(abs(float(filled[r].mean()) - truth))
                result.ppi_error.append(abs(ppi.estimate - truth))
                result.lams.append(ppi.lam)
    result.seconds = time.perf_counter() - started
    return result


def main(argv: list[str] | None = None) -> None:
    """Simulate every shape and print the Markdown report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--shapes", type=int, default=len(SHAPES), help="first N shapes only")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print(
        f"{args.draws} draws per shape, seed {args.seed}, {args.resamples} bootstrap resamples;"
        f" Python {platform.python_version()}, numpy {np.__version__}\n"
    )
    print(
        "| Topics | Runs | Audited topics | PPI++ coverage (width) | PPI++ topics-target "
        "coverage (width) | LLM-filled bootstrap coverage (width) | Human-only coverage "
        "(width) | Width PPI++ / human-only | Mean λ | Mean abs. error LLM-filled / PPI++ | "
        "Coverage nDCG@10 / P@10 / AP | Time |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for topics, runs, share in SHAPES[: args.shapes]:
        res = run_shape(topics, runs, share, args.draws, args.seed, args.resamples)
        k = res.kinds

        def cell(name: str, k: dict[str, Tally] = k) -> str:
            return f"{k[name].coverage:.1%} ({k[name].width:.3f})"

        ratio = k["ppi"].width / k["human"].width
        per_measure = " / ".join(f"{res.per_measure[m].coverage:.1%}" for m in MEASURES)
        print(
            f"| {topics} | {runs} | {max(2, round(share * topics))} | {cell('ppi')} | "
            f"{cell('topics')} | {cell('llm')} | {cell('human')} | {ratio:.2f} | "
            f"{np.mean(res.lams):.2f} | {np.mean(res.llm_error):.3f} / "
            f"{np.mean(res.ppi_error):.3f} | {per_measure} | {res.seconds:.0f} s |",
            flush=True,
        )


if __name__ == "__main__":
    main()
