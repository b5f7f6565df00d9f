"""Teams over REST, beyond listing and creating them: show, rename, set members, delete.

The same rules as the admin, where coordinators manage teams: coordinators change any team
of their collection; a team member sees their own team. The team role follows team
membership (``metrics.services.team_update`` and ``team_delete``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import exceptions, generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from config.parsers import PolicyFormParser, PolicyJSONParser, PolicyMultiPartParser
from judging.api.views import SLUG
from metrics import services
from metrics.api import selectors
from metrics.api.permissions import COORDINATORS, RUN_ROLES
from metrics.api.serializers import TeamSerializer
from metrics.api.views import JUDGES_SEE_NO_RUNS, MetricsScopedView
from metrics.models import Team

TEAM_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Team id.")


class TeamUpdateSerializer(serializers.Serializer):
    """Changes to a team; fields left out keep their values."""

    name = serializers.CharField(
        min_length=1, max_length=200, required=False, help_text="Shown on the leaderboard."
    )
    members = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Usernames: replaces the member list. New members get the collection's "
        "team role; a user who leaves their last team here loses it.",
    )


@extend_schema_view(
    get=extend_schema(
        summary="Show a team",
        description="Coordinators see every team; team members their own (others: 404).",
        parameters=[SLUG, TEAM_ID],
        responses={200: TeamSerializer, **error_responses(401, 403, 404, e403=JUDGES_SEE_NO_RUNS)},
    ),
    patch=extend_schema(
        summary="Rename a team or set its members",
        description="Coordinators only.",
        parameters=[SLUG, TEAM_ID],
        request=TeamUpdateSerializer,
        responses={200: TeamSerializer, **error_responses(400, 401, 403, 404)},
    ),
    delete=extend_schema(
        summary="Delete a team and its runs",
        description="Coordinators only. The team's runs leave the leaderboard; pooled pairs "
        "stay in the pool.",
        parameters=[SLUG, TEAM_ID],
        responses={204: None, **error_responses(401, 403, 404)},
    ),
)
class TeamDetailView(MetricsScopedView, generics.RetrieveUpdateDestroyAPIView):
    """One team of the collection."""

    serializer_class = TeamSerializer
    http_method_names: ClassVar[list[str]] = ["get", "patch", "delete", "head", "options"]
    parser_classes: ClassVar[list] = [PolicyJSONParser, PolicyFormParser, PolicyMultiPartParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {
        "GET": RUN_ROLES,
        "PATCH": COORDINATORS,
        "DELETE": COORDINATORS,
    }

    def get_queryset(self) -> Any:
        """Return the teams the user may see."""
        if self.fake():
            return Team.objects.none()
        return selectors.teams_for_viewer(collection=self.collection, who=self.who)

    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Change the team through ``team_update``."""
        team = self.get_object()
        form = TeamUpdateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        members = None
        if "members" in data:
            names = list(dict.fromkeys(n.strip() for n in data["members"]))
            users = selectors.users_by_username(usernames=names)
            unknown = [n for n in names if n not in users]
            if unknown:
                raise exceptions.ValidationError(
                    {"members": f"Unknown user(s): {', '.join(unknown)}."}
                )
            members = [users[n] for n in names]
        services.team_update(team=team, name=data.get("name"), members=members)
        team = self.get_queryset().get(pk=team.pk)
        return Response(TeamSerializer(team).data)

    def perform_destroy(self, instance: Team) -> None:
        """Delete the team through ``team_delete``."""
        services.team_delete(team=instance)
