"""``manage.py pooling_simulate``: replay judging in a pooling strategy's order, from files.

Usage::

    python manage.py pooling_simulate QRELS RUN_DIR [--strategy S ...] [--budget N]
        [--step M] [--measure ndcg_cut.10] [--depth 100] [--seed 0] [--plot out.svg]

The qrels are the oracle: each strategy (:mod:`metrics.pool.strategies`; ``all`` runs
every one) judges up to ``--budget`` pooled pairs in its own order, and every ``--step``
judgments the command prints the judgments spent, the relevant documents found, and
Kendall's τ-b and τ_AP of the runs' ranking by the measure so far against their ranking
under the full qrels. Then, per strategy, the judgments it needed for τ to reach 0.9 and
stay there. ``--plot`` writes τ against judgments as an SVG. RUN_DIR holds one run file
per system (TREC or JSON). No database is used. ``--help`` names the recommended
strategy (:data:`metrics.pool.strategies.RECOMMENDED`) and explains every option.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metrics.charts import line_chart
from metrics.engine import EngineInputError, MeasureError, parse_measure
from metrics.pool import simulation
from metrics.pool.strategies import RECOMMENDED, STRATEGIES, make_strategy


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


class Command(BaseCommand):
    """Simulate pooling strategies against known qrels and print how fast each converges."""

    help = (
        "Replay judging in each pooling strategy's order with the qrels as the oracle, and "
        "print how fast the runs' ranking converges to the one under the full qrels. "
        f"Recommended when unsure: {RECOMMENDED} (docs/pooling.md, 'The family of "
        "campaigns'); depth is depth-k, the order of a collection without a policy."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the command-line interface (every option has its help)."""
        parser.add_argument("qrels", help="The full qrels (TREC or JSON): the oracle.")
        parser.add_argument(
            "run_dir", type=Path, help="A folder of run files (TREC or JSON), one per system."
        )
        parser.add_argument(
            "--strategy",
            action="append",
            choices=(*STRATEGIES, "all"),
            metavar="STRATEGY",
            help=f"Strategy to simulate, one of {', '.join(STRATEGIES)} or all (repeat for "
            f"several; default all). {RECOMMENDED} is the recommended one.",
        )
        parser.add_argument(
            "--budget",
            type=_positive,
            default=1000,
            help="Judgments per strategy at most (default 1000; the pool may end first).",
        )
        parser.add_argument(
            "--step",
            type=_positive,
            default=100,
            help="Print a row every this many judgments (default 100).",
        )
        parser.add_argument(
            "--measure",
            default="ndcg_cut.10",
            help="The measure the runs are ranked by (default ndcg_cut.10; any trec_eval "
            "measure name; ndcg_cut.k is scored incrementally, the others rescored).",
        )
        parser.add_argument(
            "--depth",
            type=_positive,
            default=100,
            help="Pool depth: each run's top this many documents per query (default 100).",
        )
        parser.add_argument(
            "--cutoff",
            type=_positive,
            default=10,
            help="steady, hybrid and swap: the rank cut-off they weigh (default 10).",
        )
        parser.add_argument(
            "--seed", type=int, default=0, help="thompson: the random seed (default 0)."
        )
        parser.add_argument(
            "--rel-level",
            dest="rel_level",
            type=float,
            default=1.0,
            help="Lowest grade that counts as relevant (default 1).",
        )
        parser.add_argument(
            "--plot", type=Path, help="Write τ against judgments as an SVG to this file."
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        """Load the files, run each strategy, print the table (and write the plot)."""
        try:
            parse_measure(opts["measure"])
        except MeasureError as exc:
            raise CommandError(f"--measure: {exc}") from None
        folder: Path = opts["run_dir"]
        if not folder.is_dir():
            raise CommandError(f"{folder}: not a folder of run files")
        paths = sorted(str(p) for p in folder.iterdir() if p.is_file())
        if len(paths) < 2:
            raise CommandError(f"{folder}: at least two run files are needed to rank systems")
        try:
            campaign, qrels = simulation.load_files(opts["qrels"], paths, opts["depth"])
        except EngineInputError as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"{exc.filename}: {exc.strerror}") from None
        if not campaign.queries:
            raise CommandError("the runs rank no documents")
        grades = simulation.oracle(campaign, qrels)
        reference = simulation.reference_scores(campaign, qrels, opts["measure"])
        scorer = simulation.make_scorer(campaign, opts["measure"])
        cut = re.fullmatch(r"ndcg_cut\.(\d+)", opts["measure"])  # scored incrementally
        names = opts["strategy"] or ["all"]
        names = list(STRATEGIES) if "all" in names else list(dict.fromkeys(names))
        write = self.stdout.write
        write(
            f"{len(campaign.runs)} runs, {len(campaign.queries)} queries, "
            f"{sum(campaign.n_docs)} pooled pairs (depth {opts['depth']}); "
            f"measure {opts['measure']}"
        )
        write("strategy\tjudged\trelevant\ttau\ttau_ap")
        series, reached = [], {}
        for name in names:
            strategy = make_strategy(
                name,
                campaign,
                scores=scorer,
                depth=opts["depth"],
                cutoff=opts["cutoff"],
                seed=opts["seed"],
                rel_level=opts["rel_level"],
            )
            rows = simulation.simulate(
                campaign,
                grades,
                strategy,
                budget=opts["budget"],
                step=opts["step"],
                scores=None if cut else scorer,
                tracker=simulation.NdcgCut(campaign, int(cut.group(1))) if cut else None,
                reference=reference,
                rel_level=opts["rel_level"],
            )
            for row in rows:
                write(f"{name}\t{row.judged}\t{row.relevant}\t{row.tau:.4f}\t{row.tau_ap:.4f}")
            series.append((name, [(float(r.judged), r.tau) for r in rows]))
            reached[name] = simulation.judgments_to_reach(rows, 0.9)
        write("judgments to reach tau >= 0.9 (and stay):")
        for name, count in reached.items():
            write(f"  {name}: {'not within the budget' if count is None else count}")
        if opts["plot"] is not None:
            svg = line_chart(
                series,
                title=f"Kendall tau of the system ranking by {opts['measure']}",
                x_label="judgments",
                y_label="tau",
            )
            try:
                opts["plot"].write_text(svg, encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"{opts['plot']}: {exc.strerror}") from None
            write(f"plot written to {opts['plot']}")
