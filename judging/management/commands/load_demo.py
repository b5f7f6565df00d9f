"""``manage.py load_demo``: load the demo collection and print the demo accounts."""

from __future__ import annotations

import os
from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from judging.demo.loader import DemoSummary, demo_load
from judging.models import Membership

DEFAULT_HOST = "127.0.0.1:8000"


def login_url(host: str) -> str:
    """Return the login page's URL on ``host`` (``[scheme://]address[:port]``, as served).

    A server listening on every interface (0.0.0.0, ::) is reached at 127.0.0.1 locally.
    """
    host = host.strip().rstrip("/")
    scheme, _, rest = host.rpartition("://")
    if rest.isdigit():  # runserver also takes a bare port
        address, port = "", rest
    elif rest.count(":") == 1:
        address, _, port = rest.partition(":")
    else:
        address, port = rest, ""
    if address in ("", "0.0.0.0", "[::]", "::"):
        address = "127.0.0.1"
    netloc = f"{address}:{port}" if port else address
    return f"{scheme or 'http'}://{netloc}{reverse('login')}"


class Command(BaseCommand):
    """Load the demo collection, its judging pool and demo users; print how to log in."""

    help = (
        "Load the demo collection 'Graded demo: home & garden search' (20 queries, about 290 "
        "documents, every demo pair in the judging pool) and the demo accounts coordinator, "
        "judge1, judge2 and team1, then print their passwords. Safe to run again: whatever "
        "exists is kept and nothing is duplicated."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        """Declare the command's options."""
        parser.add_argument(
            "--reset",
            action="store_true",
            help=(
                "Delete the demo collection first, with everything in it: its pool, runs "
                "and ALL ITS JUDGMENTS and their history. Then load it afresh, exactly as "
                "the current demo content. The demo users are kept."
            ),
        )
        parser.add_argument(
            "--keep-passwords",
            action="store_true",
            help="Leave existing demo users' passwords alone instead of resetting them.",
        )
        parser.add_argument(
            "--host",
            default=None,
            help=(
                "host:port the server is started on (as given to runserver), so that the "
                "printed login URL is the one actually served. Default: $GRADED_HOST or "
                "127.0.0.1:8000."
            ),
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help=(
                "Load even though DEBUG is off. The demo accounts have published passwords "
                "(one is a superuser): never use this on a server others can reach."
            ),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Load the demo and print a summary with the demo accounts."""
        if not settings.DEBUG and not options["force"]:
            raise CommandError(
                "DEBUG is off, so this may be a production site; the demo creates a "
                "superuser with a published password. Pass --force if this is a private "
                "development or test database."
            )
        summary = demo_load(reset=options["reset"], reset_passwords=not options["keep_passwords"])
        host = options["host"] or os.environ.get("GRADED_HOST") or DEFAULT_HOST
        if options["verbosity"] == 0:  # make run: serve_demo prints the accounts last
            return
        self._print(summary, keep_passwords=options["keep_passwords"], login_url=login_url(host))

    def _print(self, summary: DemoSummary, *, keep_passwords: bool, login_url: str) -> None:
        """Write what was loaded and the accounts to log in with."""
        out, style = self.stdout, self.style
        collection = summary.collection
        if summary.deleted_existing:
            out.write(style.WARNING(f"Deleted the old demo collection {collection.slug!r}."))
        state = "created" if summary.collection_created else "already there"
        out.write(
            style.SUCCESS(f'Demo collection "{collection.name}" ({collection.slug}): {state}.')
        )
        added = (summary.queries_created, summary.documents_created, summary.pairs_created)
        news = (
            f"added now: {added[0]} queries, {added[1]} documents, {added[2]} pairs"
            if any(added)
            else "nothing was missing"
        )
        out.write(
            f"  {summary.queries} queries, {summary.documents} documents, "
            f"{summary.pairs} pairs in the judging pool ({news})."
        )
        out.write("")
        out.write(style.MIGRATE_HEADING(f"Demo accounts: log in at {login_url}"))
        width = max(len(a.username) for a in summary.accounts)
        pw_width = max(len(a.password) for a in summary.accounts)
        for account in summary.accounts:
            role = Membership.Role(account.role).label.lower()
            if account.superuser:
                role += ", staff and superuser (Django admin at /admin/)"
            out.write(
                f"  {account.username:<{width}}  password {account.password:<{pw_width}}  {role}"
            )
        if keep_passwords:
            out.write("  (passwords left as they were: these apply unless someone changed them)")
        out.write("")
        out.write(
            "Demo runs and reference qrels for evaluation: demo/runs/*.txt and "
            "demo/qrels-reference.txt (see demo/README.md)."
        )
