"""Load the demo collection, its judging pool and the demo accounts into the database."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from judging import services
from judging.demo.content import DOCUMENTS_PATH, TOPICS_PATH, DemoContent, demo_content
from judging.lists import services as services_lists
from judging.models import Collection, Membership, PoolEntry

DEMO_SLUG = "home-garden-demo"
DEMO_NAME = "Graded demo: home & garden search"
DEMO_JUDGES_PER_PAIR = 2
SEED_PAIRS_PER_QUERY = 5
LOGIN_URL = "http://127.0.0.1:8000/accounts/login/"
GUIDELINES_PATH = Path(__file__).with_name("guidelines.md")

Role = Membership.Role


@dataclass(frozen=True)
class DemoAccount:
    """A demo user with a published password and their role in the demo collection."""

    username: str
    password: str
    role: str
    superuser: bool = False


DEMO_ACCOUNTS = (
    DemoAccount("coordinator", "coordinator-demo", Role.COORDINATOR, superuser=True),
    DemoAccount("judge1", "judge1-demo", Role.JUDGE),
    DemoAccount("judge2", "judge2-demo", Role.JUDGE),
    DemoAccount("team1", "team1-demo", Role.TEAM),
)


@dataclass(frozen=True)
class DemoSummary:
    """What :func:`demo_load` found and did."""

    collection: Collection
    collection_created: bool
    deleted_existing: bool
    queries: int
    documents: int
    pairs: int
    queries_created: int
    documents_created: int
    pairs_created: int
    users_created: int
    passwords_set: int
    accounts: tuple[DemoAccount, ...] = DEMO_ACCOUNTS


def _ensure_user(
    account: DemoAccount, *, reset_password: bool
) -> tuple[AbstractBaseUser, bool, bool]:
    """Return the account's user, whether it was created and whether its password was set.

    An existing password is only replaced when it no longer matches, so that re-running the
    loader keeps the password hash, and with it everyone's sessions, unchanged.
    """
    user, created = get_user_model().objects.get_or_create(
        username=account.username,
        defaults={"email": f"{account.username}@example.test"},
    )
    changed: list[str] = []
    for flag, wanted in (
        ("is_active", True),
        ("is_staff", account.superuser),
        ("is_superuser", account.superuser),
    ):
        if getattr(user, flag) != wanted:
            setattr(user, flag, wanted)
            changed.append(flag)
    password_set = created or (reset_password and not user.check_password(account.password))
    if password_set:
        user.set_password(account.password)
        changed.append("password")
    if changed:
        user.save(update_fields=changed)
    return user, created, password_set


@transaction.atomic
def _seed_documents(content: DemoContent) -> dict[str, set[str]]:
    """Return, per query, the documents a coordinator put in the pool by hand.

    The demo starts with :data:`SEED_PAIRS_PER_QUERY` pairs per query (the first by
    document id); submitted runs pool their unjudged top-k on top of these, which is how
    a real campaign grows its pool.
    """
    by_query: dict[str, list[str]] = {}
    for r in content.reference:
        by_query.setdefault(r.query_external_id, []).append(r.document_external_id)
    return {q: set(sorted(docs)[:SEED_PAIRS_PER_QUERY]) for q, docs in by_query.items()}


def demo_load(*, reset: bool = False, reset_passwords: bool = True) -> DemoSummary:
    """Create whatever is missing of the demo collection, its pool and the demo accounts.

    Queries and documents are imported from ``demo/topics.trec`` and
    ``demo/documents.jsonl`` through the same importers users' files go through
    (:mod:`judging.lists.services`): they are created or brought up to date by id. Pool
    entries, judgments and collection settings that exist are left alone, so running it
    again changes nothing. With ``reset`` the demo
    collection is deleted first, with everything in it (judgments and their history
    included), and loaded exactly as the current content; the demo users are kept. With
    ``reset_passwords`` (the default) the demo accounts' passwords are set back to the
    published demo passwords when they differ.
    """
    content = demo_content()
    deleted, _ = Collection.objects.filter(slug=DEMO_SLUG).delete() if reset else (0, {})
    collection, collection_created = Collection.objects.get_or_create(
        slug=DEMO_SLUG,
        defaults={
            "name": DEMO_NAME,
            "guidelines": GUIDELINES_PATH.read_text(encoding="utf-8"),
            "judges_per_pair": DEMO_JUDGES_PER_PAIR,
            # An internal evaluation: the demo team sees its scores move as judges grade.
            "purpose": Collection.Purpose.INTERNAL,
        },
    )

    with TOPICS_PATH.open("rb") as topics:
        queries = services_lists.topics_import(collection=collection, source=topics, format="trec")
    with DOCUMENTS_PATH.open("rb") as documents:
        docs = services_lists.documents_import(
            collection=collection, source=documents, format="jsonl"
        )

    seeds = _seed_documents(content)
    pairs = [
        services.PairRow(
            line=line,
            query_external_id=r.query_external_id,
            document_external_id=r.document_external_id,
        )
        for line, r in enumerate(content.reference, start=1)
        if r.document_external_id in seeds[r.query_external_id]
    ]
    pairs_created = services.pool_add(
        collection=collection, pairs=pairs, source=PoolEntry.Source.IMPORT
    )

    users_created = passwords_set = 0
    for account in DEMO_ACCOUNTS:
        user, created, password_set = _ensure_user(account, reset_password=reset_passwords)
        users_created += created
        passwords_set += password_set
        services.membership_grant(collection=collection, user=user, role=account.role)
        if account.role == Role.JUDGE:
            services.judge_for_user(user=user)

    return DemoSummary(
        collection=collection,
        collection_created=collection_created,
        deleted_existing=bool(deleted),
        queries=collection.queries.count(),
        documents=collection.documents.count(),
        pairs=collection.pool_entries.count(),
        queries_created=queries.created,
        documents_created=docs.created,
        pairs_created=pairs_created,
        users_created=users_created,
        passwords_set=passwords_set,
    )
