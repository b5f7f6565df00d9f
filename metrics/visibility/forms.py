"""The coordinators' form of score visibility and the submission budget."""

from __future__ import annotations

from django import forms

from metrics.visibility.models import ScoreVisibility
from metrics.visibility.selectors import ROUND_DECIMALS
from metrics.visibility.services import MAX_MIN_QUERIES, MAX_RUNS_PER_DAY


class ScoreVisibilityForm(forms.Form):
    """What teams see of scores before publication, runs per day, and publication itself."""

    mode = forms.ChoiceField(
        choices=ScoreVisibility.Mode.choices,
        label="What teams see before the judgments are published",
        help_text="Scores are made of grades: a team that sees per-query scores can read "
        "unpublished grades off them (five one-document runs for one query score in the "
        "ratio of the documents' grades). Live shows every score as judgments arrive (an "
        "internal evaluation, where teams may know the grades); hidden shows no score; "
        "aggregate shows means "
        f"rounded to {ROUND_DECIMALS} decimals, only for runs over enough queries; split "
        "shows means on a public share of the queries and keeps the rest for the final "
        "leaderboard. Coordinators always see every score; once the judgments are "
        "published, teams do too (in split mode their means then come from the private "
        "share).",
    )
    min_queries = forms.IntegerField(
        min_value=1,
        max_value=MAX_MIN_QUERIES,
        label="Aggregate: queries a run must rank",
        help_text="A run shows a mean only when it ranks documents for at least this many "
        "queries with grades (more queries dilute one query's share of the mean).",
    )
    public_share = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        label="Split: public share of the queries",
        help_text="0 to 1. Which queries are public is fixed by a random seed and never "
        "shown to teams; changing the share moves queries between the two sides.",
    )
    runs_per_day = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_RUNS_PER_DAY,
        label="Runs per team per day",
        help_text="In any 24 hours, deleted runs included (empty: no daily limit; 0: teams "
        "cannot submit). "
        "Every run is one more probe of the grades; coordinators' submissions do not count.",
    )
    leaderboard_published = forms.BooleanField(
        required=False,
        label="Publish the leaderboard",
        help_text="Teams see every team's runs on the leaderboard (otherwise only their own).",
    )
    judgments_published = forms.BooleanField(
        required=False,
        label="Publish the judgment list",
        help_text="Team members may download the live judgment list (judges never can), and "
        "teams see every score whatever the mode above (in split mode, the final board).",
    )

    #: The fields saved on the collection (metrics.services.collection_settings_update).
    PUBLICATION_FIELDS = ("leaderboard_published", "judgments_published")
