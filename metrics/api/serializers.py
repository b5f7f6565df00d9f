"""Serializers of the metrics API: what each endpoint accepts and renders."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.api import FiniteFloatField
from metrics.models import Run, Scoreboard, Team
from metrics.selectors import BOOTSTRAP_CONFIDENCE, LeaderboardRow

JUDGED_PREFIX = "Judged@"


def _score() -> serializers.FloatField:
    """Return a field for one score (null: no value)."""
    return serializers.FloatField(allow_null=True)


def _scores_field(help_text: str) -> serializers.DictField:
    """Return a read-only map of canonical measure name to value (null: no value)."""
    return serializers.DictField(child=_score(), read_only=True, help_text=help_text)


# --- teams -------------------------------------------------------------------------------


class TeamSummarySerializer(serializers.ModelSerializer):
    """The team a run belongs to."""

    class Meta:
        model = Team
        fields = ["id", "name"]
        read_only_fields = fields


class TeamSerializer(serializers.ModelSerializer):
    """A team with its members' usernames."""

    members = serializers.SlugRelatedField(
        slug_field="username", many=True, read_only=True, help_text="Usernames of the members."
    )

    class Meta:
        model = Team
        fields = ["id", "name", "members", "created_at"]
        read_only_fields = fields


class TeamCreateSerializer(serializers.Serializer):
    """A new team and the usernames of its members."""

    name = serializers.CharField(
        min_length=1, max_length=200, help_text="Shown on the leaderboard."
    )
    members = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        default=list,
        help_text="Usernames; each member gets the collection's team role.",
    )


# --- runs --------------------------------------------------------------------------------


class RunSerializer(serializers.ModelSerializer):
    """A submitted run, its counts and its mean scores.

    ``stale`` needs ``judgments_version`` (the collection's current version) in the context,
    the scores the viewer's ``score_policy`` (:mod:`metrics.visibility.selectors`): as the
    policy shows them, or none without it. A list view applies the policy to a whole page
    at once and marks the runs ``_scores_shown``.
    """

    team = TeamSummarySerializer(read_only=True)
    submitted_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="Username."
    )
    scores = _scores_field("Mean score per measure, keyed by canonical measure name.")
    # A plain string in the schema: a second "status" enum would collide with the judgments'.
    status = serializers.CharField(
        read_only=True, help_text="`scored`, or `pending` while the run is being scored."
    )
    stale = serializers.SerializerMethodField(
        help_text="Whether the judgment list changed since the scores were computed."
    )

    class Meta:
        model = Run
        fields = [
            "id",
            "tag",
            "team",
            "description",
            "submitted_by",
            "submitted_at",
            "source_format",
            "status",
            "query_count",
            "line_count",
            "unknown_document_count",
            "scores",
            "scored_version",
            "scored_at",
            "stale",
        ]
        read_only_fields = fields

    def to_representation(self, run: Run) -> dict[str, Any]:
        """Attach the run's means from the scoreboard (read once per response), then serialise."""
        if "_scores" not in run.__dict__:
            Scoreboard.attach([run], boards=self.context.setdefault("scoreboards", {}))
        policy = self.context.get("score_policy")
        if policy is None:  # fail closed: no policy, no score
            run.scores = {}
        elif not run.__dict__.get("_scores_shown"):
            policy.apply([run])
        return super().to_representation(run)

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_stale(self, run: Run) -> bool:
        """Return whether the run was scored against an older judgment list."""
        return run.scored_version < self.context["judgments_version"]


@extend_schema_field(OpenApiTypes.BINARY)
class UploadField(serializers.FileField):
    """An uploaded file, documented as binary multipart content."""


class RunSubmitSerializer(serializers.Serializer):
    """A run file and its name (multipart form)."""

    file = UploadField(
        help_text="TREC run lines `qid Q0 docno rank score tag`, or JSON / JSON Lines "
        'objects `{"qid", "docno", "score"}`.'
    )
    tag = serializers.CharField(
        min_length=1,
        max_length=100,
        help_text="Run name; unique within the collection (re-use is refused).",
    )
    description = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="How the run was produced."
    )
    team = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Team id; needed when you are in several teams, and for coordinators.",
    )


class RunUpdateSerializer(serializers.Serializer):
    """Changes to a run; fields left out keep their values."""

    tag = serializers.CharField(min_length=1, max_length=100, required=False)
    description = serializers.CharField(required=False, allow_blank=True)


