"""Judging data model: collections, queries, documents, judges, judgments and their history.

Writes go through :mod:`judging.services`; reads through :mod:`judging.selectors`.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from judging.grades import GRADE_MAX, GRADE_MIN

DEFAULT_GRADE_NAMES = [
    "Not relevant",
    "Marginally relevant",
    "Relevant",
    "Highly relevant",
    "Perfect match",
]
DEFAULT_MEASURES = [
    "nDCG@10",
    "nDCG(gain=exp)@10",
    "P@10",
    "RR",
    "AP",
    "R@100",
    "Judged@10",
]


def default_grade_names() -> list[str]:
    """Return a fresh copy of the default names of grades 0–4."""
    return list(DEFAULT_GRADE_NAMES)


def default_measures() -> list[str]:
    """Return a fresh copy of the default leaderboard measure set."""
    return list(DEFAULT_MEASURES)


#: Username prefix of the inactive users behind imported human judges
#: (:func:`judging.lists.services.judge_for_import`).
IMPORTED_USER_PREFIX = "imported-"


def imported_judges() -> Q:
    """Return the condition on :class:`Judge` of the judges an import created.

    Human ones are backed by an inactive ``imported-…`` user (they can never log in); LLM
    ones have provider ``import`` (no configuration to run). Neither can be served a pair.
    """
    return Q(kind="llm", provider="import") | Q(
        kind="human", user__username__startswith=IMPORTED_USER_PREFIX
    )


def random_shuffle_key() -> int:
    """Return a random 31-bit key used to shuffle pairs without an ORDER BY RANDOM()."""
    return secrets.randbelow(2**31 - 1)


class Collection(models.Model):
    """A judging campaign: queries, documents, the grade scale and who takes part."""

    class Purpose(models.TextChoices):
        """What a collection is for: it picks the defaults of what teams see of scores."""

        INTERNAL = (
            "internal",
            "Internal evaluation: teams see their live scores as judgments arrive; "
            "no daily run budget",
        )
        SHARED_TASK = (
            "shared_task",
            "Shared task: scores hidden from teams until publication; a daily run budget",
        )

    name = models.CharField(max_length=200, help_text="Human-readable name.")
    purpose = models.CharField(
        max_length=20,
        choices=Purpose.choices,
        default=Purpose.SHARED_TASK,
        db_default=Purpose.SHARED_TASK,
        help_text="What the collection is for, chosen at creation. It sets the defaults of "
        "what teams see of scores and of their runs per day (metrics.visibility) until a "
        "coordinator changes those settings; live scores let a team infer unpublished "
        "grades, which matters in a shared task and not in an internal evaluation.",
    )
    slug = models.SlugField(
        max_length=100, unique=True, help_text="Identifier used in URLs and by scripts."
    )
    guidelines = models.TextField(
        blank=True, help_text="Instructions for judges (Markdown), shown on every card."
    )
    grade_names = models.JSONField(
        default=default_grade_names,
        help_text="Names of grades 0 to 4, in order (exactly five strings).",
    )
    judges_per_pair = models.PositiveSmallIntegerField(
        default=1, help_text="How many judges should grade each pooled (query, document) pair."
    )
    pool_depth = models.PositiveIntegerField(
        default=10, help_text="Top-k documents of each submitted run that join the judging pool."
    )
    coverage_threshold = models.FloatField(
        default=0.9,
        help_text="Judged@k below this share marks a run's scores as resting on thin judgments.",
    )
    measures = models.JSONField(
        default=default_measures, help_text="Measures shown on the leaderboard (engine names)."
    )
    leaderboard_published = models.BooleanField(
        default=False,
        help_text="When off, teams see only their own runs; coordinators always see all.",
    )
    judgments_published = models.BooleanField(
        default=False,
        help_text="When on, team members may download the live judgment list "
        "(judges never can: judging stays blind).",
    )
    search_by_teams = models.BooleanField(
        default=False,
        help_text="When on, team members may write search configurations for their own "
        "teams, try and run them, and read their snapshots (coordinators always can).",
    )
    judgments_version = models.PositiveBigIntegerField(
        default=0,
        help_text="Incremented on every judgment change; scores record the version they used.",
    )
    gold_rate = models.FloatField(
        default=0.0,
        db_default=0.0,
        help_text="Share of the pairs served to judges that are gold pairs they have not "
        "graded yet, mixed in blind (0: gold pairs are judged only as ordinary pool pairs).",
    )
    qualification_pairs = models.PositiveSmallIntegerField(
        default=0,
        db_default=0,
        help_text="Gold pairs a judge must have graded before their labels count in the "
        "live list (0: no qualification, every judge counts). See judging.quality.gold.",
    )
    qualification_share = models.FloatField(
        default=0.8,
        db_default=0.8,
        help_text="Share of a judge's most recent gold pairs (as many as qualification_pairs) "
        "graded exactly as gold for the judge to qualify, and to stay qualified.",
    )
    guidelines_version = models.PositiveIntegerField(
        default=1,
        db_default=1,
        help_text="Counts the changes of the guidelines and of the queries' descriptions "
        "and narratives (judging.guidelines); each label records the version it was given "
        "under.",
    )
    judgments_changed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the judgment list last changed."
    )
    aggregation_policy = models.CharField(
        max_length=50,
        default="lower_median_human_then_llm",
        help_text="How several judges' grades become the one live grade of a pair "
        "(a name from judging.aggregation.POLICIES).",
    )
    disagreement_spread = models.PositiveSmallIntegerField(
        default=2,
        help_text="A pair whose grades differ by at least this much is a disagreement: it "
        "is listed for adjudication and, with escalation on, sent to one more judge (one "
        "rule for both; see judging.disagreement).",
    )
    max_judges_per_pair = models.PositiveSmallIntegerField(
        default=0,
        help_text="Send disagreements to one more judge, up to this many judges per pair "
        "(0: off; only counts when above judges per pair).",
    )
    agreement_alert_threshold = models.FloatField(
        default=0.5,
        help_text="Warn coordinators when a judge's agreement with the others (share of "
        "equal grades) falls below this.",
    )
    llm_hint = models.CharField(
        max_length=10,
        choices=[
            ("hidden", "Never: human judges grade blind"),
            ("shown", "Always: human judges see the LLM grade (assisted)"),
            ("half", "On half the pairs, at random per judge: measures anchoring"),
        ],
        default="hidden",
        help_text="Whether the judging card shows human judges the LLM judges' grade of "
        "the pair; each human label records whether it was shown.",
    )
    evidence = models.CharField(
        max_length=10,
        choices=[
            ("off", "Off: judges mark no evidence"),
            ("optional", "Optional: judges may mark evidence"),
            ("required", "Required from a grade on"),
        ],
        default="off",
        db_default="off",
        help_text="Evidence spans (judging.evidence): whether human judges may, or from "
        "evidence_from_grade on must, select the passages of a document that support "
        "their grade.",
    )
    evidence_from_grade = models.PositiveSmallIntegerField(
        default=1,
        db_default=1,
        help_text="With evidence required: the lowest grade that needs at least one span "
        "(can't judge and later never do).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(purpose__in=["internal", "shared_task"]), name="collection_purpose"
            ),
            models.CheckConstraint(
                condition=Q(judges_per_pair__gte=1), name="collection_judges_per_pair_positive"
            ),
            models.CheckConstraint(
                condition=Q(evidence__in=["off", "optional", "required"])
                & Q(evidence_from_grade__gte=GRADE_MIN)
                & Q(evidence_from_grade__lte=GRADE_MAX),
                name="collection_evidence_rule",
            ),
            models.CheckConstraint(
                condition=Q(coverage_threshold__gte=0) & Q(coverage_threshold__lte=1),
                name="collection_coverage_threshold_unit",
            ),
            models.CheckConstraint(
                condition=Q(gold_rate__gte=0) & Q(gold_rate__lte=1),
                name="collection_gold_rate_unit",
            ),
            models.CheckConstraint(
                condition=Q(qualification_share__gte=0) & Q(qualification_share__lte=1),
                name="collection_qualification_share_unit",
            ),
            models.CheckConstraint(
                condition=Q(disagreement_spread__gte=1) & Q(disagreement_spread__lte=4),
                name="collection_disagreement_spread_range",
            ),
            models.CheckConstraint(
                condition=Q(agreement_alert_threshold__gte=0) & Q(agreement_alert_threshold__lte=1),
                name="collection_agreement_alert_unit",
            ),
        ]

    def __str__(self) -> str:
        """Return the collection's name."""
        return self.name

    def clean(self) -> None:
        """Check that exactly five non-empty grade names are given."""
        names = self.grade_names
        if (
            not isinstance(names, list)
            or len(names) != GRADE_MAX - GRADE_MIN + 1
            or not all(isinstance(n, str) and n.strip() for n in names)
        ):
            raise ValidationError(
                {"grade_names": "Give exactly five non-empty names, for grades 0 to 4."}
            )

    @property
    def grade_scale(self) -> list[tuple[int, str]]:
        """Return ``(grade, name)`` pairs from 0 to 4."""
        return list(enumerate(self.grade_names, start=GRADE_MIN))


