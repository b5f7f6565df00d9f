"""A collection's pooling policy: which strategy orders its judging queue (versioned).

Each change is a new row with the next ``version``; the latest row is in force, and the
rows before it are the history. No row means depth-k, the default order of the judging
queue (:func:`judging.selectors.next_pair`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from judging.models import Collection

STRATEGY_CHOICES = [
    ("depth", "Depth-k: every pooled pair, fewest grades first, in each judge's shuffle"),
    (
        "steady",
        "Steady (recommended): the pairs that can flip runs in doubt, every run judged from "
        "its top down, and the documents that can still change a topic's ideal",
    ),
    (
        "hybrid",
        "Hybrid (steady's predecessor): the pairs that can flip close runs, keeping every "
        "run's coverage even",
    ),
    ("mtf", "Move-to-front (Cormack et al. 1998): stay with a run while it finds relevant"),
    ("mm-ns", "Bandit MM-NS (Losada et al.): the run with the best recent hit rate"),
    ("thompson", "Bandit, Thompson sampling (Losada et al.)"),
    ("swap", "Swap: the pairs whose grade can most reorder close runs on the leaderboard"),
    (
        "llm-check",
        "LLM first, humans check: the pairs the LLM judges are least sure of or whose grade "
        "can most reorder the leaderboard",
    ),
]


#: Why the recommended strategy (:data:`metrics.pool.strategies.RECOMMENDED`) is the one
#: the settings page and ``GET .../pooling/`` recommend: the figures of the benchmark
#: family in docs/pooling.md (*The family of campaigns*), in one sentence.
RECOMMENDATION = (
    "Steady is recommended: on 66 simulated campaigns (13 shapes of 10 to 80 runs and 25 "
    "to 150 topics, with runs far apart, close, or within noise of each other, five draws "
    "each, and the demo collection) it reached and kept the runs' ranking with a median "
    "49% of depth-k's judgments (Kendall's τ ≥ 0.95) and 56% (τ_AP ≥ 0.9). It needed "
    "more than depth-k on 1 of those 60 campaigns for τ (102%) and on 5 for τ_AP (at "
    "most 111%), where hybrid, recommended before it, needed up to 168% and 231%. "
    "Depth-k stays the order of a collection without a policy; docs/pooling.md lists "
    "every campaign."
)


def strategy_name(strategy: str) -> str:
    """Return a strategy's short name ("Move-to-front"), or ``strategy`` when unknown."""
    label = dict(STRATEGY_CHOICES).get(strategy)
    if label is None:
        return strategy
    return label.split(":")[0].split(" (")[0].strip()


#: The strategy's parameters (fields of :class:`PoolingPolicy`) and their accepted range.
LIMITS = {
    "wave_size": (1, 1000),
    "horizon": (1, 100_000),
    "rel_level": (1, 4),
    "cutoff": (1, 1000),
    "seed": (0, 2**31 - 1),
    "audit_percent": (0, 100),
}
PARAMETERS = tuple(LIMITS)


class PoolingPolicy(models.Model):
    """One version of a collection's pooling strategy and its parameters."""

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="pooling_policies"
    )
    version = models.PositiveIntegerField(help_text="1 for the first policy, then one more.")
    strategy = models.CharField(
        max_length=20, choices=STRATEGY_CHOICES, help_text="Which pairs judges get first."
    )
    wave_size = models.PositiveSmallIntegerField(
        default=10,
        help_text="Planned pairs per wave: judges get a wave's pairs, each in their own "
        "shuffle, before the next wave.",
    )
    horizon = models.PositiveIntegerField(
        default=100,
        help_text="How many unjudged pairs the plan orders ahead (replanned as grades arrive).",
    )
    rel_level = models.PositiveSmallIntegerField(
        default=1, help_text="Lowest grade the strategy counts as a hit (relevant)."
    )
    cutoff = models.PositiveSmallIntegerField(
        default=10,
        help_text="Steady, hybrid and swap: the rank cut-off of the leaderboard measure "
        "they weigh.",
    )
    seed = models.PositiveIntegerField(
        default=0, help_text="Seed of Thompson sampling and of llm-check's random audit."
    )
    audit_percent = models.PositiveSmallIntegerField(
        default=10,
        help_text="llm-check: percent of the human checks spent on a random sample of the "
        "pool (the unbiased audit of the LLM's grades); the rest go to the pairs that matter.",
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who set this version.",
    )
    at = models.DateTimeField(auto_now_add=True)
    planned_version = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        help_text="The judgment-list version the current plan was made at (null: not yet).",
    )
    planned_runs = models.PositiveIntegerField(
        default=0, help_text="How many runs the current plan was made from."
    )
    planned_pairs = models.PositiveIntegerField(
        default=0, help_text="How many pairs the current plan holds."
    )
    planned_at = models.DateTimeField(null=True, blank=True, help_text="When it was made.")

    class Meta:
        ordering = ["-version"]
        verbose_name_plural = "pooling policies"
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "version"], name="pooling_policy_unique_version"
            ),
            models.CheckConstraint(
                condition=Q(rel_level__gte=1) & Q(rel_level__lte=4),
                name="pooling_policy_rel_level_1_4",
            ),
            models.CheckConstraint(
                condition=Q(wave_size__gte=1), name="pooling_policy_wave_size_positive"
            ),
            models.CheckConstraint(
                condition=Q(cutoff__gte=1), name="pooling_policy_cutoff_positive"
            ),
            models.CheckConstraint(
                condition=Q(audit_percent__lte=100), name="pooling_policy_audit_percent_le_100"
            ),
        ]

    def __str__(self) -> str:
        """Return ``collection v<version>: strategy``."""
        return f"{self.collection_id} v{self.version}: {self.strategy}"

    @property
    def strategy_label(self) -> str:
        """Return the strategy's short name for people ("Move-to-front")."""
        return strategy_name(self.strategy)


#: The parameters' values when no policy was ever set (the fields' defaults).
DEFAULTS = {name: PoolingPolicy._meta.get_field(name).default for name in PARAMETERS}


#: Judgments between two ranking snapshots: a snapshot is stored whenever a collection's
#: count of final judgments enters a new multiple of this (see ``ranking_snapshot_take``).
SNAPSHOT_STRIDE = 10


class RankingSnapshot(models.Model):
    """The runs' scores on the main measure when a collection had ``judged`` judgments.

    With them, which pairs of runs differed significantly then (``significance``). The
    stop rule compares the ranking and those decisions now with the ones ``N`` judgments ago
    (:mod:`metrics.pool.stopping`). Rows are taken after commit, at most one per
    :data:`SNAPSHOT_STRIDE` judgments, once every run is scored at the list's version.
    """

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="ranking_snapshots"
    )
    judged = models.PositiveIntegerField(
        help_text="Final judgments (graded or cannot judge, human and LLM) at the snapshot."
    )
    judgments_version = models.PositiveBigIntegerField(
        help_text="The judgment-list version the runs were scored at."
    )
    measure = models.CharField(max_length=100, help_text="The leaderboard's main measure.")
    scores = models.JSONField(help_text="Run id (as text) → mean score on the measure.")
    significance = models.JSONField(
        null=True,
        blank=True,
        help_text="Which pairs of runs the leaderboard's paired t-test (Holm) told apart: "
        '{"runs": [ids], "queries": n, "better": [[winner, loser], ...]}; empty for '
        "snapshots taken before it was recorded.",
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-judged"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "judged"], name="ranking_snapshot_unique_judged"
            ),
        ]

    def __str__(self) -> str:
        """Return ``collection @ judged: measure``."""
        return f"{self.collection_id} @ {self.judged}: {self.measure}"