# --- bias-corrected means ----------------------------------------------------------------


class PPICellSerializer(serializers.Serializer):
    """One run's bias-corrected (prediction-powered) mean of one measure."""

    estimate = serializers.FloatField(
        allow_null=True,
        help_text="The mean people's grades would give, estimated from the LLM's grades and "
        "the audited queries' human grades (PPI++). Null when not available or not shown "
        "(see reason).",
    )
    low = serializers.FloatField(
        allow_null=True,
        help_text="Lower end of the interval at ppi_audit.confidence; it holds the LLM's "
        "error. Null when the interval would have zero or infinite width (see "
        "interval_note), and for viewers who see no intervals.",
    )
    high = serializers.FloatField(allow_null=True, help_text="Upper end of the interval.")
    lam = serializers.FloatField(
        allow_null=True,
        help_text="λ in [0, 1], the weight given to the LLM's scores (0: the audited "
        "queries' human scores alone).",
    )
    llm_mean = serializers.FloatField(
        allow_null=True, help_text="The run's mean on the LLM's grades alone."
    )
    audited_queries = serializers.IntegerField(
        source="audited",
        allow_null=True,
        help_text="Audited queries the estimate rests on (sampled, every pair graded by people).",
    )
    queries = serializers.IntegerField(
        allow_null=True, help_text="Queries the mean is over (the units)."
    )
    reason = serializers.CharField(
        help_text="Why a field is null (empty when every field is given)."
    )
    interval_note = serializers.CharField(
        help_text="Why there is no interval (`low` and `high` null) although the estimate "
        "is given: every query audited (the mean is exact), the audited queries do not "
        "vary (a zero width would claim a certainty the audit cannot give), one audited "
        "query, or an interval wholly beyond the measure's range; empty otherwise "
        "(docs/measures.md)."
    )


class PPIAuditSerializer(serializers.Serializer):
    """The audit the bias-corrected means rest on."""

    available = serializers.BooleanField(
        help_text="Whether bias-corrected means are available at all."
    )
    reason = serializers.CharField(
        help_text="Why not (e.g. no live grade is LLM-only); empty when available."
    )
    unit = serializers.CharField(help_text="The audit's unit: query (docs/measures.md).")
    target = serializers.CharField(
        help_text="collection: the mean people would give this collection's queries."
    )
    confidence = serializers.FloatField(help_text="Confidence of the intervals.")
    audit_share = serializers.FloatField(
        allow_null=True, help_text="Share of the queries the random audit draws."
    )
    queries = serializers.IntegerField(allow_null=True, help_text="Queries with live grades.")
    sampled = serializers.IntegerField(
        allow_null=True, help_text="Of those, the queries the audit drew."
    )
    audited = serializers.IntegerField(
        allow_null=True, help_text="Of those, the ones every pair of which people graded."
    )


def ppi_cells(cells: dict[str, Any], *, scores_only: bool) -> dict[str, Any]:
    """Return the serialised cells by measure (without Judged@k with ``scores_only``).

    One serializer renders every cell: building one per cell (its fields copied each
    time) made ``GET .../leaderboard/`` of 30 runs × the 96 measures of ``all_trec`` take
    552 ms instead of 43 ms (docs/measures.md).
    """
    cell_serializer = PPICellSerializer()
    return {
        m: cell_serializer.to_representation(cell)
        for m, cell in cells.items()
        if not (scores_only and m.startswith(JUDGED_PREFIX))
    }


class RunScoresSerializer(serializers.Serializer):
    """A run's mean and per-query scores."""

    measures = serializers.ListField(
        child=serializers.CharField(), help_text="Canonical names of the collection's measures."
    )
    version = serializers.IntegerField(help_text="Judgment-list version the scores rest on.")
    stale = serializers.BooleanField(
        help_text="Whether the judgment list changed since the scores were computed."
    )
    aggregate = _scores_field("Mean per measure (null: not scored, or not shown to you).")
    per_query = serializers.DictField(
        child=serializers.DictField(child=_score()),
        help_text="Per qid of the live judgment list: value per measure (null = left out). "
        "Empty while your collection's score visibility hides per-query values.",
    )
    ppi = serializers.DictField(
        child=PPICellSerializer(),
        help_text="Per measure, the bias-corrected (prediction-powered) mean with its "
        "interval, λ and audited queries; null fields with a reason when not available.",
    )
    ppi_audit = PPIAuditSerializer(help_text="The audit behind `ppi`, or why there is none.")
    visibility = serializers.CharField(
        help_text="What you see of scores: full, none (hidden until the judgments are "
        "published), aggregate (rounded means over enough queries), public or private "
        "(means on that share of the queries)."
    )


