"""Guidelines and their versions over REST (``/api/v1/collections/<slug>/guidelines/``)."""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from config.pagination import page_parameters
from judging.agreement.api import CoefficientSerializer
from judging.api.permissions import COORDINATORS, JUDGING_ROLES
from judging.api.views import SLUG, CollectionScopedView, CollectionSettingView
from judging.guidelines import selectors, services
from judging.guidelines.services import MAX_GUIDELINES_LENGTH, MAX_VERSION_NOTE_LENGTH


class GuidelinesSerializer(serializers.Serializer):
    """The guidelines in force and their version."""

    version = serializers.IntegerField(help_text="The guidelines version in force.")
    guidelines = serializers.CharField(help_text="Markdown shown on every judging card.")


class GuidelinesUpdateSerializer(serializers.Serializer):
    """New guidelines and why they change."""

    guidelines = serializers.CharField(
        allow_blank=True, trim_whitespace=False, max_length=MAX_GUIDELINES_LENGTH
    )
    note = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=MAX_VERSION_NOTE_LENGTH
    )


class ChangeSerializer(serializers.Serializer):
    """One changed text of a version."""

    field = serializers.ChoiceField(choices=["guidelines", "description", "narrative"])
    query = serializers.CharField(allow_null=True, help_text="The qid; null for guidelines.")
    before = serializers.CharField(allow_blank=True)
    after = serializers.CharField(allow_blank=True)


class VersionSerializer(serializers.Serializer):
    """One version with the labels given under it and the human judges' agreement."""

    number = serializers.IntegerField()
    current = serializers.BooleanField(help_text="Whether this version is in force.")
    note = serializers.CharField()
    author = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField(allow_null=True, help_text="Null for version 1.")
    changes = ChangeSerializer(many=True)
    labels = serializers.IntegerField(help_text="Graded labels given under this version.")
    human_pairs = serializers.IntegerField(
        help_text="Pairs two or more human judges graded under this version."
    )
    human_alpha_ordinal = CoefficientSerializer(
        help_text="Krippendorff's alpha (ordinal) among human judges on those pairs."
    )


@extend_schema_view(
    get=extend_schema(
        summary="Show the guidelines in force",
        parameters=[SLUG],
        responses={200: GuidelinesSerializer, **error_responses(401, 403, 404)},
    ),
    put=extend_schema(
        summary="Change the guidelines (a new version)",
        description="Coordinators only. Unchanged text starts no version. Labels written "
        "from now on record the new version.",
        parameters=[SLUG],
        request=GuidelinesUpdateSerializer,
        responses={200: GuidelinesSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class GuidelinesView(CollectionSettingView):
    """The guidelines of a collection (PUT replaces them; answers with the version in force)."""

    serializer_class = GuidelinesSerializer
    body_serializer_class = GuidelinesUpdateSerializer
    write_method = "put"
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": JUDGING_ROLES, "PUT": COORDINATORS}

    def current(self) -> dict[str, Any]:
        """Return the guidelines in force and their version."""
        collection = self.collection
        return {"version": collection.guidelines_version, "guidelines": collection.guidelines}

    def change(self, data: dict[str, Any]) -> None:
        """Start a new version (none when the text is unchanged)."""
        services.guidelines_update(
            collection=self.collection,
            guidelines=data["guidelines"],
            note=data["note"],
            actor=self.request.user,
        )


@extend_schema_view(
    get=extend_schema(
        summary="List the guidelines versions",
        description="Coordinators only. Newest first; each with its changes (before and "
        "after), the graded labels given under it and the human judges' agreement on them.",
        parameters=[SLUG, *page_parameters()],
        responses={200: VersionSerializer(many=True), **error_responses(401, 403, 404)},
    )
)
class GuidelineVersionListView(CollectionScopedView):
    """The versions of a collection's guidelines and query instructions."""

    serializer_class = VersionSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return one page of versions."""
        versions, _unversioned = selectors.guideline_versions(collection=self.collection)
        rows = [
            {
                "number": v.number,
                "current": v.current,
                "note": v.note,
                "author": v.author,
                "created_at": v.created_at,
                "changes": v.changes,
                "labels": v.labels,
                "human_pairs": v.humans.pairs if v.humans else 0,
                "human_alpha_ordinal": v.humans.alpha_ordinal
                if v.humans
                else {"value": None, "reason": "No label was given under this version."},
            }
            for v in versions
        ]
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(VersionSerializer(page, many=True).data)
