"""Gold pairs, and the checks of LLM judges: canaries and versions (run in the background)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from judging.grades import GRADE_MAX, GRADE_MIN
from judging.job_status import JobStatus


class GoldPair(models.Model):
    """A pair with the grade a coordinator expects, to measure how right each judge is."""

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="gold_pairs"
    )
    query = models.ForeignKey("judging.Query", on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey("judging.Document", on_delete=models.CASCADE, related_name="+")
    grade = models.SmallIntegerField(help_text="The expected grade, 0 not relevant … 4 perfect.")
    reason = models.TextField(
        blank=True, help_text="Why this grade (shown to coordinators, never to judges)."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who marked the pair as gold.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["collection_id", "query_id", "document_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "query", "document"], name="gold_pair_unique"
            ),
            models.CheckConstraint(
                condition=Q(grade__gte=GRADE_MIN, grade__lte=GRADE_MAX),
                name="gold_pair_grade_range",
                violation_error_message="Grade must be between 0 and 4.",
            ),
        ]

    def __str__(self) -> str:
        """Return ``query/document = grade``."""
        return f"{self.query_id}/{self.document_id} = {self.grade}"


class JudgeQualification(models.Model):
    """Where a judge stands against the collection's qualification bar, kept current.

    Written under the collection's write lock whenever the judge's gold labels, the gold
    pairs or the bar change (:mod:`judging.quality.qualification`), so the live list can
    leave out the labels of judges who do not count. A judge without a row has graded no
    gold pair (qualifying). Meaningful only while the collection asks for qualification.
    """

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    judge = models.ForeignKey("judging.Judge", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=12,
        choices=[
            ("qualifying", "Qualifying: fewer gold pairs than asked"),
            ("qualified", "Qualified: labels count"),
            ("below", "Below the bar: labels do not count"),
            ("not_assessed", "Not assessed: imported, too few gold pairs; labels count"),
        ],
        help_text="judging.quality.gold.qualification of the judge's current gold labels.",
    )
    counted = models.BooleanField(help_text="Whether the judge's labels count in the live list.")
    graded = models.PositiveIntegerField(help_text="Gold pairs the judge has graded.")
    window = models.PositiveIntegerField(help_text="The most recent of them the rule looks at.")
    window_exact = models.PositiveIntegerField(help_text="Of those, graded exactly as gold.")
    changed_at = models.DateTimeField(help_text="When the judge last started or stopped counting.")
    shown_counted = models.BooleanField(
        default=False,
        help_text="What the judge is told of whether they count: the standing as of the last "
        "time their judged pairs reached a new multiple of SHOWN_EVERY (so a change never "
        "points at the pair that caused it).",
    )
    shown_status = models.CharField(
        max_length=12, default="qualifying", help_text="The standing the judge is told."
    )
    shown_block = models.PositiveIntegerField(
        default=0, help_text="Highest multiple of SHOWN_EVERY judged pairs the judge reached."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "judge"], name="judge_qualification_unique"
            ),
        ]

    def __str__(self) -> str:
        """Return ``judge: status``."""
        return f"{self.judge_id}: {self.status}"


class QualificationChange(models.Model):
    """A judge started or stopped counting in a collection's live list (the history)."""

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    judge = models.ForeignKey("judging.Judge", on_delete=models.CASCADE, related_name="+")
    counted = models.BooleanField(help_text="Whether the judge's labels count from now on.")
    status = models.CharField(max_length=12, help_text="The judge's standing from now on.")
    graded = models.PositiveIntegerField(help_text="Gold pairs the judge had graded.")
    window = models.PositiveIntegerField()
    window_exact = models.PositiveIntegerField()
    needed = models.PositiveSmallIntegerField(help_text="Gold pairs the bar asked for then.")
    share = models.FloatField(help_text="Exact share the bar asked for then.")
    at = models.DateTimeField()

    class Meta:
        ordering = ["at", "id"]
        indexes = [
            models.Index(fields=["collection", "judge", "at"], name="qualification_change"),
        ]

    def __str__(self) -> str:
        """Return ``judge counted|not counted @ time``."""
        return f"{self.judge_id} {'counted' if self.counted else 'not counted'} @ {self.at}"


