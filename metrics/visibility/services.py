"""Write side of score visibility: a collection's settings, and the submission budget.

The budget is taken inside the submission's transaction (:func:`budget_take`, called by
:func:`metrics.services.run_submit`): the team's row is locked first, the team's counted
submissions of the last :data:`BUDGET_WINDOW` are counted, and the submission is recorded
(:class:`Submission`, kept when the run is deleted). Concurrent submissions of one team
queue on that lock, so the count each sees includes the ones that committed before it;
a rejected or failed submission rolls its record back with everything else.

Lock order: the team's row (``FOR NO KEY UPDATE``), then the collection's (taken later
by scoring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from judging.models import Collection, Membership
from judging.selectors import user_roles
from metrics.visibility.models import ScoreVisibility, Submission
from metrics.visibility.selectors import BUDGET_WINDOW, purpose_defaults, rules

#: Bounds of the settings (the form, the REST serializer and this service share them).
MAX_MIN_QUERIES = 100_000
MAX_RUNS_PER_DAY = 10_000


@dataclass
class BudgetExhausted(Exception):
    """The team used its runs for the day; ``next_allowed`` is when the next one may come."""

    limit: int
    next_allowed: datetime | None  # None: the collection takes no team submissions

    @property
    def retry_after(self) -> int | None:
        """Return the seconds until the next submission is allowed (None: never)."""
        if self.next_allowed is None:
            return None
        return max(1, math.ceil((self.next_allowed - timezone.now()).total_seconds()))

    @property
    def message(self) -> str:
        """Return the refusal, naming when the next submission is allowed."""
        if self.next_allowed is None:
            return "This collection takes no runs from teams at the moment (0 runs per day)."
        return (
            f"Your team has used its {self.limit} run{'' if self.limit == 1 else 's'} for "
            f"the last 24 hours (deleted runs count). The next submission is allowed at "
            f"{self.next_allowed:%Y-%m-%d %H:%M:%S} UTC."
        )

    def error(self) -> dict[str, Any]:
        """Return the error item (``field``: budget) with the time as ISO 8601."""
        return {
            "field": "budget",
            "message": self.message,
            "next_allowed": self.next_allowed.isoformat() if self.next_allowed else None,
        }

    def __str__(self) -> str:
        """Return the message."""
        return self.message


def budget_take(
    *,
    collection: Collection,
    team_id: int,
    user: AbstractBaseUser | None,
    now: datetime | None = None,
) -> bool:
    """Lock the team's row and check its budget; return whether this submission counts.

    Must run inside the submission's transaction. Submissions by a coordinator of the
    collection (on a team's behalf), and those without a user (management commands and
    scripts; the pages and the API always have one), are recorded but never counted nor
    refused. Raise
    :class:`BudgetExhausted` when the team's counted submissions of the last 24 hours
    reach the collection's ``runs_per_day``.
    """
    from metrics.models import Team  # metrics.models imports this package's models

    # FOR NO KEY UPDATE: budget takers queue on it; rows that merely reference the team
    # (its runs, members, these records) are not held up.
    Team.objects.select_for_update(no_key=True).filter(pk=team_id).values("pk").first()
    if user is None or Membership.Role.COORDINATOR in user_roles(user=user, collection=collection):
        return False  # a coordinator's, or the server's own (commands, scripts)
    limit = rules(collection=collection).runs_per_day
    if limit is None:
        return True  # no daily limit: counted, never refused
    if limit == 0:
        raise BudgetExhausted(limit=0, next_allowed=None)
    now = now or timezone.now()
    since = now - BUDGET_WINDOW
    recent = list(
        Submission.objects.filter(team_id=team_id, counted=True, submitted_at__gt=since)
        .order_by("-submitted_at")
        .values_list("submitted_at", flat=True)[:limit]
    )
    if len(recent) >= limit:
        raise BudgetExhausted(limit=limit, next_allowed=recent[-1] + BUDGET_WINDOW)
    return True


def submission_record(
    *,
    collection: Collection,
    run: Any,
    user: AbstractBaseUser | None,
    counted: bool,
) -> Submission:
    """Record an accepted submission (inside its transaction, after :func:`budget_take`)."""
    return Submission.objects.create(
        collection=collection,
        team_id=run.team_id,
        run=run,
        tag=run.tag,
        submitted_by=user,
        submitted_at=run.submitted_at or timezone.now(),
        counted=counted,
    )


#: The settings a coordinator may change.
FIELDS = ("mode", "min_queries", "public_share", "runs_per_day")


class _Keep:
    """The marker of a setting left as it is (``runs_per_day=None`` means no limit)."""

    def __repr__(self) -> str:
        return "KEEP"


#: Pass as ``runs_per_day`` to keep it (the default).
KEEP: Any = _Keep()


@transaction.atomic
def score_visibility_update(
    *,
    collection: Collection,
    mode: str | None = None,
    min_queries: int | None = None,
    public_share: float | None = None,
    runs_per_day: int | None = KEEP,
) -> ScoreVisibility:
    """Change what teams see of scores before publication, and their runs per day.

    Fields left None keep their value, except ``runs_per_day``: None removes the daily
    limit and :data:`KEEP` (the default) keeps it. Settings stored for the first time start
    from the defaults of the collection's purpose. Bad values raise ``ValidationError``
    naming the field, and nothing changes.
    """
    errors: dict[str, str] = {}
    if mode is not None and mode not in ScoreVisibility.Mode.values:
        errors["mode"] = f"Choose one of: {', '.join(ScoreVisibility.Mode.values)}."
    if min_queries is not None and not 1 <= min_queries <= MAX_MIN_QUERIES:
        errors["min_queries"] = f"Must be between 1 and {MAX_MIN_QUERIES:,}."
    if public_share is not None and not (
        math.isfinite(public_share) and 0.0 <= public_share <= 1.0
    ):
        errors["public_share"] = "Must be between 0 and 1."
    if (
        runs_per_day is not KEEP
        and runs_per_day is not None
        and not 0 <= runs_per_day <= MAX_RUNS_PER_DAY
    ):
        errors["runs_per_day"] = f"Must be between 0 and {MAX_RUNS_PER_DAY:,}."
    if errors:
        raise ValidationError(errors)
    row, _created = ScoreVisibility.objects.select_for_update().get_or_create(
        collection=collection, defaults=purpose_defaults(collection.purpose)
    )
    given = {"mode": mode, "min_queries": min_queries, "public_share": public_share}
    for name, value in given.items():
        if value is not None:
            setattr(row, name, value)
    if runs_per_day is not KEEP:
        row.runs_per_day = runs_per_day
    row.save()
    collection.score_visibility = row  # the caller's collection reads the new settings
    return row
