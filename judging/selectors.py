"""Read side of judging: every query a page or API needs, each in a fixed number of SQL queries."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce
from django.http import Http404

from judging import opaque
from judging.disagreement import disagreement_q, with_grade_spread
from judging.models import (
    Collection,
    Document,
    FileImport,
    GoldPair,
    Judge,
    JudgeProgress,
    Judgment,
    JudgmentEvent,
    Membership,
    PoolEntry,
    PoolProgress,
    Query,
)

FINAL_STATUSES = (Judgment.Status.GRADED, Judgment.Status.CANNOT_JUDGE)
_MIX_MULTIPLIER = 2654435761  # Knuth's multiplicative hash constant
_MIX_MODULUS = 2147483647
#: Decides when a gold pair is served (tests may seed or replace it).
_random = random.SystemRandom()
_UNPLANNED = 2147483647  # next_pair's sort key for pairs outside the pooling plan (waves are small)


def _pair_key() -> bytes:
    """Return the key of the pool's opaque ids, derived from ``SECRET_KEY``."""
    return hashlib.sha256(b"graded.pair-id:" + settings.SECRET_KEY.encode()).digest()


def pair_ref(pk: int) -> int:
    """Return the opaque id judges see for pool entry ``pk`` (:mod:`judging.opaque`).

    Card addresses and the pool's REST ``id`` carry it instead of the primary key, which
    would say in which order (and so with which other pairs) a pair entered the pool.
    """
    return opaque.encode(pk, _pair_key())


def pair_pk(ref: object) -> int | None:
    """Return the pool entry primary key of an opaque id, or None for a foreign one."""
    return opaque.decode(ref, _pair_key())


def collection_for_member(
    *, user: AbstractBaseUser, slug: str, roles: tuple[str, ...] | None = None
) -> Collection:
    """Return the collection if ``user`` holds one of ``roles`` in it (any role if None).

    Superusers see every collection. Raises ``Http404`` for non-members, so that a
    collection's existence does not leak, and ``PermissionDenied`` naming the roles the
    page needs for a member who holds only others (a judge opening the leaderboard).
    """
    queryset = Collection.objects.filter(slug=slug)
    if user.is_superuser:
        collection = queryset.first()
    else:
        memberships = Membership.objects.filter(collection=OuterRef("pk"), user=user)
        wanted = memberships if roles is None else memberships.filter(role__in=roles)
        collection = queryset.filter(Exists(wanted)).first()
        if collection is None and roles is not None:  # a member in another role?
            other = queryset.filter(Exists(memberships)).first()
            if other is not None:
                held = user_roles(user=user, collection=other)
                raise PermissionDenied(role_refusal(needed=roles, held=held))
    if collection is None:
        raise Http404("No such collection.")
    return collection


def role_refusal(*, needed: tuple[str, ...], held: set[str]) -> str:
    """Return why a member may not open a page: the roles it needs and the ones they hold."""
    names = dict(Membership.Role.choices)

    def listed(roles: list[str]) -> str:
        words = [names.get(role, role).lower() + "s" for role in roles]
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]

    mine = sorted(held)
    you = " and ".join(names.get(role, role).lower() for role in mine)
    return (
        f"This page is for the collection's {listed(list(needed))}; "
        f"you are {'a' if you[:1] not in 'aeiou' else 'an'} {you} here."
    )


def user_roles(*, user: AbstractBaseUser, collection: Collection) -> set[str]:
    """Return the roles ``user`` holds in ``collection`` (superusers are coordinators)."""
    roles = set(
        Membership.objects.filter(collection=collection, user=user).values_list("role", flat=True)
    )
    if user.is_superuser:
        roles.add(Membership.Role.COORDINATOR)
    return roles


def _with_split(entries: QuerySet[PoolEntry]) -> QuerySet[PoolEntry]:
    """Annotate ``split``: whether the entry's judges disagree and it may get one more judge.

    Disagree: the rule of :mod:`judging.disagreement` (the grades spread by at least the
    collection's ``disagreement_spread``), the same rule the disagreement queue lists by.
    Only pairs with two or more grades and fewer than ``max_judges_per_pair`` qualify.
    """
    return with_grade_spread(entries, Judgment, Judgment.Status.GRADED).alias(
        split=Case(
            When(
                Q(graded_count__gte=2, graded_count__lt=F("collection__max_judges_per_pair"))
                & disagreement_q(),
                then=Value(1),
            ),
            default=Value(0),
            output_field=IntegerField(),
        )
    )


def _open_pairs(judge_id: int | None) -> QuerySet[PoolEntry]:
    """Pool entries still needing grades, with content, not finally judged by ``judge_id``.

    A pair needs grades until ``judges_per_pair`` judges graded it, and a pair whose
    judges disagree gets one more judge at a time up to ``max_judges_per_pair``.
    """
    mine = Judgment.objects.filter(
        judge_id=judge_id,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
        status__in=FINAL_STATUSES,
    )
    return (
        _with_split(PoolEntry.objects.all())
        .filter(
            Q(graded_count__lt=F("collection__judges_per_pair")) | Q(split=1),
            document__has_content=True,
        )
        .exclude(Exists(mine))
    )