class Membership(models.Model):
    """A user's role in one collection."""

    class Role(models.TextChoices):
        COORDINATOR = "coordinator", "Coordinator"
        JUDGE = "judge", "Judge"
        TEAM = "team", "Team member"
        ADJUDICATOR = "adjudicator", "Adjudicator"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(
        max_length=20, choices=Role.choices, help_text="What the user may do in the collection."
    )
    quota = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Most pairs this judge grades in the collection (empty: no limit; "
        "judge role only).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "user", "role"], name="membership_unique_role"
            ),
        ]
        indexes = [models.Index(fields=["user", "role"], name="membership_user_role")]

    def __str__(self) -> str:
        """Return ``user @ collection (role)``."""
        return f"{self.user} @ {self.collection} ({self.role})"


class Query(models.Model):
    """A topic: the query text plus what judges read to decide relevance."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="queries")
    external_id = models.CharField(
        max_length=500, help_text="Query id as in runs and qrels (at most 500 characters)."
    )
    text = models.TextField(help_text="The query as a user typed it.")
    description = models.TextField(blank=True, help_text="One-sentence information need.")
    narrative = models.TextField(
        blank=True, help_text="What makes a document relevant or not, for judges."
    )

    class Meta:
        verbose_name_plural = "queries"
        ordering = ["collection_id", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "external_id"], name="query_unique_external_id"
            ),
        ]

    def __str__(self) -> str:
        """Return ``external_id: text``."""
        return f"{self.external_id}: {self.text}"


class Document(models.Model):
    """A document of a collection; bodies are untrusted text or HTML."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(
        max_length=500, help_text="Document id (docno) as in runs (at most 500 characters)."
    )
    title = models.TextField(blank=True, help_text="Title shown to judges.")
    body = models.TextField(
        blank=True, help_text="Untrusted text or HTML; sanitised before display."
    )
    url = models.URLField(max_length=2000, blank=True, help_text="Source address, if any.")
    extra = models.JSONField(
        default=dict, blank=True, help_text="Further fields, shown to judges as a table."
    )
    has_content = models.BooleanField(
        default=True,
        help_text="False for documents known only by id (from runs); never shown to judges.",
    )

    class Meta:
        ordering = ["collection_id", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "external_id"], name="document_unique_external_id"
            ),
        ]

    def __str__(self) -> str:
        """Return the document id."""
        return self.external_id


