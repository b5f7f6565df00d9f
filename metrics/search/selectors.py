"""Reads of live search: which endpoints a user may use, configurations and snapshots."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from judging.models import Collection
from metrics.search.models import (
    SearchConfiguration,
    SearchEndpoint,
    SearchSnapshot,
    SnapshotQuery,
)


def endpoints_in(*, collection: Collection, user: AbstractBaseUser) -> QuerySet[SearchEndpoint]:
    """Return the endpoints ``user`` may use in ``collection`` (the LLM providers' rule).

    Superusers: every endpoint. Others: those open to the collection or to one of their
    groups. An endpoint open to no collection and no group is for superusers only.
    """
    endpoints = SearchEndpoint.objects.order_by("name")
    if user.is_superuser:
        return endpoints
    ids = SearchEndpoint.objects.filter(
        Q(allowed_collections=collection) | Q(allowed_groups__in=user.groups.all())
    ).values("pk")
    return endpoints.filter(pk__in=ids)


def endpoint_open_to(
    *, endpoint: SearchEndpoint, collection: Collection, user: AbstractBaseUser | None
) -> bool:
    """Return whether ``user`` may use ``endpoint`` in ``collection`` (None: the operator)."""
    if user is None or user.is_superuser:
        return True
    return endpoints_in(collection=collection, user=user).filter(pk=endpoint.pk).exists()


def configurations_of(*, collection: Collection) -> QuerySet[SearchConfiguration]:
    """Return the collection's configurations with their team."""
    return collection.search_configurations.select_related("team").order_by("name")


def snapshots_of(*, collection: Collection) -> QuerySet[SearchSnapshot]:
    """Return the collection's snapshots, newest first, with version and run."""
    return SearchSnapshot.objects.filter(collection=collection).select_related(
        "version__configuration", "version__endpoint", "run"
    )


def failed_queries(*, snapshot: SearchSnapshot) -> QuerySet[SnapshotQuery]:
    """Return the snapshot's failed queries with their query."""
    return snapshot.queries.filter(status=SnapshotQuery.Status.FAILED).select_related("query")


def unsent_count(*, snapshot: SearchSnapshot) -> int:
    """Return how many queries a finished snapshot never sent (it stopped before them)."""
    if snapshot.status in (SearchSnapshot.Status.QUEUED, SearchSnapshot.Status.RUNNING):
        return 0
    return snapshot.queries.filter(status=SnapshotQuery.Status.PENDING).count()