def open_pairs(*, judge_id: int | None) -> QuerySet[PoolEntry]:
    """Return the pool entries still open to ``judge_id`` (see :func:`_open_pairs`)."""
    return _open_pairs(judge_id)


def gold_to_serve_entries(collection: Collection, judge_id: int) -> QuerySet[PoolEntry]:
    """Return the pks of the closed gold pairs :func:`next_pair` is still to serve the judge.

    The pairs :func:`gold_to_serve_sql` counts (whether or not the collection mixes gold
    in: the caller asks only when it does).
    """
    gold = GoldPair.objects.filter(
        collection_id=collection.pk,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
    )
    mine = Judgment.objects.filter(
        judge_id=judge_id,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
        status__in=FINAL_STATUSES,
    )
    return (
        PoolEntry.objects.filter(collection=collection, is_open=False, document__has_content=True)
        .filter(Exists(gold))
        .exclude(Exists(mine))
        .values("pk")
    )


@dataclass(frozen=True)
class Progress:
    """How far one judge is in one collection."""

    done: int
    remaining: int

    @property
    def total(self) -> int:
        """Return the pairs this judge has judged or may still judge."""
        return self.done + self.remaining

    @property
    def percent(self) -> int:
        """Return the share done, as a whole percentage (100 when there is nothing to do)."""
        return 100 if self.total == 0 else round(100 * self.done / self.total)


def _progress_annotations(judge_id: int | None) -> dict:
    """Return ``done``/``remaining`` annotations for a collection queryset, from the counters.

    Three primary-key look-ups per collection (:mod:`judging.progress.models`), whatever
    the pool's size; :func:`judging.progress.selectors.progress_recount` is the definition.
    """

    def counter(model: type, field: str, **match: object) -> Coalesce:
        rows = model.objects.filter(collection=OuterRef("pk"), **match).values(field)[:1]
        return Coalesce(Subquery(rows, output_field=IntegerField()), Value(0))

    done_open = counter(JudgeProgress, "done_open", judge_id=judge_id)
    return {
        "done": counter(JudgeProgress, "done", judge_id=judge_id),
        "remaining": counter(PoolProgress, "open_pairs") - done_open + gold_to_serve(judge_id),
    }