class Judge(models.Model):
    """Who produced a grade: a human user or an LLM configuration.

    Both kinds live in one table so that agreement between any two judges is one query.
    """

    class Kind(models.TextChoices):
        HUMAN = "human", "Human"
        LLM = "llm", "LLM"

    kind = models.CharField(max_length=10, choices=Kind.choices, help_text="Human or LLM.")
    name = models.CharField(max_length=200, help_text="Display name (hidden from other judges).")
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="judge",
        help_text="The user behind a human judge.",
    )
    collections = models.ManyToManyField(
        Collection,
        blank=True,
        related_name="llm_judges",
        help_text="Collections an LLM judge works for: only their coordinators see and use it.",
    )
    provider = models.CharField(max_length=100, blank=True, help_text="LLM provider.")
    model = models.CharField(max_length=200, blank=True, help_text="LLM model name.")
    model_version = models.CharField(max_length=100, blank=True, help_text="LLM model version.")
    prompt_template = models.TextField(blank=True, help_text="Prompt template the LLM was given.")
    prompt_version = models.CharField(max_length=100, blank=True, help_text="Prompt version.")
    decoding = models.JSONField(
        default=dict, blank=True, help_text="Decoding parameters (temperature, top_p, ...)."
    )
    native_scale = models.JSONField(
        default=list, blank=True, help_text="Labels of the LLM's own scale, if not 0–4."
    )
    scale_mapping = models.JSONField(
        default=dict, blank=True, help_text="Mapping from native labels to grades 0–4."
    )
    llm_provider = models.ForeignKey(
        "judging.LLMProvider",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="judges",
        help_text="Where Graded sends this LLM judge's requests (registered by the operator).",
    )
    system_prompt = models.TextField(blank=True, help_text="System message sent before the prompt.")
    answer_pattern = models.CharField(
        max_length=500,
        blank=True,
        help_text="Regular expression whose last match is the label (default: final score: N).",
    )
    json_mode = models.BooleanField(
        default=False, help_text="Ask for a JSON answer (response_format json_object)."
    )
    max_attempts = models.PositiveSmallIntegerField(
        default=5, help_text="Attempts per pair, including retries of transient failures."
    )
    timeout_seconds = models.FloatField(default=60.0, help_text="Timeout of one request.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(kind="human") & Q(user__isnull=False))
                | (Q(kind="llm") & Q(user__isnull=True) & ~Q(model="")),
                name="judge_kind_fields",
                violation_error_message="A human judge needs a user; an LLM judge needs a model.",
            ),
        ]

    def __str__(self) -> str:
        """Return the judge's name."""
        return self.name


