"""REST for score visibility: what teams see before publication, and their runs per day."""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers

from config.api import error_responses
from judging.api.permissions import COORDINATORS
from judging.api.views import SLUG, CollectionSettingView
from judging.models import Collection
from metrics.visibility import selectors, services
from metrics.visibility.models import ScoreVisibility


class ScoreVisibilitySerializer(serializers.Serializer):
    """A collection's score visibility and submission budget (see docs/security.md)."""

    mode = serializers.ChoiceField(
        choices=ScoreVisibility.Mode.choices,
        help_text="What teams see before the judgments are published: live (every score as "
        "judgments arrive; the default of an internal evaluation), hidden (no score; the "
        "default of a shared task), aggregate (means rounded to "
        f"{selectors.ROUND_DECIMALS} decimals, only for runs ranking at least "
        "min_queries judged queries; nothing per query) or split (means on a public "
        "share of the queries; the final board, after publication, uses the rest). "
        "Coordinators always see every score.",
    )
    min_queries = serializers.IntegerField(
        min_value=1,
        max_value=services.MAX_MIN_QUERIES,
        help_text="Aggregate: queries with grades a run must rank documents for to show a mean.",
    )
    public_share = serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        help_text="Split: the share of queries whose scores teams see before publication. "
        "Which ones is fixed by a secret seed.",
    )
    runs_per_day = serializers.IntegerField(
        min_value=0,
        max_value=services.MAX_RUNS_PER_DAY,
        allow_null=True,
        help_text="Runs a team may submit in any 24 hours, deleted runs included (0: none; "
        "null: no daily limit).",
    )
    round_decimals = serializers.IntegerField(
        read_only=True, help_text="Decimals of the aggregate mode's means (fixed)."
    )
    public_queries = serializers.IntegerField(
        read_only=True, help_text="Split: how many of the collection's queries are public now."
    )
    queries = serializers.IntegerField(read_only=True, help_text="The collection's queries.")


def _body(collection: Collection) -> dict[str, Any]:
    """Return the settings of ``collection`` with the split's current size."""
    found = selectors.rules(collection=collection)
    qids = list(collection.queries.values_list("external_id", flat=True))
    public = sum(
        selectors.is_public(seed=found.split_seed, qid=q, share=found.public_share) for q in qids
    )
    return {
        **{name: getattr(found, name) for name in services.FIELDS},
        "round_decimals": selectors.ROUND_DECIMALS,
        "public_queries": public,
        "queries": len(qids),
    }


@extend_schema_view(
    get=extend_schema(
        summary="Show what teams see of scores before publication, and their runs per day",
        description="Coordinators. Teams' scores can give unpublished grades away; see "
        "docs/security.md, 'Grade inference from scores'.",
        parameters=[SLUG],
        responses={200: ScoreVisibilitySerializer, **error_responses(401, 403, 404)},
    ),
    patch=extend_schema(
        summary="Change what teams see of scores before publication, or their runs per day",
        description="Coordinators. Fields left out keep their value.",
        parameters=[SLUG],
        request=ScoreVisibilitySerializer(partial=True),
        responses={200: ScoreVisibilitySerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class ScoreVisibilityView(CollectionSettingView):
    """A collection's score visibility and submission budget (PATCH: the fields given)."""

    serializer_class = ScoreVisibilitySerializer
    write_method = "patch"
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS, "PATCH": COORDINATORS}

    def current(self) -> dict[str, Any]:
        """Return the settings and how many queries are public."""
        return _body(self.collection)

    def change(self, data: dict[str, Any]) -> None:
        """Change the fields given."""
        services.score_visibility_update(collection=self.collection, **data)