def gold_to_serve(judge_id: int | None) -> Case:
    """Return, for a collection queryset, the gold pairs the judge is still to be served.

    The ORM form of :func:`gold_to_serve_sql`: 0 unless the collection mixes gold in
    (``gold_rate`` above 0); else its pooled gold pairs with content that no longer need
    grades and that the judge has not finally judged (:func:`next_pair` serves them).
    """
    closed = PoolEntry.objects.filter(
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
        is_open=False,
        document__has_content=True,
    )
    mine = Judgment.objects.filter(
        judge_id=judge_id,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
        status__in=FINAL_STATUSES,
    )
    count = (
        GoldPair.objects.filter(collection=OuterRef("pk"))
        .filter(Exists(closed))
        .exclude(Exists(mine))
        .order_by()
        .values("collection")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Case(
        When(gold_rate__gt=0, then=Coalesce(Subquery(count, output_field=IntegerField()), 0)),
        default=Value(0),
        output_field=IntegerField(),
    )


def collections_with_progress(*, user: AbstractBaseUser, judge: Judge | None) -> list[Collection]:
    """Return the collections ``user`` belongs to, each with ``progress`` and ``roles``.

    One SQL query for the collections with their progress, one for the roles.
    """
    judge_id = judge.pk if judge else None
    collections = list(
        Collection.objects.filter(memberships__user=user)
        .distinct()
        .annotate(**_progress_annotations(judge_id))
        .order_by("name")
    )
    roles: dict[int, set[str]] = {}
    for collection_id, role in Membership.objects.filter(user=user).values_list(
        "collection_id", "role"
    ):
        roles.setdefault(collection_id, set()).add(role)
    for collection in collections:
        collection.progress = Progress(done=collection.done, remaining=collection.remaining)
        collection.roles = roles.get(collection.pk, set())
    return collections


def _fetch_one(sql: str, params: list[object]) -> tuple | None:
    """Run one hand-written query of the judging card; return its first row.

    The card's reads are a few primary-key and index look-ups each; written as SQL they
    skip the ORM's query compilation, which cost more CPU than the look-ups themselves.
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def _table(model: type) -> str:
    """Return the quoted table name of ``model``."""
    return connection.ops.quote_name(model._meta.db_table)


def gold_to_serve_sql(*, query: bool = False) -> str:
    """Return SQL counting the closed gold pairs a judge is still to be served (see below).

    A scalar subquery with parameters: the collection, the judge, the final statuses
    (and the query when ``query``). The pairs are those :func:`next_pair` serves a judge
    on top of the open ones while the collection mixes gold in: pooled gold pairs with
    content that no longer need grades (``is_open`` false) and that the judge has not
    finally judged. Driven from the (few) gold pairs, through ``pool_entry_unique_pair``.
    """
    final = ", ".join(["%s"] * len(FINAL_STATUSES))
    return (
        f"(SELECT COUNT(*) FROM {_table(GoldPair)} gp JOIN {_table(PoolEntry)} ge"
        " ON ge.query_id = gp.query_id AND ge.document_id = gp.document_id"
        f" JOIN {_table(Document)} gd ON gd.id = ge.document_id"
        " WHERE gp.collection_id = %s AND NOT ge.is_open AND gd.has_content"
        + (" AND gp.query_id = %s" if query else "")
        + f" AND NOT EXISTS (SELECT 1 FROM {_table(Judgment)} gj WHERE gj.judge_id = %s"
        " AND gj.query_id = ge.query_id AND gj.document_id = ge.document_id"
        f" AND gj.status IN ({final})))"
    )


def gold_to_serve_params(
    *, collection_id: int, judge_id: int, query_id: int | None = None
) -> list[object]:
    """Return the parameters of :func:`gold_to_serve_sql` (with a query if given)."""
    query = [] if query_id is None else [query_id]
    return [collection_id, *query, judge_id, *FINAL_STATUSES]


def judge_progress(*, judge: Judge, collection: Collection) -> Progress:
    """Return ``judge``'s progress in ``collection`` in one SQL query, from the counters.

    While the collection mixes gold pairs in (``gold_rate`` above 0), ``remaining`` also
    counts the gold pairs the judge is still to be served that no longer need grades
    (:func:`next_pair` serves them): a judge's count of pairs left then falls by one with
    every pair they judge, gold or not, and never says which pair was gold.
    """
    gold = collection.gold_rate > 0
    row = _fetch_one(
        f"SELECT (SELECT open_pairs FROM {_table(PoolProgress)} WHERE collection_id = %s)"
        f" AS open_pairs, jp.done, jp.done_open, "
        + (gold_to_serve_sql() if gold else "0")
        + f" FROM (SELECT 1 AS one) o LEFT JOIN {_table(JudgeProgress)} jp"
        " ON jp.collection_id = %s AND jp.judge_id = %s",
        [
            collection.pk,
            *(gold_to_serve_params(collection_id=collection.pk, judge_id=judge.pk) if gold else []),
            collection.pk,
            judge.pk,
        ],
    )
    open_pairs, done, done_open, waiting = (value or 0 for value in row)
    return Progress(done=done, remaining=open_pairs - done_open + waiting)


@dataclass(frozen=True)
class _Candidate:
    """A pair :func:`next_pair` may serve: its pool entry, query, and whether deferred."""

    pk: int
    query_id: int
    deferred: bool


def next_pair(
    *, judge: Judge, collection: Collection, current_query_id: int | None = None
) -> PoolEntry | None:
    """Return the next pool entry ``judge`` should grade, or None when none is left.

    Order: pairs deferred with "later" come last; pairs of the query the judge is working
    on come first (so the narrative stays fresh); then pairs with the fewest grades; ties
    are broken by a per-judge shuffle, so documents appear in a random order that does not
    follow any run's ranking, and two judges see different orders. A judge who reached
    their quota in the collection (``Membership.quota``) gets None.

    Where a disagreement can send a pair to one more judge (``max_judges_per_pair`` above
    ``judges_per_pair``), the open pairs depend on each pair's grades and the ORM query
    over :func:`_open_pairs` decides. Otherwise one SQL query answers whatever the pool's
    size: the per-judge shuffle ``(shuffle_key + c) mod (2^31 - 1)`` is a rotation of the
    order by ``shuffle_key`` (keys from ``start`` on come first), so the candidates are the
    first rows of a few index ranges — per grade count, the keys from ``start`` up and the
    keys below it (index ``pool_next``) — plus the best pair of the current query and the
    best deferred pair; the outer query picks the best. Both give the same order. The
    single query reads the open pairs from the maintained ``PoolEntry.is_open`` (see
    :mod:`judging.progress.models`), which here is "has content and fewer than
    ``judges_per_pair`` grades", without joining the documents.

    A pooling strategy other than depth-k (:mod:`metrics.pool`) plans the next pairs in
    waves (``PoolEntry.priority``): planned pairs come before every unplanned one, the
    lower wave first; within a wave the order above holds (current query, fewest grades,
    the judge's shuffle), so judges working at once spread over a wave's pairs. Pairs
    deferred with "later" stay last. With no plan (depth-k) the order is the one above.

    Gold pairs (``gold_rate`` above 0) are served by :func:`_mix_gold`, which keeps them
    where nothing marks them: among the pairs of the query the judge is on.
    """
    if _quota_reached(judge=judge, collection=collection):
        return None
    if collection.gold_rate > 0:
        return _mix_gold(judge, collection, current_query_id)
    if collection.max_judges_per_pair > collection.judges_per_pair:
        return _next_split_pair(judge, collection, current_query_id)
    return (
        PoolEntry.objects.filter(pk=RawSQL(*_next_pair_sql(judge, collection, current_query_id)))
        .select_related("query", "document")
        .first()
    )


def _ordinary_candidate(
    judge: Judge, collection: Collection, current_query_id: int | None
) -> _Candidate | None:
    """Return the pair the ordinary order serves next (one query), or None."""
    if collection.max_judges_per_pair > collection.judges_per_pair:
        row = (
            _split_order(judge, collection, current_query_id)
            .values_list("pk", "query_id", "deferred")
            .first()
        )
    else:
        sql, params = _next_pair_sql(
            judge, collection, current_query_id, columns="c.id, c.q, c.cls"
        )
        found = _fetch_one(sql, params)
        row = None if found is None else (found[0], found[1], found[2] >= 2)
    return None if row is None else _Candidate(int(row[0]), int(row[1]), bool(row[2]))


def _gold_candidates(judge: Judge, collection: Collection) -> list[_Candidate]:
    """Return the gold pairs no longer open that ``judge`` is still to be served (one query).

    Pooled gold pairs with content, not finally judged by the judge, that need no more
    grades (an open gold pair is an ordinary open pair: the ordinary order serves it).
    The judge's deferred ones last, each group in the judge's own shuffle.
    """
    final = ", ".join(["%s"] * len(FINAL_STATUSES))
    mine = (
        f"SELECT 1 FROM {_table(Judgment)} j WHERE j.judge_id = %s"
        " AND j.query_id = pe.query_id AND j.document_id = pe.document_id"
    )
    offset = (judge.pk * _MIX_MULTIPLIER) % _MIX_MODULUS
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT pe.id, pe.query_id, CASE WHEN EXISTS ({mine} AND j.status = %s)"
            " THEN 1 ELSE 0 END AS deferred,"
            " (CAST(pe.shuffle_key AS BIGINT) + %s) %% %s AS mix"
            f" FROM {_table(GoldPair)} gp JOIN {_table(PoolEntry)} pe"
            " ON pe.query_id = gp.query_id AND pe.document_id = gp.document_id"
            f" JOIN {_table(Document)} d ON d.id = pe.document_id"
            " WHERE gp.collection_id = %s AND NOT pe.is_open AND d.has_content"
            f" AND NOT EXISTS ({mine} AND j.status IN ({final}))"
            " ORDER BY deferred, mix, pe.id",
            [
                judge.pk,
                Judgment.Status.LATER,
                offset,
                _MIX_MODULUS,
                collection.pk,
                judge.pk,
                *FINAL_STATUSES,
            ],
        )
        return [_Candidate(int(pk), int(q), bool(d)) for pk, q, d, _mix in cursor.fetchall()]


def _left(judge: Judge, collection: Collection, query_ids: set[int]) -> tuple[int, dict[int, int]]:
    """Return the open pairs ``judge`` has not finally judged: all, and per query asked.

    One query: the counters for the first (:func:`judge_progress` without gold), each
    query's open pairs (a few, index ``pool_entry_unique_pair``) for the second; a query
    without any is left out of the answer.
    """
    final = ", ".join(["%s"] * len(FINAL_STATUSES))
    queries = sorted(query_ids) or [0]
    marks = ", ".join(["%s"] * len(queries))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 0 AS q, (SELECT open_pairs FROM {_table(PoolProgress)}"
            " WHERE collection_id = %s) - COALESCE((SELECT done_open FROM"
            f" {_table(JudgeProgress)} WHERE collection_id = %s AND judge_id = %s), 0) AS n"
            f" UNION ALL SELECT pe.query_id AS q, COUNT(*) AS n FROM {_table(PoolEntry)} pe"
            f" WHERE pe.query_id IN ({marks}) AND pe.is_open AND NOT EXISTS"
            f" (SELECT 1 FROM {_table(Judgment)} j WHERE j.judge_id = %s"
            " AND j.query_id = pe.query_id AND j.document_id = pe.document_id"
            f" AND j.status IN ({final})) GROUP BY pe.query_id",
            [collection.pk, collection.pk, judge.pk, *queries, judge.pk, *FINAL_STATUSES],
        )
        rows = cursor.fetchall()
    total = next((n for q, n in rows if q == 0), 0) or 0
    return max(int(total), 0), {int(q): int(n) for q, n in rows if q != 0}


def _mix_gold(
    judge: Judge, collection: Collection, current_query_id: int | None
) -> PoolEntry | None:
    """Return the next pair for ``judge`` when the collection mixes gold pairs in.

    The gold pairs to mix in are those that no longer need grades and that the judge has
    not finally judged (:func:`_gold_candidates`; an open gold pair is an ordinary pair
    and comes in the ordinary order). Nothing may mark them, so they come where the
    ordinary order could have put a pair of their query, at uniformly random places
    among the query's pairs:

    - **within a query.** The next card is of the query the judge is on while that query
      has pairs left for them (ordinary or gold), else of the ordinary next pair's query.
      If that query has ``g`` gold pairs for the judge and ``r`` open pairs they have not
      judged, a gold one comes with probability ``max(rate, g / (g + r))``: a uniformly
      random merge of the two (so a query's last gold pairs come before the judge leaves
      it, and its first card is gold no more often than any other).
    - **orphans**, gold pairs of a query with no open pair left for the judge (every pair
      of it closed), can only come at a change of query, the one place the judge leaves a
      query anyway: with probability ``max(rate, o / (o + R))``, ``R`` all open pairs left.
    - **when the ordinary pairs run out** (only pairs deferred with "later" are left, or
      none), the gold pairs not served yet come first, then the judge's deferred ones.

    ``rate`` is the collection's ``gold_rate``: a floor that brings gold pairs earlier in
    each query (at 5% or less they are spread evenly). ``judge_progress`` counts these gold
    pairs among the pairs left, so the count falls by one for every pair judged. Whatever
    is served, the same five queries run (quota, the ordinary pair, the gold pairs, the
    pairs left, the chosen entry), with the same two random draws: neither the number of
    queries nor their kind depends on whether a gold pair comes.
    """
    ordinary = _ordinary_candidate(judge, collection, current_query_id)
    gold = _gold_candidates(judge, collection)
    asked = {g.query_id for g in gold} | {ordinary.query_id if ordinary else 0}
    if current_query_id is not None:
        asked.add(current_query_id)
    left, per_query = _left(judge, collection, asked)
    draw_query, draw_change = _random.random(), _random.random()
    fresh = [g for g in gold if not g.deferred]
    rate = collection.gold_rate
    chosen = ordinary
    if ordinary is None:
        chosen = gold[0] if gold else None
    elif ordinary.deferred:
        if fresh:
            chosen = fresh[0]
        elif gold and draw_change < max(rate, len(gold) / (len(gold) + left)):
            chosen = gold[0]
    else:
        staying = current_query_id is not None and (
            per_query.get(current_query_id, 0) > 0
            or any(g.query_id == current_query_id for g in fresh)
        )
        query = current_query_id if staying else ordinary.query_id
        here = [g for g in fresh if g.query_id == query]
        pairs_left = per_query.get(query, 0)
        orphans = [g for g in fresh if g.query_id != query and not per_query.get(g.query_id)]
        if here and draw_query < max(rate, len(here) / (len(here) + pairs_left)):
            chosen = here[0]
        elif (
            query != current_query_id
            and orphans
            and draw_change < max(rate, len(orphans) / (len(orphans) + left))
        ):
            chosen = orphans[0]
    return (
        PoolEntry.objects.filter(pk=chosen.pk if chosen is not None else None)
        .select_related("query", "document")
        .first()
    )


def _split_order(
    judge: Judge, collection: Collection, current_query_id: int | None
) -> QuerySet[PoolEntry]:
    """Return the open pairs of ``judge`` in the order of :func:`next_pair` (ORM form)."""
    deferred = Judgment.objects.filter(
        judge=judge,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
        status=Judgment.Status.LATER,
    )
    mix = ExpressionWrapper(
        (F("shuffle_key") + Value(judge.pk * _MIX_MULTIPLIER)) % Value(_MIX_MODULUS),
        output_field=BigIntegerField(),
    )
    return (
        _open_pairs(judge.pk)
        .filter(collection=collection)
        .annotate(
            deferred=Exists(deferred),
            other_query=Case(
                When(query_id=current_query_id, then=Value(0)),
                default=Value(1),
                output_field=IntegerField(),
            ),
            mix=mix,
        )
        .order_by(
            "deferred",
            F("priority").asc(nulls_last=True),
            "other_query",
            "graded_count",
            "mix",
            "pk",
        )
    )


def _next_split_pair(
    judge: Judge, collection: Collection, current_query_id: int | None
) -> PoolEntry | None:
    """Return the next pair by the ORM ordering over :func:`_open_pairs` (see next_pair)."""
    return (
        _split_order(judge, collection, current_query_id)
        .select_related("query", "document")
        .first()
    )


def _next_pair_sql(
    judge: Judge, collection: Collection, current_query_id: int | None, *, columns: str = "c.id"
) -> tuple[str, list[object]]:
    """Return the SQL (and parameters) selecting the next pair (see next_pair).

    ``columns`` of the chosen row: ``c.id`` (its pk), ``c.q`` (its query), ``c.cls``
    (2 or 3 for a pair the judge deferred).
    """
    quote = connection.ops.quote_name
    pe, jd = quote(PoolEntry._meta.db_table), quote(Judgment._meta.db_table)
    start = _MIX_MODULUS - (judge.pk * _MIX_MULTIPLIER) % _MIX_MODULUS
    columns_arm = (
        "SELECT pe.id AS id, pe.query_id AS q, {p} AS p, {cls} AS cls, pe.graded_count AS g, "
        f"CASE WHEN pe.shuffle_key >= {int(start)} THEN 0 ELSE 1 END AS rot, "
        "pe.shuffle_key AS k"
    )
    unplanned = str(_UNPLANNED)
    # Without disagreements a pair is open exactly while its document has content and it
    # has fewer than judges_per_pair grades: the maintained ``is_open`` (no document join).
    base = f" FROM {pe} pe WHERE pe.collection_id = %s AND pe.is_open"
    mine = (
        f"SELECT 1 FROM {jd} j WHERE j.judge_id = %s AND j.query_id = pe.query_id"
        " AND j.document_id = pe.document_id"
    )
    arms: list[str] = []
    params: list[object] = []
    open_count = max(0, int(collection.judges_per_pair))
    # the pooling plan's pairs (few; index pool_planned), wave by wave, before the rest
    current = "CASE WHEN pe.query_id = %s THEN 0 ELSE 1 END"
    arms.append(
        columns_arm.format(p="pe.priority", cls=current if current_query_id is not None else "1")
        + base
        + f" AND pe.priority IS NOT NULL AND NOT EXISTS ({mine})"
        + " ORDER BY p, cls, g, rot, k, id LIMIT 1"
    )
    if current_query_id is not None:
        params.append(current_query_id)
    params += [collection.pk, judge.pk]
    if current_query_id is not None:  # class 0: the current query (one query's pairs)
        arms.append(
            columns_arm.format(p=unplanned, cls=0)
            + base
            + f" AND pe.query_id = %s AND NOT EXISTS ({mine})"
            + " ORDER BY g, rot, k, id LIMIT 1"
        )
        params += [collection.pk, current_query_id, judge.pk]
    for g in range(open_count):  # class 1: the rest, per grade count, in rotated order
        for above in (True, False):
            arms.append(
                columns_arm.format(p=unplanned, cls=1)
                + base
                + " AND pe.graded_count = %s AND pe.shuffle_key "
                + (">=" if above else "<")
                + f" {int(start)} AND NOT EXISTS ({mine}) ORDER BY pe.shuffle_key, pe.id LIMIT 1"
            )
            params += [collection.pk, g, judge.pk]
    # class 2/3: pairs this judge deferred with "later" (of the current query first).
    arms.append(
        columns_arm.format(
            p=unplanned,
            cls="CASE WHEN pe.query_id = %s THEN 2 ELSE 3 END"
            if current_query_id is not None
            else "3",
        )
        + base
        + f" AND EXISTS ({mine} AND j.status = %s)"
        + " ORDER BY cls, g, rot, k, id LIMIT 1"
    )  # a judge has one judgment per pair: a deferred pair has no final one
    if current_query_id is not None:
        params.append(current_query_id)
    params += [collection.pk, judge.pk, Judgment.Status.LATER]
    union = " UNION ALL ".join(f"SELECT * FROM ({arm}) a{i}" for i, arm in enumerate(arms))
    sql = f"SELECT {columns} FROM ({union}) c ORDER BY c.p, c.cls, c.g, c.rot, c.k, c.id LIMIT 1"
    return sql, params


def _quota_reached(*, judge: Judge, collection: Collection) -> bool:
    """Return whether ``judge`` has judged as many pairs as their quota allows (one query)."""
    left = quota_left(judge=judge, collection_id=collection.pk)
    return left is not None and left <= 0


@dataclass(frozen=True)
class QuotaState:
    """A judge's quota in a collection: its size, and the pairs finally judged.

    Final judgments (graded or "cannot judge") count. A quota is a cap, not a rate: it
    never resets; a coordinator raises it.
    """

    limit: int
    judged: int

    @property
    def left(self) -> int:
        """Return how many more pairs the judge may finally judge (0 once reached)."""
        return max(self.limit - self.judged, 0)


def quota_left(*, judge: Judge, collection_id: int) -> int | None:
    """Return how many more pairs ``judge`` may finally judge in the collection (one query).

    None means no quota. The quota is the judge's membership's (``Membership.quota``);
    final judgments (graded or "cannot judge") count against it.
    """
    state = quota_state(judge=judge, collection_id=collection_id)
    return None if state is None else state.limit - state.judged


def quota_state(*, judge: Judge, collection_id: int) -> QuotaState | None:
    """Return ``judge``'s quota in the collection and what they judged (one query); None: none."""
    if judge.user_id is None:
        return None
    row = _fetch_one(
        f"SELECT m.quota, COALESCE(jp.done, 0) FROM {_table(Membership)} m"
        f" LEFT JOIN {_table(JudgeProgress)} jp"
        " ON jp.collection_id = m.collection_id AND jp.judge_id = %s"
        " WHERE m.collection_id = %s AND m.user_id = %s AND m.role = %s"
        " AND m.quota IS NOT NULL ORDER BY m.id LIMIT 1",
        [judge.pk, collection_id, judge.user_id, Membership.Role.JUDGE],
    )
    return None if row is None else QuotaState(limit=row[0], judged=row[1])


def pool_entry_for_judge(*, collection: Collection, entry_id: int) -> PoolEntry:
    """Return one pool entry of ``collection`` that judges may see, with query and document."""
    entry = (
        PoolEntry.objects.filter(collection=collection, pk=entry_id, document__has_content=True)
        .select_related("query", "document")
        .first()
    )
    if entry is None:
        raise Http404("No such pair.")
    return entry


def judgment_of(*, judge: Judge, entry: PoolEntry) -> Judgment | None:
    """Return ``judge``'s current judgment of the entry's pair, if any."""
    return Judgment.objects.filter(
        judge=judge, query_id=entry.query_id, document_id=entry.document_id
    ).first()


def previous_entry_id(
    *, judge: Judge, collection: Collection, before: Judgment | None
) -> int | None:
    """Return the pool entry judged just before ``before`` (or the latest, if None).

    "Judged" is by the judgments' creation time (then id); judgments of pairs no longer
    pooled are passed over. One query: the judge's judgments newest first (index
    ``judgment_judge_time``) joined to the pool by pair (``pool_entry_unique_pair``),
    stopping at the first hit. The join is tried on the judge's latest
    :data:`_PREVIOUS_WINDOW` judgments first and on all of them only when none of those is
    pooled (``COALESCE`` evaluates the second subquery only then): the planner cannot
    know that almost every judgment has its pool entry, and over the whole history it
    picks a parallel plan whose worker start-up alone costs milliseconds.
    """
    quote = connection.ops.quote_name
    jd, pe = quote(Judgment._meta.db_table), quote(PoolEntry._meta.db_table)
    where = "judge_id = %s AND collection_id = %s"
    params: list[object] = [judge.pk, collection.pk]
    if before is not None:
        field = Judgment._meta.get_field("created_at")
        at = field.get_db_prep_value(before.created_at, connection)
        where += " AND (created_at < %s OR (created_at = %s AND id < %s))"
        params += [at, at, before.pk]
    order = "ORDER BY j.created_at DESC, j.id DESC"

    def newest(limit: str) -> str:
        return (
            f"(SELECT pe.id FROM (SELECT query_id, document_id, created_at, id FROM {jd} "
            f"WHERE {where} ORDER BY created_at DESC, id DESC{limit}) j "
            f"JOIN {pe} pe ON pe.query_id = j.query_id AND pe.document_id = j.document_id "
            f"{order} LIMIT 1)"
        )

    sql = f"SELECT COALESCE({newest(f' LIMIT {_PREVIOUS_WINDOW}')}, {newest('')})"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *params])
        row = cursor.fetchone()
    return row[0] if row else None


