"""Read side of the judging API: querysets the endpoints render, each in a fixed query count.

Complements :mod:`judging.selectors` (which the pages share) with what only the API needs.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery

from judging import selectors as judging_selectors
from judging.models import (
    Collection,
    Document,
    Judge,
    Judgment,
    JudgmentEvent,
    Membership,
    PoolEntry,
    Query,
)


def collections_for_user(*, user: AbstractBaseUser) -> list[Collection]:
    """Return the collections ``user`` belongs to, each with a sorted ``roles`` list.

    Superusers see every collection, as coordinators. Two SQL queries.
    """
    queryset = Collection.objects.order_by("name", "pk")
    if not user.is_superuser:
        queryset = queryset.filter(
            Exists(Membership.objects.filter(collection=OuterRef("pk"), user=user))
        )
    collections = list(queryset)
    roles: dict[int, set[str]] = {}
    for collection_id, role in Membership.objects.filter(
        user=user, collection__in=[c.pk for c in collections]
    ).values_list("collection_id", "role"):
        roles.setdefault(collection_id, set()).add(role)
    for collection in collections:
        held = roles.get(collection.pk, set())
        if user.is_superuser:
            held.add(Membership.Role.COORDINATOR)
        collection.roles = sorted(held)
    return collections


def queries_of(*, collection: Collection) -> QuerySet[Query]:
    """Return the queries of ``collection`` ordered by external id."""
    return Query.objects.filter(collection=collection).order_by("external_id", "pk")


def documents_of(
    *,
    collection: Collection,
    include_missing: bool = False,
    pooled: bool | None = None,
    query_external_id: str | None = None,
) -> QuerySet[Document]:
    """Return the documents of ``collection`` ordered by external id.

    Id-only documents (``has_content=False``) are left out unless ``include_missing``.
    ``pooled`` keeps only documents in (True) or out of (False) the judging pool;
    ``query_external_id`` keeps only documents pooled for that query.
    """
    queryset = Document.objects.filter(collection=collection).order_by("external_id", "pk")
    if not include_missing:
        queryset = queryset.filter(has_content=True)
    if pooled is not None:
        in_pool = Exists(PoolEntry.objects.filter(document=OuterRef("pk")))
        queryset = queryset.filter(in_pool if pooled else ~in_pool)
    if query_external_id:
        queryset = queryset.filter(
            Exists(
                PoolEntry.objects.filter(
                    document=OuterRef("pk"), query__external_id=query_external_id
                )
            )
        )
    return queryset


def pool_of(
    *,
    collection: Collection,
    include_missing: bool = False,
    query_external_id: str | None = None,
    unjudged_by: int | None = None,
    needs_grades: bool | None = None,
    open_to: Judge | None = None,
) -> QuerySet[PoolEntry]:
    """Return the pool entries of ``collection`` with their external ids, by qid and docno.

    ``unjudged_by`` keeps the pairs that judge has no judgment of yet; ``needs_grades``
    keeps the pairs graded by fewer (True) or at least (False) ``judges_per_pair`` judges,
    or with ``open_to`` (a judge, not a coordinator) the pairs still open to that judge
    (True) or not (False): those :func:`judging.selectors.next_pair` may serve them and
    they have not finally judged, gold pairs it mixes in included, so the answer is the
    same whether a pair is gold or not.
    """
    queryset = (
        PoolEntry.objects.filter(collection=collection)
        .select_related("query", "document")
        .only(
            "pk",
            "graded_count",
            "source",
            "added_at",
            "query__external_id",
            "document__external_id",
        )
        .order_by("query__external_id", "document__external_id", "pk")
    )
    if not include_missing:
        queryset = queryset.filter(document__has_content=True)
    if query_external_id:
        queryset = queryset.filter(query__external_id=query_external_id)
    if unjudged_by is not None:
        queryset = queryset.exclude(
            Exists(
                Judgment.objects.filter(
                    judge_id=unjudged_by,
                    query_id=OuterRef("query_id"),
                    document_id=OuterRef("document_id"),
                )
            )
        )
    if needs_grades is not None and open_to is not None:
        open_ids = judging_selectors.open_pairs(judge_id=open_to.pk).filter(collection=collection)
        still = Q(pk__in=open_ids.values("pk"))
        if collection.gold_rate > 0:
            still |= Q(pk__in=judging_selectors.gold_to_serve_entries(collection, open_to.pk))
        queryset = queryset.filter(still) if needs_grades else queryset.exclude(still)
    elif needs_grades is not None:
        short = {"graded_count__lt": collection.judges_per_pair}
        queryset = queryset.filter(**short) if needs_grades else queryset.exclude(**short)
    return queryset


def judgments_in(
    *, collection: Collection, judge_user: AbstractBaseUser | None = None
) -> QuerySet[Judgment]:
    """Return the judgments of ``collection`` (only ``judge_user``'s own, if given).

    Judge, query and document come in the same SQL query, reduced to the fields the API
    shows, so listing any number of judgments costs one query. Each judgment carries
    ``provenance``: the channel of its latest history event (how its current label was
    recorded), read by a subquery of the same statement.
    """
    latest_channel = (
        JudgmentEvent.objects.filter(judgment_id=OuterRef("pk"))
        .order_by("-at", "-pk")
        .values("channel")[:1]
    )
    queryset = (
        Judgment.objects.filter(collection=collection)
        .select_related("judge", "query", "document")
        .only(
            "pk",
            "grade",
            "status",
            "note",
            "seconds",
            "abstain_probability",
            "evidence",
            "guidelines_version",
            "judge_version",
            "created_at",
            "updated_at",
            "collection_id",
            "judge__id",
            "judge__name",
            "judge__kind",
            "judge__user_id",
            "query__id",
            "query__collection_id",
            "query__external_id",
            "document__id",
            "document__collection_id",
            "document__external_id",
        )
        .annotate(provenance=Subquery(latest_channel))
        .order_by("updated_at", "pk")
    )
    if judge_user is not None:
        queryset = queryset.filter(judge__user=judge_user)
    return queryset


def _events() -> QuerySet[JudgmentEvent]:
    """Return history events with judge, query, document and actor in the same query."""
    return (
        JudgmentEvent.objects.select_related("judge", "query", "document", "actor")
        .only(
            "pk",
            "judgment_id",
            "action",
            "channel",
            "before",
            "after",
            "at",
            "judge__id",
            "judge__name",
            "judge__kind",
            "query__external_id",
            "document__external_id",
            "actor__username",
        )
        .order_by("at", "pk")
    )


def events_in(*, collection: Collection) -> QuerySet[JudgmentEvent]:
    """Return the whole judgment history of ``collection``, oldest first."""
    return _events().filter(collection=collection)


def judgment_history(*, judgment: Judgment) -> QuerySet[JudgmentEvent]:
    """Return the history of the judgment's judge on its pair, oldest first.

    Follows the (judge, query, document) triple rather than the row, so the history of
    an earlier judgment of the same pair that was deleted and recorded again is included.
    """
    return _events().filter(
        judge_id=judgment.judge_id,
        query_id=judgment.query_id,
        document_id=judgment.document_id,
    )


def judges_visible_to(*, user: AbstractBaseUser) -> QuerySet[Judge]:
    """Return the judges ``user`` may see.

    Superusers see every judge. A coordinator sees, besides their own judge, the judges of
    the collections they coordinate: LLM judges assigned to one of them, humans holding a
    role in one of them, and any judge with judgments in one of them. Everyone else sees
    only their own human judge.
    """
    queryset = Judge.objects.order_by("name", "pk")
    if user.is_superuser:
        return queryset
    coordinated = Membership.objects.filter(user=user, role=Membership.Role.COORDINATOR).values(
        "collection_id"
    )
    visible = (
        Q(user=user)
        | Q(
            Exists(
                Judge.collections.through.objects.filter(
                    judge_id=OuterRef("pk"), collection_id__in=coordinated
                )
            )
        )
        | Q(
            Exists(
                Membership.objects.filter(
                    user_id=OuterRef("user_id"), collection_id__in=coordinated
                )
            )
        )
        | Q(Exists(Judgment.objects.filter(judge_id=OuterRef("pk"), collection_id__in=coordinated)))
    )
    return queryset.filter(visible)


def llm_judge_serves(*, judge: Judge, collection: Collection) -> bool:
    """Return whether the LLM ``judge`` is assigned to ``collection``."""
    return judge.collections.filter(pk=collection.pk).exists()


def coordinated_collections(*, user: AbstractBaseUser) -> QuerySet[Collection]:
    """Return the collections ``user`` coordinates (every collection for superusers)."""
    if user.is_superuser:
        return Collection.objects.all()
    return Collection.objects.filter(
        memberships__user=user, memberships__role=Membership.Role.COORDINATOR
    )


def is_coordinator_anywhere(*, user: AbstractBaseUser) -> bool:
    """Return whether ``user`` coordinates at least one collection (superusers do)."""
    return (
        user.is_superuser
        or Membership.objects.filter(user=user, role=Membership.Role.COORDINATOR).exists()
    )


def pair_in(*, collection: Collection, query_id: str, document_id: str) -> tuple[Query, Document]:
    """Return the query and document of ``collection`` named by external ids.

    Raises ``ValidationError`` naming the ``query``/``document`` field for unknown ids.
    """
    query = Query.objects.filter(collection=collection, external_id=query_id).first()
    document = Document.objects.filter(collection=collection, external_id=document_id).first()
    errors = {}
    if query is None:
        errors["query"] = f"Unknown query id {query_id!r}."
    if document is None:
        errors["document"] = f"Unknown document id {document_id!r}."
    if errors:
        raise ValidationError(errors)
    return query, document


def judgment_exists(*, judge: Judge, query: Query, document: Document) -> bool:
    """Return whether ``judge`` already has a judgment of the pair."""
    return Judgment.objects.filter(judge=judge, query=query, document=document).exists()


def judge_by_id(*, judge_id: int) -> Judge | None:
    """Return the judge with this id, or None."""
    return Judge.objects.filter(pk=judge_id).first()


def holds_role(*, user_id: int, collection: Collection, roles: tuple[str, ...]) -> bool:
    """Return whether the user holds one of ``roles`` in ``collection``."""
    return Membership.objects.filter(
        collection=collection, user_id=user_id, role__in=roles
    ).exists()


def memberships_of(*, collection: Collection) -> QuerySet[Membership]:
    """Return the roles held in ``collection`` with their users (one query), by username."""
    return (
        Membership.objects.filter(collection=collection)
        .select_related("user")
        .order_by("user__username", "role", "pk")
    )


def user_by_username(*, username: str) -> AbstractBaseUser | None:
    """Return the active user called ``username``, or None."""
    model = get_user_model()
    return model.objects.filter(**{model.USERNAME_FIELD: username, "is_active": True}).first()
