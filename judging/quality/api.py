"""Judges' attention signals over REST (``/api/v1/collections/<slug>/judges/attention/``)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from judging.api.permissions import COORDINATORS
from judging.api.views import SLUG, CollectionScopedView
from judging.quality import selectors

FLAGS = ["fast", "slow", "runs", "cannot_judge", "later"]


def _number(value: float) -> float | None:
    """Return ``value``, or None for NaN (JSON has no NaN)."""
    return None if math.isnan(value) else value


class AttentionSerializer(serializers.Serializer):
    """One judge's attention signals; null where there was too little to compute them."""

    judge_id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["human", "llm"])
    labels = serializers.IntegerField(help_text="Labels of every status.")
    timed = serializers.IntegerField(help_text="Labels with a recorded time.")
    median_seconds = serializers.FloatField(allow_null=True)
    q1_seconds = serializers.FloatField(allow_null=True)
    q3_seconds = serializers.FloatField(allow_null=True)
    others_low_seconds = serializers.FloatField(
        allow_null=True, help_text="Lower end of the other judges' usual time (Tukey, log scale)."
    )
    others_high_seconds = serializers.FloatField(allow_null=True)
    graded = serializers.IntegerField()
    repeat_share = serializers.FloatField(
        allow_null=True, help_text="Share of grades equal to the judge's previous grade."
    )
    chance_repeat_share = serializers.FloatField(
        allow_null=True, help_text="The same share by chance, from the judge's own grades."
    )
    runs_z = serializers.FloatField(allow_null=True)
    longest_run = serializers.IntegerField()
    cannot_judge_share = serializers.FloatField(allow_null=True)
    others_cannot_judge_share = serializers.FloatField(allow_null=True)
    cannot_judge_z = serializers.FloatField(allow_null=True)
    later_share = serializers.FloatField(allow_null=True)
    others_later_share = serializers.FloatField(allow_null=True)
    later_z = serializers.FloatField(allow_null=True)
    flags = serializers.ListField(child=serializers.ChoiceField(choices=FLAGS))


@extend_schema_view(
    get=extend_schema(
        summary="List judges' attention signals",
        description="Coordinators only. Per judge: seconds per label against the other "
        "judges' usual range, runs of one grade against chance, shares of can't judge and "
        "later against the others'. Flagged judges come first; nobody is dropped. The rules "
        "are in docs/judges.md.",
        parameters=[SLUG],
        responses={200: AttentionSerializer(many=True), **error_responses(401, 403, 404)},
    )
)
class JudgeAttentionView(CollectionScopedView):
    """Attention signals of a collection's judges."""

    serializer_class = AttentionSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return one page of judges."""
        rows = [
            {
                "judge_id": row.judge_id,
                "name": row.name,
                "kind": row.kind,
                **{
                    name: _number(value) if isinstance(value, float) else value
                    for name, value in row.signals.__dict__.items()
                },
                "flags": list(row.signals.flags),
            }
            for row in selectors.judge_attention(collection=self.collection)
        ]
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(AttentionSerializer(page, many=True).data)
