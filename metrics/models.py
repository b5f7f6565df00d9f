"""Metrics data model: teams, submitted runs, their stored rankings and scores.

A run's ranking is stored per query as a compact array of document ids (not one row per
run line). Scores are kept by query -- every run's values of one query in one row
(:class:`QueryScores`) -- and their sums by collection (:class:`Scoreboard`), so that a
judgment writes two rows whatever the number of runs (:mod:`metrics.live.store`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings
from django.db import models

from judging.models import Collection, Query
from metrics.live import matrices

#: Stored rankings hold document primary keys as little-endian int32: reading a query's
#: rankings of every run is the first judgment of the query's cost, and half the bytes
#: halve what PostgreSQL reads, decompresses and sends (docs/benchmarks.md, 2026-11-26).
RANKING_DTYPE = np.dtype("<i4")
#: The largest document primary key a stored ranking can hold.
RANKING_MAX_PK = int(np.iinfo(RANKING_DTYPE).max)


def ranking_bytes(document_pks: np.ndarray) -> bytes:
    """Return document primary keys, in rank order, as a stored ranking.

    Raise ValueError for a key outside ``0 .. RANKING_MAX_PK`` (an installation past two
    billion documents created), never storing a wrapped-around id.
    """
    pks = np.asarray(document_pks)
    if len(pks) and (int(pks.min()) < 0 or int(pks.max()) > RANKING_MAX_PK):
        raise ValueError(f"document ids must lie in 0..{RANKING_MAX_PK} to be stored in a ranking")
    return pks.astype(RANKING_DTYPE).tobytes()


def run_upload_path(run: Run, filename: str) -> str:
    """Return where the original run file is kept."""
    return f"runs/{run.collection.slug}/{run.tag}/{filename}"


class Team(models.Model):
    """A group of users who submit runs to one collection."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=200, help_text="Team name shown on the leaderboard.")
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="teams", blank=True, help_text="Who may submit."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "name"], name="team_unique_name"),
        ]

    def __str__(self) -> str:
        """Return the team's name."""
        return self.name


class Run(models.Model):
    """One submitted ranking of a collection's queries."""

    class Status(models.TextChoices):
        SCORED = "scored", "Scored"
        PENDING = "pending", "Scoring"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="runs")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="runs")
    tag = models.CharField(
        max_length=100, help_text="Run name; unique within the collection (re-use is refused)."
    )
    description = models.TextField(blank=True, help_text="How the run was produced.")
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="runs"
    )
    submitted_at = models.DateTimeField(auto_now_add=True)
    source_file = models.FileField(
        upload_to=run_upload_path, max_length=500, help_text="The file as submitted."
    )
    source_format = models.CharField(max_length=10, default="trec", help_text="trec or json.")
    query_count = models.PositiveIntegerField(default=0, help_text="Queries the run ranks.")
    line_count = models.PositiveIntegerField(default=0, help_text="Ranked lines in the file.")
    unknown_document_count = models.PositiveIntegerField(
        default=0, help_text="Distinct documents of the run that the collection did not know."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    scored_version = models.PositiveBigIntegerField(
        default=0,
        help_text="Judgment-list version the run was last scored against in full (its "
        "means live on the collection's scoreboard, which live rescoring moves).",
    )
    scored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-submitted_at"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "tag"], name="run_unique_tag"),
        ]
        indexes = [models.Index(fields=["collection", "team"], name="run_collection_team")]

    def __str__(self) -> str:
        """Return the run tag."""
        return self.tag

    @property
    def scores(self) -> dict[str, float | None]:
        """Return the mean score per measure (canonical names; None: no query counts).

        The means live on the collection's :class:`Scoreboard`; selectors attach them to
        many runs with one read (:meth:`Scoreboard.attach`), and a run read alone fetches
        its board on first use. Attaching also brings ``scored_version`` and
        ``scored_at`` up to the scoreboard's (live rescoring moves the board, not the run).
        """
        if "_scores" not in self.__dict__:
            Scoreboard.attach([self])
        return self.__dict__["_scores"]

    @scores.setter
    def scores(self, value: dict[str, float | None]) -> None:
        self.__dict__["_scores"] = value

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        """Reload the row, then its means and version from the scoreboard (one more read)."""
        self.__dict__.pop("_scores", None)
        super().refresh_from_db(*args, **kwargs)
        Scoreboard.attach([self])