class PoolEntry(models.Model):
    """A (query, document) pair in a collection's judging pool."""

    class Source(models.TextChoices):
        MANUAL = "manual", "Added by a coordinator"
        RUN = "run", "Pooled from a run"
        IMPORT = "import", "Imported"

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="pool_entries")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="pool_entries")
    collection = models.ForeignKey(
        Collection,
        on_delete=models.CASCADE,
        related_name="pool_entries",
        help_text="Denormalised from the query for fast per-collection queues.",
    )
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.MANUAL)
    graded_count = models.PositiveIntegerField(
        default=0, help_text="How many judges have graded this pair (kept by the services)."
    )
    shuffle_key = models.PositiveIntegerField(
        default=random_shuffle_key, help_text="Random key; orders pairs against position bias."
    )
    is_open = models.BooleanField(
        default=False,
        help_text="Whether the pair still needs grades (kept by the services with the "
        "progress counters; see judging.progress.models).",
    )
    priority = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Wave of the collection's pooling plan, lower first; null when the pair "
        "is not planned (judged after every planned pair, in the default order). Kept by "
        "the pooling strategy (metrics.pool); null for every pair under depth-k.",
    )
    added_at = models.DateTimeField(
        default=timezone.now,
        editable=False,
        help_text="When the pair entered the pool: one time for every pair pooled together "
        "(a run's pairs, an import's, a coordinator's), gold pairs that waited included.",
    )

    class Meta:
        verbose_name_plural = "pool entries"
        constraints = [
            models.UniqueConstraint(fields=["query", "document"], name="pool_entry_unique_pair"),
        ]
        indexes = [
            models.Index(fields=["collection", "graded_count"], name="pool_collection_count"),
            models.Index(
                fields=["collection", "graded_count", "shuffle_key"], name="pool_next"
            ),  # next_pair: first rows of a (grade count, rotated shuffle) range
            models.Index(
                fields=["collection", "priority"],
                name="pool_planned",
                condition=Q(priority__isnull=False),
            ),  # next_pair's planned arm and the plan listing: the few planned pairs only
        ]

    def __str__(self) -> str:
        """Return ``qid/docno``."""
        return f"{self.query_id}/{self.document_id}"


