"""``manage.py serve_demo``: ``runserver``, ending its banner with the demo accounts."""

from __future__ import annotations

from django.contrib.staticfiles.management.commands.runserver import Command as RunserverCommand

from judging.demo.loader import DEMO_ACCOUNTS, DEMO_NAME
from judging.models import Membership


class Command(RunserverCommand):
    """Serve as ``runserver`` does; once the port is bound, print where to log in, and as whom.

    ``make run`` ends with it, so that the last lines a newcomer sees are the address to
    open and the accounts to log in with, not the install's output or Django's banner.
    """

    help = (
        "Start the development server (as runserver, with the same options), then print "
        "the address to open and the demo accounts (run load_demo first)."
    )

    def on_bind(self, server_port: int) -> None:
        """Print Django's banner, then the address and the demo accounts."""
        super().on_bind(server_port)
        address = self.addr
        if self._raw_ipv6:
            address = f"[{address}]"
        if address in ("0", "0.0.0.0", "[::]"):
            address = "127.0.0.1"  # a server on every interface is reached here locally
        width = max(len(a.username) for a in DEMO_ACCOUNTS)
        pw_width = max(len(a.password) for a in DEMO_ACCOUNTS)
        lines = ["", self.style.MIGRATE_HEADING(f'Demo accounts for "{DEMO_NAME}":')]
        for account in DEMO_ACCOUNTS:
            role = Membership.Role(account.role).label.lower()
            if account.superuser:
                role += ", staff and superuser (Django admin at /admin/)"
            lines.append(
                f"  {account.username:<{width}}  password {account.password:<{pw_width}}  {role}"
            )
        lines += [
            "",
            self.style.SUCCESS(f"Graded is ready: open {self.protocol}://{address}:{server_port}/"),
        ]
        self.stdout.write("\n".join(lines))