# --- leaderboard -------------------------------------------------------------------------


class GapSerializer(serializers.Serializer):
    """A run against the run ranked just above it, paired over the same queries."""

    run = serializers.CharField(source="above_run.tag", help_text="Tag of the run above.")
    difference = serializers.FloatField(source="above.difference", help_text="Mean above − mean.")
    low = serializers.FloatField(source="above.low", help_text="Bootstrap interval of the gap.")
    high = serializers.FloatField(source="above.high")
    swap_share = serializers.FloatField(
        source="above.swap_share", help_text="Share of resamples in which this run is higher."
    )
    p_value = FiniteFloatField(
        source="above.p_value",
        help_text="Paired t-test, two-sided; null with fewer than two queries.",
    )
    may_swap = serializers.BooleanField(
        source="above.uncertain", help_text="The gap's interval holds 0."
    )


class IntervalSerializer(serializers.Serializer):
    """A run's bootstrap percentile interval of the sorted measure."""

    measure = serializers.CharField()
    confidence = serializers.SerializerMethodField()
    queries = serializers.IntegerField(help_text="Queries resampled (scored for every run).")
    low = serializers.FloatField()
    high = serializers.FloatField()
    above = serializers.SerializerMethodField()

    def get_confidence(self, interval: Any) -> float:
        """Return the interval's confidence level."""
        return BOOTSTRAP_CONFIDENCE

    @extend_schema_field(GapSerializer(allow_null=True))
    def get_above(self, interval: Any) -> dict[str, Any] | None:
        """Return the gap to the run above (None for the first run)."""
        return GapSerializer(interval).data if interval.above is not None else None


class RankIntervalSerializer(serializers.Serializer):
    """The 95% interval of a run's rank (1 = best) over the bootstrap resamples."""

    low = serializers.IntegerField(help_text="Best rank the run plausibly holds.")
    high = serializers.IntegerField(help_text="Worst rank the run plausibly holds.")


class LeaderboardRowSerializer(serializers.Serializer):
    """One run on the leaderboard (rendered from a ``LeaderboardRow``)."""

    run = serializers.CharField(source="run.tag", help_text="Run tag.")
    run_id = serializers.IntegerField(source="run.pk")
    team = serializers.CharField(source="run.team.name", help_text="Team name.")
    scores = serializers.SerializerMethodField(help_text="Mean per measure (not Judged@k).")
    judged = serializers.SerializerMethodField(
        help_text="Judged@k coverage: share of the top k documents that are judged."
    )
    stale = serializers.BooleanField()
    interval = IntervalSerializer(
        allow_null=True,
        help_text="Bootstrap interval of the sorted measure over queries and the gap to the "
        "run above; null for runs without a score on it.",
    )
    rank_interval = serializers.SerializerMethodField(
        help_text="95% interval of the run's rank on the sorted measure over the same "
        "bootstrap resamples of queries, stretched to hold its rank; null where the "
        "interval is (hidden scores, provenance=human, no score)."
    )
    groups = serializers.SerializerMethodField(
        help_text="The run's letters as the page prints them (compact letter display), e.g. "
        '"ab": two runs share a letter exactly when the paired t-test of the sorted '
        "measure, Holm-corrected over every pair of the board's runs (alpha 0.05), cannot "
        'tell them apart. "a" is the group holding the top run; a run may hold several. '
        "Beyond 52 letters on a board they run a2, b2, … and are separated by spaces. "
        "Null like rank_interval."
    )
    group_numbers = serializers.SerializerMethodField(
        help_text="The same letters as numbers, 1 = a, 2 = b, …; null like rank_interval."
    )
    tier = serializers.SerializerMethodField(
        help_text="The number of the run's first letter (1 = a). Runs with the same tier "
        "share that letter, so they cannot be told apart; runs with different tiers may "
        "still share another letter (read groups). Null like rank_interval."
    )
    human_only = serializers.FloatField(
        allow_null=True,
        help_text="With provenance=all and LLM-filled grades: the sorted measure on human "
        "grades alone (null otherwise).",
    )
    human_rank = serializers.IntegerField(
        allow_null=True, help_text="The run's rank on human grades alone (null otherwise)."
    )
    ppi = serializers.SerializerMethodField(
        help_text="Per measure of scores, the bias-corrected (prediction-powered) mean, its "
        "interval, λ and the audited queries; null fields with a reason when not available."
    )

    @extend_schema_field(RankIntervalSerializer(allow_null=True))
    def get_rank_interval(self, row: LeaderboardRow) -> dict[str, int] | None:
        """Return the rank interval, or None where the row has no interval."""
        interval = row.interval
        if interval is None or interval.rank_low is None:
            return None
        return {"low": interval.rank_low, "high": interval.rank_high}

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_tier(self, row: LeaderboardRow) -> int | None:
        """Return the number of the row's first letter, or None where it has none."""
        return row.interval.tier if row.interval is not None else None

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_groups(self, row: LeaderboardRow) -> str | None:
        """Return the row's letters as printed, or None where it has none."""
        interval = row.interval
        return interval.letters if interval is not None and interval.groups else None

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField(), allow_null=True))
    def get_group_numbers(self, row: LeaderboardRow) -> list[int] | None:
        """Return the row's letters as 1-based numbers, or None where it has none."""
        interval = row.interval
        if interval is None or not interval.groups:
            return None
        return [g + 1 for g in interval.groups]

    @extend_schema_field(serializers.DictField(child=_score()))
    def get_scores(self, row: LeaderboardRow) -> dict[str, float | None]:
        """Return the row's scores other than Judged@k."""
        return {m: v for m, v in row.scores.items() if not m.startswith(JUDGED_PREFIX)}

    @extend_schema_field(serializers.DictField(child=_score()))
    def get_judged(self, row: LeaderboardRow) -> dict[str, float | None]:
        """Return the row's Judged@k values."""
        return {m: v for m, v in row.scores.items() if m.startswith(JUDGED_PREFIX)}

    @extend_schema_field(serializers.DictField(child=PPICellSerializer()))
    def get_ppi(self, row: LeaderboardRow) -> dict[str, Any]:
        """Return the row's bias-corrected means (the measures of ``scores``)."""
        return ppi_cells(row.ppi, scores_only=True)


