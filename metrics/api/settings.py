"""A collection's leaderboard settings over REST, as on its Settings page.

``GET``/``PATCH .../settings/``: the measures (checked by the engine; a new set rescores
every run), the coverage threshold, whether the leaderboard and the judgment list are
published, and the pool depth (a new depth pools every run's unjudged top documents).
Coordinators only. The page's other sections have their own endpoints: ``aggregation/``,
``pooling/``, ``score-visibility/`` and ``judges/<id>/quota/`` (or ``memberships/``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.db import transaction
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers

from config.api import error_responses
from config.parsers import PolicyFormParser, PolicyJSONParser
from judging.api.views import SLUG, CollectionSettingView
from judging.models import Collection
from metrics import services
from metrics.api.permissions import COORDINATORS

#: Deepest pool a request may ask for (the page's form allows the same).
MAX_POOL_DEPTH = 10_000


class CollectionSettingsSerializer(serializers.ModelSerializer):
    """A collection's leaderboard settings; every field may be left out of a PATCH."""

    measures = serializers.ListField(
        child=serializers.CharField(max_length=200),
        min_length=1,
        max_length=100,
        required=False,
        help_text="Measure names as the engine reads them (e.g. `ndcg_cut.10`, `P.5`), or "
        "trec_eval's sets `official` and `all_trec`: saved (and answered) as their members "
        "a leaderboard can show (all_trec: 96 measures; not runid, gm_map, gm_bpref, "
        "relstring), scores first and counts last. The first measure sorts the leaderboard. "
        "A new set rescores every run.",
    )
    coverage_threshold = serializers.FloatField(
        min_value=0.0, max_value=1.0, required=False, help_text="0 to 1."
    )
    pool_depth = serializers.IntegerField(
        min_value=1,
        max_value=MAX_POOL_DEPTH,
        required=False,
        help_text="A new depth pools every run's unjudged documents down to it.",
    )

    class Meta:
        model = Collection
        fields = [
            "measures",
            "coverage_threshold",
            "leaderboard_published",
            "judgments_published",
            "search_by_teams",
            "pool_depth",
        ]
        extra_kwargs: ClassVar[dict[str, Any]] = {
            "leaderboard_published": {"required": False},
            "judgments_published": {"required": False},
            "search_by_teams": {"required": False},
        }


@extend_schema_view(
    get=extend_schema(
        summary="Show the leaderboard settings",
        parameters=[SLUG],
        responses={200: CollectionSettingsSerializer, **error_responses(401, 403, 404)},
    ),
    patch=extend_schema(
        summary="Change the leaderboard settings",
        description="Coordinators only. All or nothing: an unknown measure is a 400 naming "
        "its line and nothing changes.",
        parameters=[SLUG],
        request=CollectionSettingsSerializer,
        responses={200: CollectionSettingsSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class CollectionSettingsView(CollectionSettingView):
    """The leaderboard settings of a collection (PATCH: the fields given, all or nothing)."""

    serializer_class = CollectionSettingsSerializer
    write_method = "patch"
    parser_classes: ClassVar[list] = [PolicyJSONParser, PolicyFormParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS, "PATCH": COORDINATORS}

    def current(self) -> Collection:
        """Return the collection (the serializer reads its settings)."""
        return self.collection

    def change(self, data: dict[str, Any]) -> None:
        """Change them through ``collection_settings_update`` (and ``runs_repool``)."""
        depth = data.pop("pool_depth", None)
        collection = self.collection
        with transaction.atomic():
            if data:
                services.collection_settings_update(collection=collection, **data)
            if depth is not None and depth != collection.pool_depth:
                services.runs_repool(collection=collection, depth=depth)
