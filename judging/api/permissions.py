"""Who may do what in the judging API.

Collection endpoints answer 404 to non-members (a collection's existence does not leak)
and 403 to members whose roles do not allow the request. Judges see only their own
judgments (others' are 404, as if absent); team members see no judgments at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import AbstractBaseUser
from rest_framework import exceptions
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from judging import services
from judging.api import selectors
from judging.lists.services import is_imported_judge_of
from judging.models import Collection, Judge, Judgment, Membership

if TYPE_CHECKING:
    from rest_framework.views import APIView

Role = Membership.Role
ANY_ROLE = frozenset(Role.values)
COORDINATORS = frozenset({Role.COORDINATOR})
JUDGING_ROLES = frozenset({Role.COORDINATOR, Role.JUDGE})


class HasCollectionRole(BasePermission):
    """Allow members holding one of the roles the view allows for the request method.

    The view provides ``roles`` (the user's roles; looking them up answers 404 to
    non-members) and ``allowed_roles()``.
    """

    message = "Your role in this collection does not allow this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        """Return whether the user's roles meet the view's; name the roles needed if not."""
        allowed = view.allowed_roles()
        if view.roles & allowed:
            return True
        self.message = f"This needs the {' or '.join(sorted(allowed))} role in the collection."
        return False


class CanSeeJudgment(BasePermission):
    """Coordinators see every judgment of their collection; judges only their own."""

    def has_object_permission(self, request: Request, view: APIView, obj: Any) -> bool:
        """Return whether the user may see or change ``obj`` (a judgment)."""
        if not isinstance(obj, Judgment):
            return True
        if Role.COORDINATOR in view.roles:
            return True
        return Role.JUDGE in view.roles and obj.judge.user_id == request.user.pk


class IsCoordinatorAnywhere(BasePermission):
    """Allow unsafe methods only to users who coordinate at least one collection."""

    message = "Registering judges needs the coordinator role in some collection."

    def has_permission(self, request: Request, view: APIView) -> bool:
        """Return True for reads, and for writes by coordinators."""
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return selectors.is_coordinator_anywhere(user=request.user)


def judge_to_record_as(
    *,
    user: AbstractBaseUser,
    collection: Collection,
    roles: set[str],
    judge_id: int | None,
) -> Judge:
    """Return the judge whose judgments ``user`` records, checking they may.

    Without ``judge_id``: the user's own human judge (coordinators and judges). With it:
    the user's own judge, or, for coordinators only, an LLM judge or the human judge of
    a judge or coordinator of the collection, or a judge an import created there. Anyone
    else's judge is 403 for judges; unknown or unsuitable ids are 400 for coordinators.
    """
    if not roles & JUDGING_ROLES:
        raise exceptions.PermissionDenied("Recording judgments needs the judge role.")
    if judge_id is None:
        return services.judge_for_user(user=user)
    judge = selectors.judge_by_id(judge_id=judge_id)
    if judge is not None and judge.kind == Judge.Kind.HUMAN and judge.user_id == user.pk:
        return judge
    if Role.COORDINATOR not in roles:
        raise exceptions.PermissionDenied(
            "Judges record only their own judgments; recording as another judge "
            "(an LLM judge, for instance) needs the coordinator role."
        )
    if judge is None or not selectors.judges_visible_to(user=user).filter(pk=judge.pk).exists():
        raise exceptions.ValidationError({"judge": f"Unknown judge id {judge_id}."})
    if is_imported_judge_of(judge=judge, collection=collection):
        return judge  # created by an import there: the collection's source of labels
    if judge.kind == Judge.Kind.LLM:
        if selectors.llm_judge_serves(judge=judge, collection=collection):
            return judge
        raise exceptions.ValidationError(
            {"judge": f"LLM judge {judge_id} is not assigned to this collection."}
        )
    if selectors.holds_role(
        user_id=judge.user_id, collection=collection, roles=tuple(JUDGING_ROLES)
    ):
        return judge
    raise exceptions.ValidationError(
        {"judge": f"Judge {judge_id} is not a judge of this collection."}
    )