class LeaderboardSerializer(serializers.Serializer):
    """Visible runs × measures, best first, with the judgment-list version."""

    measures = serializers.ListField(
        child=serializers.CharField(), help_text="Canonical names of the collection's measures."
    )
    version = serializers.IntegerField(help_text="Current judgment-list version.")
    changed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the judgment list last changed."
    )
    coverage_threshold = serializers.FloatField(
        help_text="Judged@k below this share means the scores rest on thin judgments."
    )
    provenance = serializers.ChoiceField(
        choices=["all", "human"],
        help_text="all: the live list (human grades, LLM grades where no human graded); "
        "human: human grades alone.",
    )
    llm_filled = serializers.BooleanField(
        help_text="Whether some live grades come from LLM judges alone."
    )
    human_differs = serializers.BooleanField(
        help_text="With provenance=all: whether some run scores differently on human grades "
        "alone (then rows carry human_only and human_rank)."
    )
    rows = LeaderboardRowSerializer(many=True)
    ppi_audit = PPIAuditSerializer(
        help_text="The audit behind the rows' bias-corrected means (`ppi`), or why there are none."
    )
    visibility = serializers.CharField(
        help_text="What you see of scores: full, none (hidden until the judgments are "
        "published), aggregate (rounded means over enough queries), public or private "
        "(means on that share of the queries)."
    )

    def to_representation(self, instance: Any) -> dict[str, Any]:
        """Render a ``Leaderboard`` with the collection's coverage threshold (context)."""
        data = {
            "measures": instance.measures,
            "version": instance.version,
            "changed_at": instance.changed_at,
            "coverage_threshold": self.context["coverage_threshold"],
            "provenance": instance.provenance,
            "llm_filled": instance.llm_filled,
            "human_differs": instance.human_differs,
            "rows": instance.rows,
            "ppi_audit": instance.ppi,
            "visibility": self.context["visibility"],
        }
        return super().to_representation(data)


class RunCreatedSerializer(RunSerializer):
    """A run just submitted, with how many pairs it added to the judging pool."""

    pairs_pooled = serializers.IntegerField(
        read_only=True,
        help_text="New (query, document) pairs this submission added to the judges' pool.",
    )

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "pairs_pooled"]
        read_only_fields = fields