class Judgment(models.Model):
    """The current label one judge gave one (query, document) pair."""

    class Status(models.TextChoices):
        GRADED = "graded", "Graded"
        CANNOT_JUDGE = "cannot_judge", "Cannot judge"
        LATER = "later", "Judge later"

    # judge and collection lead composite indexes (judgment_unique_current, judgment_pair),
    # which serve their lookups; an index of their own would only slow every write.
    # db_constraint=False: on PostgreSQL these references are checked once per statement
    # (migration 0015), not by a row-level foreign-key trigger per written row; SQLite
    # keeps its foreign keys. See docs/architecture.md, "Integrity at bulk scale".
    judge = models.ForeignKey(
        Judge,
        on_delete=models.PROTECT,
        related_name="judgments",
        db_index=False,
        db_constraint=False,
    )
    query = models.ForeignKey(
        Query, on_delete=models.CASCADE, related_name="judgments", db_constraint=False
    )
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="judgments", db_constraint=False
    )
    collection = models.ForeignKey(
        Collection,
        on_delete=models.CASCADE,
        related_name="judgments",
        db_index=False,
        help_text="Denormalised from the query; the database checks it matches both sides.",
        db_constraint=False,
    )
    grade = models.SmallIntegerField(
        null=True, blank=True, help_text="0 not relevant … 4 perfect; empty unless graded."
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.GRADED)
    note = models.TextField(
        blank=True, help_text="Judge's note, LLM explanation, or why it cannot be judged."
    )
    seconds = models.FloatField(
        null=True, blank=True, help_text="Time spent on the pair (client-measured, capped)."
    )
    abstain_probability = models.FloatField(
        null=True,
        blank=True,
        help_text="Probability that this document makes an LLM abstain (for UDCG), 0–1.",
    )
    guidelines_version = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The collection's guidelines version when the label was last written "
        "(empty: written before versions were kept).",
    )
    # Nullable (not "" by default): adding it then needs no table rebuild on SQLite,
    # which would drop the judgments table's triggers and foreign keys.
    judge_version = models.CharField(  # noqa: DJ001
        max_length=80,
        null=True,
        blank=True,
        help_text="LLM labels: the version of the judge's configuration that gave the "
        "label (judging.llm.judges.judge_version); empty for human labels.",
    )
    # Nullable without a default, like judge_version: no table rebuild on SQLite.
    evidence = models.JSONField(
        null=True,
        blank=True,
        help_text='Evidence spans (judging.evidence): [{"start", "end", "text"}], code-point '
        "offsets into the document's evidence text, merged and in order; empty when none.",
    )
    saw_llm_grade = models.BooleanField(
        null=True,
        blank=True,
        help_text="Human labels: whether the judge saw an LLM grade of the pair before "
        "grading (assisted) or not (blind); null when not recorded (API, imports, LLMs).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "query", "document"], name="judgment_unique_current"
            ),
            models.CheckConstraint(
                condition=Q(grade__isnull=True) | Q(grade__gte=GRADE_MIN, grade__lte=GRADE_MAX),
                name="judgment_grade_range",
                violation_error_message="Grade must be between 0 and 4.",
            ),
            models.CheckConstraint(
                condition=(Q(status="graded") & Q(grade__isnull=False))
                | (Q(status__in=["cannot_judge", "later"]) & Q(grade__isnull=True)),
                name="judgment_grade_iff_graded",
                violation_error_message="A graded judgment has a grade; other statuses have none.",
            ),
            models.CheckConstraint(
                condition=Q(seconds__isnull=True) | Q(seconds__gte=0),
                name="judgment_seconds_nonnegative",
            ),
            models.CheckConstraint(
                condition=Q(abstain_probability__isnull=True)
                | Q(abstain_probability__gte=0, abstain_probability__lte=1),
                name="judgment_abstain_probability_unit",
            ),
        ]
        indexes = [
            models.Index(fields=["collection", "query", "document"], name="judgment_pair"),
            # previous_entry_id: the judge's judgments newest first, ties by id
            models.Index(
                fields=["judge", "collection", "created_at", "id"], name="judgment_judge_time"
            ),
            # last_query_id: the judge's most recently changed judgment
            models.Index(
                fields=["judge", "collection", "updated_at", "id"], name="judgment_judge_recent"
            ),
            # next_pair: the pairs a judge deferred with "later" (a few of their judgments)
            models.Index(
                fields=["judge", "collection"],
                condition=Q(status="later"),
                name="judgment_judge_later",
            ),
        ]

    def __str__(self) -> str:
        """Return ``judge: query/document = grade``."""
        value = self.grade if self.status == self.Status.GRADED else self.status
        return f"{self.judge_id}: {self.query_id}/{self.document_id} = {value}"