_PREVIOUS_WINDOW = 64  # judgments looked at before the whole history (see previous_entry_id)


def previous_entry_id_reference(
    *, judge: Judge, collection: Collection, before: Judgment | None
) -> int | None:
    """Return :func:`previous_entry_id` by its first definition (a correlated subquery).

    Slow on large collections (it maps every judgment of the judge to its pool entry);
    kept as the reference the tests compare the fast query with.
    """
    judgments = Judgment.objects.filter(judge=judge, collection=collection)
    if before is not None:
        judgments = judgments.filter(
            Q(created_at__lt=before.created_at) | Q(created_at=before.created_at, pk__lt=before.pk)
        )
    entry = PoolEntry.objects.filter(
        collection=collection,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
    ).values("pk")[:1]
    row = (
        judgments.annotate(entry_id=Subquery(entry))
        .filter(entry_id__isnull=False)
        .order_by("-created_at", "-pk")
        .values_list("entry_id", "query_id")
        .first()
    )
    return row[0] if row else None


def last_query_id(*, judge: Judge, collection: Collection) -> int | None:
    """Return the query ``judge`` is judging in ``collection``: that of their newest label.

    Newest by creation, not by change: a judge who goes back and re-grades an earlier
    pair (of an earlier query) goes on where they were, not with that pair's query.
    """
    return (
        Judgment.objects.filter(judge=judge, collection=collection)
        .order_by("-created_at", "-pk")
        .values_list("query_id", flat=True)
        .first()
    )


