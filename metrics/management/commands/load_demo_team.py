"""Create the demo team of the demo collection (run after ``load_demo``)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from judging.demo.loader import DEMO_SLUG
from judging.models import Collection, Membership
from metrics import services
from metrics.models import Team

DEMO_TEAM = "Demo team"


class Command(BaseCommand):
    """Put every demo user with the team role into the demo team (idempotent)."""

    help = "Create the demo team of the demo collection and add its team members to it."

    def handle(self, *args: Any, **options: Any) -> None:
        """Create the team if missing, add the members, report."""
        collection = Collection.objects.filter(slug=DEMO_SLUG).first()
        if collection is None:
            raise CommandError("The demo collection is missing: run 'manage.py load_demo' first.")
        team = Team.objects.filter(collection=collection, name=DEMO_TEAM).first()
        if team is None:
            team = services.team_create(collection=collection, name=DEMO_TEAM)
        members = get_user_model().objects.filter(
            memberships__collection=collection, memberships__role=Membership.Role.TEAM
        )
        for user in members:
            services.team_member_add(team=team, user=user)
        names = ", ".join(sorted(u.get_username() for u in members)) or "nobody"
        self.stdout.write(
            f'Team "{team.name}": {names}. Submit a run from demo/runs/ on the collection page '
            f"or with POST /api/v1/collections/{DEMO_SLUG}/runs/."
        )