class JudgmentEvent(models.Model):
    """One append-only history entry: a judgment was created, changed or deleted."""

    class Action(models.TextChoices):
        CREATE = "create", "Created"
        CHANGE = "change", "Changed"
        DELETE = "delete", "Deleted"

    class Channel(models.TextChoices):
        BROWSER = "browser", "Browser"
        API = "api", "API"
        IMPORT = "import", "Import"
        ADMIN = "admin", "Admin"
        SYSTEM = "system", "System"
        LLM = "llm", "LLM judge run"
        ADJUDICATION = "adjudication", "Adjudication"

    judgment = models.ForeignKey(
        Judgment,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="events",
        help_text="Empty once the judgment itself is deleted; the event stays.",
        db_constraint=False,
    )
    # collection and judge lead event_pair and event_judge_time, which serve their lookups.
    # db_constraint=False on every reference: checked per statement on PostgreSQL, like
    # Judgment's (migration 0015).
    collection = models.ForeignKey(
        Collection,
        on_delete=models.CASCADE,
        related_name="events",
        db_index=False,
        db_constraint=False,
    )
    judge = models.ForeignKey(
        Judge,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="events",
        db_index=False,
        help_text="Whose label changed; empty for an adjudication (the pair's, not a judge's).",
        db_constraint=False,
    )
    query = models.ForeignKey(
        Query, on_delete=models.CASCADE, related_name="events", db_constraint=False
    )
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="events", db_constraint=False
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="judgment_events",
        help_text="The user who made the change (empty for system changes).",
        db_constraint=False,
    )
    action = models.CharField(max_length=10, choices=Action.choices)
    channel = models.CharField(max_length=20, choices=Channel.choices)
    before = models.JSONField(null=True, blank=True, help_text="Label before the change.")
    after = models.JSONField(null=True, blank=True, help_text="Label after the change.")
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["at", "id"]
        indexes = [
            models.Index(fields=["collection", "query", "document"], name="event_pair"),
            models.Index(fields=["judge", "at"], name="event_judge_time"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(Q(channel="adjudication") & Q(judge__isnull=True))
                | (~Q(channel="adjudication") & Q(judge__isnull=False)),
                name="event_judge_unless_adjudication",
                violation_error_message="Only adjudication events have no judge.",
            ),
        ]

    def __str__(self) -> str:
        """Return ``action judgment via channel``."""
        return f"{self.action} {self.judgment_id} via {self.channel}"