def judgments_of_judge(
    *,
    judge: Judge,
    collection: Collection,
    status: str | None = None,
    grade: int | None = None,
    query_external_id: str | None = None,
) -> QuerySet[Judgment]:
    """Return ``judge``'s own judgments in ``collection``, newest first, filterable."""
    queryset = (
        Judgment.objects.filter(judge=judge, collection=collection)
        .select_related("query", "document")
        .order_by("-updated_at", "-pk")
    )
    if status:
        queryset = queryset.filter(status=status)
    if grade is not None:
        queryset = queryset.filter(grade=grade)
    if query_external_id:
        queryset = queryset.filter(query__external_id=query_external_id)
    return queryset


def collection_counts(*, collection: Collection) -> dict[str, int]:
    """Return how many queries, documents, pool pairs and judgments ``collection`` has.

    One SQL query (four counting subqueries), for the coordinators' overview.
    """

    def count(queryset: QuerySet) -> Coalesce:
        subquery = (
            queryset.filter(collection=OuterRef("pk"))
            .order_by()
            .values("collection")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return Coalesce(Subquery(subquery, output_field=IntegerField()), Value(0))

    row = (
        Collection.objects.filter(pk=collection.pk)
        .annotate(
            n_queries=count(Query.objects.all()),
            n_documents=count(Document.objects.all()),
            n_pool_pairs=count(PoolEntry.objects.all()),
            n_judgments=count(Judgment.objects.all()),
            n_missing_documents=count(
                Document.objects.filter(
                    Exists(PoolEntry.objects.filter(document=OuterRef("pk"))),
                    has_content=False,
                )
            ),
        )
        .values("n_queries", "n_documents", "n_pool_pairs", "n_judgments", "n_missing_documents")
        .get()
    )
    return {name.removeprefix("n_"): value for name, value in row.items()}


def pooled_documents_without_content(*, collection: Collection) -> QuerySet[Document]:
    """Return the id-only documents in the pool (from runs), most-pooled first.

    Judges never see them; coordinators import their content to make them judgeable.
    """
    return (
        Document.objects.filter(collection=collection, has_content=False)
        .annotate(pooled=Count("pool_entries"))
        .filter(pooled__gt=0)
        .order_by("-pooled", "external_id")
    )


def file_import_with_progress(
    *, collection: Collection, import_id: int, started_by: AbstractBaseUser | None = None
) -> tuple[FileImport, int]:
    """Return the collection's background import ``import_id`` and its bytes read so far.

    A running import publishes its progress to the cache (see
    :mod:`judging.imports.services`); a finished one has it on the row. Raise ``Http404``
    for an import of another collection, or, with ``started_by``, one another user started.
    """
    imports = FileImport.objects.filter(collection=collection, pk=import_id)
    if started_by is not None:
        imports = imports.filter(created_by=started_by)
    job = imports.first()
    if job is None:
        raise Http404("No such import in this collection.")
    if job.finished:
        return job, job.bytes_read
    published = cache.get(job.progress_key) or 0
    return job, min(int(published), job.bytes_total)


# --- label history ------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryEvent:
    """One change of a label on a pair, ready to show: who, what, when, through what.

    ``judge`` is the judge's display name (or ``Judge N`` where names are hidden; empty for
    an adjudication, which is the pair's final grade, no judge's label); ``actor`` the user
    who made the change (empty when hidden or for system changes); ``channel`` where it
    came from (browser, API, import, LLM judge run, adjudication, admin, system).
    """

    at: datetime
    action: str
    action_label: str
    judge_id: int | None
    judge: str
    judge_kind: str
    actor: str
    channel: str
    channel_label: str
    before: dict | None
    after: dict | None


def pair_history(
    *,
    collection: Collection,
    query_id: int,
    document_id: int,
    judge: Judge | None = None,
    show_names: bool = True,
) -> list[HistoryEvent]:
    """Return every history event of one pair, oldest first (one query, index ``event_pair``).

    With ``judge``, only that judge's events (what a judge may see of a pair: blind
    judging). Without ``show_names``, judges are ``Judge 1``, ``Judge 2``… in the order
    they first appear, and actors are hidden except on adjudications (whose adjudicator
    the adjudication page names anyway).
    """
    events = (
        JudgmentEvent.objects.filter(
            collection=collection, query_id=query_id, document_id=document_id
        )
        .select_related("judge", "actor")
        .order_by("at", "pk")
    )
    if judge is not None:
        events = events.filter(judge=judge)
    numbers: dict[int, int] = {}
    channels = dict(JudgmentEvent.Channel.choices)
    actions = dict(JudgmentEvent.Action.choices)
    result = []
    for event in events:
        name = ""
        if event.judge is not None:
            number = numbers.setdefault(event.judge_id, len(numbers) + 1)
            name = event.judge.name if show_names else f"Judge {number}"
        adjudication = event.channel == JudgmentEvent.Channel.ADJUDICATION
        actor = event.actor.get_username() if event.actor is not None else ""
        result.append(
            HistoryEvent(
                at=event.at,
                action=event.action,
                action_label=actions.get(event.action, event.action),
                judge_id=event.judge_id if show_names else None,
                judge=name,
                judge_kind=event.judge.kind if event.judge is not None else "",
                actor=actor if show_names or adjudication else "",
                channel=event.channel,
                channel_label=channels.get(event.channel, event.channel),
                before=event.before,
                after=event.after,
            )
        )
    return result
