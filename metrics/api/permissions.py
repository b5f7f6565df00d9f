"""Who may do what in the metrics API.

Collection endpoints answer 404 to non-members, like the judging API, and 403 to members
whose roles allow no access to runs: judges never see runs, scores or the leaderboard
(judging is blind). Among coordinators and team members, a run someone may not see or
change is answered 404, as if absent.
"""

from __future__ import annotations

from rest_framework import exceptions

from judging.api.permissions import Role
from judging.models import Collection
from metrics.api import selectors
from metrics.models import Team
from metrics.selectors import Viewer

#: Roles that work with runs: coordinators (all runs) and team members (their own).
RUN_ROLES = frozenset({Role.COORDINATOR, Role.TEAM})
COORDINATORS = frozenset({Role.COORDINATOR})


def team_to_submit_for(*, collection: Collection, who: Viewer, team_id: int | None) -> Team:
    """Return the team a run is submitted for, checking the user may submit for it.

    Team members submit for their team; one in several teams names it (``team_id``).
    Coordinators may submit for any team of the collection, and must name it unless they
    belong to exactly one. Raises 403 for users in no team who do not coordinate, and a
    ``team`` field error (400) for a missing or unsuitable ``team_id``.
    """
    if not who.team_ids and not who.is_coordinator:
        raise exceptions.PermissionDenied(
            "Submitting runs needs membership of a team in this collection."
        )
    if team_id is None:
        if len(who.team_ids) == 1:
            (team_id,) = who.team_ids
        elif who.team_ids:
            ids = ", ".join(str(i) for i in sorted(who.team_ids))
            raise exceptions.ValidationError(
                {"team": f"You are in several teams here; name one (team ids {ids})."}
            )
        else:
            raise exceptions.ValidationError(
                {"team": "Coordinators submit on behalf of a team: give its id."}
            )
    elif team_id not in who.team_ids and not who.is_coordinator:
        ids = ", ".join(str(i) for i in sorted(who.team_ids))
        raise exceptions.ValidationError(
            {"team": f"You may submit only for your own team (team ids {ids})."}
        )
    team = selectors.team_in_collection(collection=collection, team_id=team_id)
    if team is None:
        raise exceptions.ValidationError({"team": f"No team {team_id} in this collection."})
    return team