class LiveGrade(models.Model):
    """One aggregated grade per (query, document): the live judgment list.

    Kept current by the judgment services from the judges' graded judgments under the
    collection's aggregation policy; runs are scored against it. Fractional grades are
    possible under averaging policies.
    """

    # collection and query lead live_grade_query and live_grade_unique_pair.
    # db_constraint=False: checked per statement on PostgreSQL, like Judgment's (0015).
    collection = models.ForeignKey(
        Collection,
        on_delete=models.CASCADE,
        related_name="live_grades",
        db_index=False,
        db_constraint=False,
    )
    query = models.ForeignKey(
        Query,
        on_delete=models.CASCADE,
        related_name="live_grades",
        db_index=False,
        db_constraint=False,
    )
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="live_grades", db_constraint=False
    )
    grade = models.FloatField(help_text="Aggregated grade, 0–4.")
    human_count = models.PositiveIntegerField(
        default=0, help_text="Human grades behind this pair's live grade."
    )
    llm_count = models.PositiveIntegerField(
        default=0, help_text="LLM grades behind this pair's live grade."
    )
    version = models.PositiveBigIntegerField(
        default=0, help_text="Collection judgment-list version at which this grade last changed."
    )
    abstain_probability = models.FloatField(
        null=True,
        blank=True,
        help_text="Aggregated abstention probability for UDCG (judging.abstain: mean of the "
        "recorded ones, human first); empty when no graded judgment recorded one (counts as 0).",
    )
    policy = models.CharField(
        max_length=50, blank=True, help_text="Aggregation policy that produced this grade."
    )
    adjudicated = models.BooleanField(
        default=False, help_text="True when an adjudication in force sets this grade."
    )
    judge_ids = models.JSONField(
        default=list,
        blank=True,
        help_text="Ids of the judges whose grades the policy used (sorted).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["query", "document"], name="live_grade_unique_pair"),
            models.CheckConstraint(
                condition=Q(grade__gte=GRADE_MIN, grade__lte=GRADE_MAX),
                name="live_grade_range",
            ),
            models.CheckConstraint(
                condition=Q(abstain_probability__isnull=True)
                | Q(abstain_probability__gte=0, abstain_probability__lte=1),
                name="live_grade_abstain_probability_unit",
            ),
        ]
        indexes = [
            models.Index(fields=["collection", "query"], name="live_grade_query"),
            # "is any live grade LLM-filled?" on every leaderboard read (provenance)
            models.Index(
                fields=["collection"],
                condition=Q(human_count=0, adjudicated=False),
                name="live_grade_llm_only",
            ),
        ]

    def __str__(self) -> str:
        """Return ``query/document = grade``."""
        return f"{self.query_id}/{self.document_id} = {self.grade:g}"


class Adjudication(models.Model):
    """A final grade for a pair, set by a coordinator or adjudicator with a reason.

    In force until revoked: it overrides the aggregated grade in the live judgment list.
    Every adjudication and revocation is also a history event (channel ``adjudication``).
    """

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="adjudications"
    )
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="adjudications")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="adjudications")
    grade = models.SmallIntegerField(help_text="The final grade, 0–4.")
    reason = models.TextField(help_text="Why this grade (shown to coordinators and adjudicators).")
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="adjudications",
        help_text="Who set the grade.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(
        null=True, blank=True, help_text="When it was revoked (empty: in force)."
    )
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who revoked it.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["query", "document"],
                condition=Q(revoked_at__isnull=True),
                name="adjudication_one_in_force",
                violation_error_message="This pair already has an adjudication in force.",
            ),
            models.CheckConstraint(
                condition=Q(grade__gte=GRADE_MIN, grade__lte=GRADE_MAX),
                name="adjudication_grade_range",
            ),
        ]
        indexes = [
            models.Index(fields=["collection", "revoked_at"], name="adjudication_in_force"),
            models.Index(fields=["query", "document"], name="adjudication_pair"),
        ]

    def __str__(self) -> str:
        """Return ``query/document := grade``."""
        return f"{self.query_id}/{self.document_id} := {self.grade}"


class PolicyChange(models.Model):
    """A change of a collection's aggregation policy (the policies' version history)."""

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="policy_changes"
    )
    previous = models.CharField(max_length=50, help_text="The policy before the change.")
    policy = models.CharField(max_length=50, help_text="The policy after the change.")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who changed it.",
    )
    version = models.PositiveBigIntegerField(
        help_text="The judgment-list version the new policy's live list starts at."
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["collection", "at"], name="policy_change_time")]

    def __str__(self) -> str:
        """Return ``previous -> policy``."""
        return f"{self.previous} -> {self.policy}"


from judging.guidelines.models import GuidelineVersion  # noqa: E402, F401  (versions)
from judging.imports.models import FileImport  # noqa: E402, F401  (background file imports)

# LLM judge runs and the providers they may call.
from judging.llm.models import (  # noqa: E402, F401
    LLMFailure,
    LLMJob,
    LLMJobChunk,
    LLMOutput,
    LLMProvider,
    LLMUsage,
)
from judging.progress.models import JudgeProgress, PoolProgress  # noqa: E402, F401  (progress counters)
from judging.quality.models import (  # noqa: E402, F401  (gold pairs, canaries)
    CanaryCheck,
    CanaryResult,
    GoldPair,
    JudgeQualification,
    QualificationChange,
    VersionCheck,
    VersionCheckResult,
    VersionSamplePair,
)