class QualityCheck(models.Model):
    """What a canary check and a version check share: an LLM judge asked in the background.

    A check is created *queued* by the request that asks for it and run by a background
    task (:mod:`judging.quality.tasks`), which marks it *running*, asks the judge, and
    ends it *done* with its results, or *failed* with the reason in ``error`` (the judge
    could not run, the provider refused every request, or fail-fast stopped it).
    ``version`` names the judge's configuration the check ran with (model, provider,
    prompt, decoding, scale); only done checks enter the rates and version reports.
    """

    Status = JobStatus

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="%(class)ss"
    )
    judge = models.ForeignKey("judging.Judge", on_delete=models.CASCADE, related_name="+")
    version = models.CharField(
        max_length=80, help_text="Digest of the judge's configuration when checked."
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.QUEUED, help_text="Where it is."
    )
    error = models.TextField(blank=True, help_text="Why the check failed, if it did.")
    prompt_tokens = models.PositiveBigIntegerField(
        default=0, help_text="Prompt tokens the judge's answers reported."
    )
    completion_tokens = models.PositiveBigIntegerField(
        default=0, help_text="Completion tokens the judge's answers reported."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who ran the check.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True, help_text="When a worker took it.")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When it ended.")

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        """Return ``judge version @ time``."""
        return f"{self.judge_id} {self.version} @ {self.created_at}"

    @property
    def ended(self) -> bool:
        """Return whether the check has ended (done or failed)."""
        return self.status in (self.Status.DONE, self.Status.FAILED)


class CanaryCheck(QualityCheck):
    """One run of an LLM judge on canary documents (whose right grade is 0).

    Checks of one ``version`` are pooled into its failure rates.
    """

    seed = models.PositiveIntegerField(help_text="Seed the canaries were generated with.")
    queries = models.PositiveSmallIntegerField(
        default=5, help_text="Queries (the collection's first, by id) canaries were made for."
    )

    class Meta(QualityCheck.Meta):
        indexes = [models.Index(fields=["collection", "judge", "version"], name="canary_judge")]


class CanaryResult(models.Model):
    """What the judge answered for one canary."""

    canary_check = models.ForeignKey(CanaryCheck, on_delete=models.CASCADE, related_name="results")
    kind = models.CharField(
        max_length=10,
        choices=[("stuffing", "Keyword stuffing"), ("injection", "Instruction injection")],
    )
    qid = models.CharField(max_length=500, help_text="The query the canary was made for.")
    title = models.CharField(max_length=600)
    text = models.TextField(help_text="The canary document as sent.")
    grade = models.SmallIntegerField(
        null=True, blank=True, help_text="The grade the judge gave; empty when unreadable."
    )
    raw_answer = models.TextField(blank=True, help_text="The judge's answer as received.")
    problem = models.TextField(blank=True, help_text="Why no grade could be read, if so.")

    class Meta:
        ordering = ["canary_check_id", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(grade__isnull=True) | Q(grade__gte=GRADE_MIN, grade__lte=GRADE_MAX),
                name="canary_result_grade_range",
            ),
        ]

    def __str__(self) -> str:
        """Return ``kind qid = grade``."""
        return f"{self.kind} {self.qid} = {self.grade}"

    @property
    def failed(self) -> bool:
        """Return whether the judge graded the canary above 0 (its right grade)."""
        return self.grade is not None and self.grade > 0


class VersionSamplePair(models.Model):
    """A human-graded pair of the collection's frozen sample for checking LLM judge versions.

    Drawn once, at the first version check, and kept: every later version is checked on
    the same pairs (plus the gold pairs of the day), so versions compare like with like.
    """

    collection = models.ForeignKey("judging.Collection", on_delete=models.CASCADE, related_name="+")
    query = models.ForeignKey("judging.Query", on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey("judging.Document", on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "query", "document"], name="version_sample_unique"
            )
        ]

    def __str__(self) -> str:
        """Return ``query/document``."""
        return f"{self.query_id}/{self.document_id}"


class VersionCheck(QualityCheck):
    """One LLM judge version graded the gold pairs and the frozen sample, recording nothing."""

    class Meta(QualityCheck.Meta):
        indexes = [models.Index(fields=["collection", "judge"], name="version_check_judge")]


class VersionCheckResult(models.Model):
    """The grade a version gave one pair of a version check, with the reference grades."""

    version_check = models.ForeignKey(
        VersionCheck, on_delete=models.CASCADE, related_name="results"
    )
    query = models.ForeignKey("judging.Query", on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey("judging.Document", on_delete=models.CASCADE, related_name="+")
    grade = models.SmallIntegerField(null=True, blank=True, help_text="Empty when unreadable.")
    human_grade = models.SmallIntegerField(
        null=True, blank=True, help_text="Lower median of the human grades at the time."
    )
    gold_grade = models.SmallIntegerField(
        null=True, blank=True, help_text="The gold grade, for gold pairs."
    )
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    problem = models.TextField(blank=True, help_text="Why no grade could be read, if so.")

    class Meta:
        ordering = ["version_check_id", "id"]

    def __str__(self) -> str:
        """Return ``query/document = grade``."""
        return f"{self.query_id}/{self.document_id} = {self.grade}"