class RunQuery(models.Model):
    """One query's ranking in a run, stored as an array of document ids.

    Its scores are in the query's :class:`QueryScores` column, with every other run's.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="rankings")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="run_rankings")
    ranking = models.BinaryField(
        help_text="Document primary keys in rank order, little-endian int32 bytes."
    )
    retrieved = models.PositiveIntegerField(
        help_text="Documents the run retrieved for the query; 0 for a query of the live "
        "list that the run left out (it scores as an empty ranking)."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "query"], name="run_query_unique"),
        ]
        indexes = [models.Index(fields=["query", "run"], name="run_query_by_query")]

    def __str__(self) -> str:
        """Return ``run/query``."""
        return f"{self.run_id}/{self.query_id}"

    @property
    def document_ids(self) -> np.ndarray:
        """Return the ranked document ids (int32, as stored)."""
        return np.frombuffer(bytes(self.ranking), dtype=RANKING_DTYPE)


class QueryScores(models.Model):
    """Every run's scores for one query: the one row a judgment of the query rewrites.

    A matrix of ``len(run_ids)`` rows by ``len(measures)`` columns of float64, NaN where
    the query leaves a run's mean (a measure that skips it, or no live grades). A run
    that is not listed has no score for the query. Rows of deleted runs may linger until
    the next write; readers keep the runs they know (:mod:`metrics.live.store`).
    """

    query = models.OneToOneField(
        Query, primary_key=True, on_delete=models.CASCADE, related_name="run_scores"
    )
    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="query_scores"
    )
    version = models.PositiveBigIntegerField(
        default=0, help_text="Judgment-list version these scores were computed against."
    )
    measures = models.JSONField(default=list, help_text="Canonical names: the columns.")
    run_ids = models.BinaryField(help_text="Run ids, little-endian int64: the rows.")
    values = models.BinaryField(help_text="Scores, little-endian float64, rows by columns.")

    def __str__(self) -> str:
        """Return ``query: n runs``."""
        return f"{self.query_id}: {len(self.run_ids) // 8} runs"


class Scoreboard(models.Model):
    """Every run's sums of per-query scores in one collection: the means shown everywhere.

    One row per collection, so a judgment writes one row whatever the number of runs.
    ``sums`` and ``counts`` are matrices of runs by measures (float64 and int64,
    little-endian): the sum of a run's per-query values of a measure and how many queries
    it counts; the mean is their quotient (none when no query counts).
    """

    collection = models.OneToOneField(
        Collection, primary_key=True, on_delete=models.CASCADE, related_name="scoreboard"
    )
    version = models.PositiveBigIntegerField(
        default=0, help_text="Judgment-list version every run's sums were last brought to."
    )
    scored_at = models.DateTimeField(null=True, blank=True)
    epoch = models.PositiveBigIntegerField(
        default=0,
        help_text="Changes whenever a run is added or removed; processes' caches of stored "
        "rankings are valid for one epoch.",
    )
    measures = models.JSONField(default=list, help_text="Canonical names: the columns.")
    run_ids = models.BinaryField(default=b"", help_text="Run ids, little-endian int64: the rows.")
    sums = models.BinaryField(default=b"", help_text="Sums, little-endian float64.")
    counts = models.BinaryField(default=b"", help_text="Queries counted, little-endian int64.")

    def __str__(self) -> str:
        """Return ``collection: n runs at version v``."""
        return f"{self.collection_id}: {len(self.run_ids) // 8} runs at version {self.version}"

    def means(self) -> dict[int, dict[str, float | None]]:
        """Return each run's mean per measure (None where no query counts)."""
        run_ids = matrices.ids(self.run_ids)
        rows, cols = len(run_ids), len(self.measures)
        sums = matrices.matrix(self.sums, rows, cols, matrices.F8)
        counts = matrices.matrix(self.counts, rows, cols, matrices.I8)
        return matrices.means(list(self.measures), run_ids, sums, counts)

    @classmethod
    def attach(cls, runs: Any, *, boards: dict[int, Any] | None = None) -> None:
        """Set each run's ``scores`` and current version from its collection's board.

        ``run.scores`` is a dict of canonical measure name to mean (None where no query
        counts); a run the board does not know has ``{}``. ``scored_version`` and
        ``scored_at`` become the board's when it is newer than the run's own. ``boards``
        caches what was read, by collection id, across calls (one read per collection).
        """
        if boards is None:
            boards = {}
        for run in runs:
            if run.collection_id not in boards:
                board = cls.objects.filter(collection_id=run.collection_id).first()
                boards[run.collection_id] = (board, board.means() if board else {})
            board, means = boards[run.collection_id]
            run.scores = means.get(run.pk, {})
            if board is not None and board.version > run.scored_version:
                run.scored_version, run.scored_at = board.version, board.scored_at


class DocnoIndexToken(models.Model):
    """The current token of a collection's persisted docno index (``metrics.live.docno_index``).

    A random value, replaced whenever a document's id may have changed or a document was
    deleted (``post_save`` of an existing document, ``post_delete``). Index files carry the
    token they were built under, so every process sees at once that they are stale. New
    documents need no new token: the index misses them and the lookup falls back to
    ``external_id IN (...)``, which is exact.
    """

    collection = models.OneToOneField(
        Collection, primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    token = models.BigIntegerField(help_text="Random; names the valid index files.")

    def __str__(self) -> str:
        """Return ``collection: token``."""
        return f"{self.collection_id}: {self.token:x}"


from metrics.answers.models import Answer, AnswerRun  # noqa: E402, F401  (RAG answers)
from metrics.pool.models import PoolingPolicy  # noqa: E402, F401  (pooling policy versions)
from metrics.schedules.models import (  # noqa: E402, F401  (scheduled evaluations, alerts)
    AlertWebhook,
    ScheduleCheck,
    SearchSchedule,
)
from metrics.search.models import (  # noqa: E402, F401  (live search engines)
    SearchConfiguration,
    SearchConfigVersion,
    SearchEndpoint,
    SearchSnapshot,
    SnapshotQuery,
)
from metrics.visibility.models import ScoreVisibility, Submission  # noqa: E402, F401
