"""Keep the progress counters (:mod:`judging.progress.models`) in step with every write.

Called by the services inside their transactions, after they took the collection's
write lock (``judging.services._lock_collection``), so writers of one collection are
serialised and no update is lost; every counter change is an ``F()`` increment as well.

The invariants, for every collection *c* and judge *j*:

- ``PoolEntry.is_open`` is the pair's state under :func:`open_condition`;
- ``PoolProgress.open_pairs`` = the entries of *c* with ``is_open``;
- ``JudgeProgress.done`` = *j*'s final judgments in *c*; ``done_open`` = those whose pair
  is pooled with ``is_open``.

A write proceeds in two steps: (1) a judgment's final-ness changed — ``done`` moves, and
``done_open`` too when its pair is stored open (the stored, not yet refreshed, state);
(2) the pairs whose state may have changed are recomputed, and for every pair that
flipped, ``open_pairs`` and the ``done_open`` of every judge with a final judgment on it
now move. Together they keep ``done_open`` = Σ open(pair) × final(judge, pair).

:func:`rebuild` recomputes everything of a collection from scratch (the management
command ``rebuild_progress``, the data migration, admin edits and bulk loaders).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)

from judging.db import Pairs, of_pairs
from judging.disagreement import disagreement_q, grades_disagree, with_grade_spread

FINAL = ("graded", "cannot_judge")
GRADED = "graded"
ID_CHUNK = 10_000  # ids per IN list


def current_models() -> SimpleNamespace:
    """Return the app's models (the data migration passes its historical ones instead)."""
    from judging.models import (
        Collection,
        Document,
        JudgeProgress,
        Judgment,
        PoolEntry,
        PoolProgress,
    )

    return SimpleNamespace(
        Collection=Collection,
        Document=Document,
        Judgment=Judgment,
        JudgeProgress=JudgeProgress,
        PoolEntry=PoolEntry,
        PoolProgress=PoolProgress,
    )


def _chunks(values: Iterable[Any], size: int = ID_CHUNK) -> Iterable[list[Any]]:
    """Yield sorted ``values`` in lists of at most ``size``."""
    items = sorted(set(values))
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --- the definition ---------------------------------------------------------------------


def pair_is_open(
    *,
    has_content: bool,
    graded_count: int,
    grades: Counter[int] | dict[int, int],
    judges_per_pair: int,
    max_judges_per_pair: int,
    disagreement_spread: int,
) -> bool:
    """Return whether a pooled pair still needs grades (pure; same as :func:`open_condition`).

    Open: the document has content, and fewer than ``judges_per_pair`` judges graded the
    pair, or it has 2 or more and fewer than ``max_judges_per_pair`` grades that disagree
    (the rule of :mod:`judging.disagreement`: they spread by ``disagreement_spread`` or
    more). ``grades`` counts the pair's grades by value.
    """
    if not has_content:
        return False
    if graded_count < judges_per_pair:
        return True
    if not 2 <= graded_count < max_judges_per_pair:
        return False
    return grades_disagree((g for g, n in grades.items() if n), disagreement_spread)


def open_condition(entries: QuerySet, m: SimpleNamespace | None = None) -> QuerySet:
    """Annotate pool ``entries`` with ``open_now``: whether each pair is open now.

    The SQL form of :func:`pair_is_open`, with the collection's settings joined, exactly
    the condition of :func:`judging.selectors._open_pairs` (less the judge's own part).
    The disagreement part (a correlated subquery) is only reached for pairs with
    enough grades in collections whose ``max_judges_per_pair`` is above ``judges_per_pair``.
    """
    m = m or current_models()
    split = (
        Q(
            graded_count__gte=2,
            graded_count__lt=F("collection__max_judges_per_pair"),
            collection__max_judges_per_pair__gt=F("collection__judges_per_pair"),
        )
        & disagreement_q()
    )
    return with_grade_spread(entries, m.Judgment, GRADED).annotate(
        open_now=Case(
            When(
                Q(document__has_content=True)
                & (Q(graded_count__lt=F("collection__judges_per_pair")) | split),
                then=Value(True),
            ),
            default=Value(False),
            output_field=BooleanField(),
        )
    )


# --- counters ----------------------------------------------------------------------------


def _add_open_pairs(collection_id: int, delta: int, m: SimpleNamespace) -> None:
    """Add ``delta`` to the collection's open-pair count (a missing row counts as 0)."""
    if not delta:
        return
    if not m.PoolProgress.objects.filter(collection_id=collection_id).update(
        open_pairs=F("open_pairs") + delta
    ):
        m.PoolProgress.objects.create(collection_id=collection_id, open_pairs=delta)


def _add_judges(collection_id: int, deltas: dict[int, tuple[int, int]], m: SimpleNamespace) -> None:
    """Add ``(done, done_open)`` deltas per judge id (a missing row counts as zeros)."""
    for judge_id, (done, done_open) in sorted(deltas.items()):
        if not done and not done_open:
            continue
        if not m.JudgeProgress.objects.filter(
            collection_id=collection_id, judge_id=judge_id
        ).update(done=F("done") + done, done_open=F("done_open") + done_open):
            m.JudgeProgress.objects.create(
                collection_id=collection_id, judge_id=judge_id, done=done, done_open=done_open
            )


@dataclass(frozen=True)
class Change:
    """One judgment write: whether the judge's label of the pair was / is final."""

    judge_id: int
    query_id: int
    document_id: int
    was_final: bool
    is_final: bool


def judgment_written(
    *,
    collection_id: int,
    judge_id: int,
    query_id: int,
    document_id: int,
    was_final: bool,
    is_final: bool,
    grades_changed: bool,
) -> None:
    """Keep the counters after one judgment write (its pair's graded count already kept).

    ``grades_changed``: the pair's set of grades changed (a grade added, removed or
    changed), so the pair may have opened or closed. One query when nothing can change,
    two or three otherwise, a few more when the pair flips.
    """
    delta = int(is_final) - int(was_final)
    if not delta and not grades_changed:
        return
    m = current_models()
    row = (
        open_condition(m.PoolEntry.objects.filter(query_id=query_id, document_id=document_id), m)
        .values_list("pk", "is_open", "open_now")
        .first()
    )
    stored_open = bool(row and row[1])
    if delta:
        _add_judges(collection_id, {judge_id: (delta, delta if stored_open else 0)}, m)
    if row is not None and grades_changed and row[1] != row[2]:
        _flip(collection_id, [(row[0], query_id, document_id, bool(row[2]))], m)


def judgments_written(
    *, collection_id: int, changes: Iterable[Change], query_ids: Iterable[int]
) -> None:
    """Keep the counters after many judgment writes, then refresh the pairs of ``query_ids``.

    Call after the pool's graded counts of ``query_ids`` were recounted.
    """
    m = current_models()
    moved = [c for c in changes if c.was_final != c.is_final]
    deltas: dict[int, tuple[int, int]] = {}
    if moved:
        open_stored: set[tuple[int, int]] = set()
        for chunk in _chunks(c.document_id for c in moved):
            open_stored.update(
                m.PoolEntry.objects.filter(
                    collection_id=collection_id, document_id__in=chunk, is_open=True
                ).values_list("query_id", "document_id")
            )
        sums: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        for c in moved:
            delta = int(c.is_final) - int(c.was_final)
            sums[c.judge_id][0] += delta
            if (c.query_id, c.document_id) in open_stored:
                sums[c.judge_id][1] += delta
        deltas = {j: (d[0], d[1]) for j, d in sums.items()}
    judges_moved(collection_id=collection_id, deltas=deltas, query_ids=query_ids)


def judges_moved(
    *,
    collection_id: int,
    deltas: dict[int, tuple[int, int]],
    query_ids: Iterable[int],
    pairs: Iterable[Pairs] | None = None,
) -> None:
    """Add ``(done, done_open)`` deltas per judge, then refresh the pairs of ``query_ids``.

    For writers that count the deltas themselves (the staged import counts them in SQL);
    call after the pool's graded counts of ``query_ids`` were recounted. With ``pairs``
    (the written pairs of those queries) only those pairs are refreshed.
    """
    m = current_models()
    if deltas:
        _add_judges(collection_id, deltas, m)
    if pairs is not None:
        refresh(collection_id=collection_id, pairs=pairs)
    else:
        refresh(collection_id=collection_id, query_ids=query_ids)


def refresh(
    *,
    collection_id: int,
    query_ids: Iterable[int] | None = None,
    document_ids: Iterable[int] | None = None,
    pairs: Iterable[Pairs] | None = None,
) -> int:
    """Recompute ``is_open`` of the collection's entries of the given queries, documents or pairs.

    Moves the counters for every pair that flipped; returns how many flipped.
    """
    m = current_models()
    scopes: Iterable[QuerySet]
    if pairs is not None:
        pairs = list(pairs)
        pool = m.PoolEntry.objects.filter(collection_id=collection_id)
        scopes = [of_pairs(pool, scope) for scope in pairs]
    else:
        field = "query_id" if query_ids is not None else "document_id"
        ids = query_ids if query_ids is not None else document_ids
        if ids is None:
            raise ValueError("give query_ids, document_ids or pairs")
        scopes = (
            m.PoolEntry.objects.filter(collection_id=collection_id, **{f"{field}__in": chunk})
            for chunk in _chunks(ids)
        )
    flipped: list[tuple[int, int, int, bool]] = []
    for entries in scopes:
        flipped.extend(
            open_condition(entries, m)
            .exclude(is_open=F("open_now"))
            .values_list("pk", "query_id", "document_id", "open_now")
        )
    _flip(collection_id, flipped, m, pairs)
    return len(flipped)


def _flip(
    collection_id: int,
    flipped: list[tuple[int, int, int, bool]],
    m: SimpleNamespace,
    pairs: Iterable[Pairs] | None = None,
) -> None:
    """Store the new state of pairs that opened or closed, and move the counters.

    ``pairs``: the flipped pairs are among these (a bulk import's written pairs), whose
    labels are read instead of every label of the flipped pairs' documents.
    """
    if not flipped:
        return
    sign = {(q, d): 1 if now else -1 for _pk, q, d, now in flipped}
    for now in (True, False):
        for chunk in _chunks(pk for pk, _q, _d, is_now in flipped if is_now == now):
            m.PoolEntry.objects.filter(pk__in=chunk).update(is_open=now)
    _add_open_pairs(collection_id, sum(sign.values()), m)
    judges: dict[int, int] = defaultdict(int)
    if len(flipped) == 1:
        _pk, q, d, _now = flipped[0]
        finals = m.Judgment.objects.filter(query_id=q, document_id=d, status__in=FINAL)
        for judge_id in finals.values_list("judge_id", flat=True):
            judges[judge_id] += sign[(q, d)]
    else:
        if pairs is not None:  # the written pairs' labels, range by range
            scopes = [
                of_pairs(m.Judgment.objects.filter(collection_id=collection_id), scope)
                for scope in pairs
            ]
        else:
            scopes = [
                m.Judgment.objects.filter(collection_id=collection_id, document_id__in=chunk)
                for chunk in _chunks(d for _pk, _q, d, _now in flipped)
            ]
        for labels in scopes:
            finals = labels.filter(status__in=FINAL).values_list(
                "judge_id", "query_id", "document_id"
            )
            for judge_id, q, d in finals:
                judges[judge_id] += sign.get((q, d), 0)
    _add_judges(collection_id, {j: (0, n) for j, n in judges.items()}, m)


def entries_open(
    *,
    collection_id: int,
    pairs: Iterable[tuple[int, int]],
    graded: dict[tuple[int, int], int],
) -> set[tuple[int, int]]:
    """Return which of the new pool ``pairs`` are open (``graded``: their graded counts).

    Reads the documents' content flags and, only where a disagreement could keep a pair
    open, the pairs' grades.
    """
    m = current_models()
    pairs = list(pairs)
    jpp, max_jpp, spread = (
        m.Collection.objects.filter(pk=collection_id)
        .values_list("judges_per_pair", "max_judges_per_pair", "disagreement_spread")
        .get()
    )
    with_content: set[int] = set()
    for chunk in _chunks(d for _q, d in pairs):
        with_content.update(
            m.Document.objects.filter(pk__in=chunk, has_content=True).values_list("pk", flat=True)
        )
    maybe_split = (
        {p for p in pairs if p[1] in with_content and 2 <= graded.get(p, 0) < max_jpp}
        if max_jpp > jpp
        else set()
    )
    histograms: dict[tuple[int, int], Counter[int]] = defaultdict(Counter)
    for chunk in _chunks(d for _q, d in maybe_split):
        rows = (
            m.Judgment.objects.filter(
                collection_id=collection_id, document_id__in=chunk, status=GRADED
            )
            .order_by()
            .values_list("query_id", "document_id", "grade")
            .annotate(n=Count("pk"))
        )
        for q, d, grade, n in rows:
            if (q, d) in maybe_split:
                histograms[(q, d)][grade] += n
    return {
        p
        for p in pairs
        if pair_is_open(
            has_content=p[1] in with_content,
            graded_count=graded.get(p, 0),
            grades=histograms.get(p, Counter()),
            judges_per_pair=jpp,
            max_judges_per_pair=max_jpp,
            disagreement_spread=spread,
        )
    }


def entries_added(*, collection_id: int, opened: set[tuple[int, int]]) -> None:
    """Count new pool entries stored open, and the final judgments already on them."""
    if not opened:
        return
    m = current_models()
    _add_open_pairs(collection_id, len(opened), m)
    judges: dict[int, int] = defaultdict(int)
    for chunk in _chunks(d for _q, d in opened):
        finals = m.Judgment.objects.filter(
            collection_id=collection_id, document_id__in=chunk, status__in=FINAL
        ).values_list("judge_id", "query_id", "document_id")
        for judge_id, q, d in finals:
            if (q, d) in opened:
                judges[judge_id] += 1
    _add_judges(collection_id, {j: (0, n) for j, n in judges.items()}, m)


def rows_deleted(
    *,
    collection_id: int,
    query_ids: Iterable[int] = (),
    document_ids: Iterable[int] = (),
) -> None:
    """Take out of the counters what deleting these queries or documents deletes.

    Call before the deletion: their pool entries (open ones leave ``open_pairs``) and
    their judgments (final ones leave ``done``, and ``done_open`` when on an open pair).
    """
    m = current_models()
    scope = Q(query_id__in=list(query_ids)) | Q(document_id__in=list(document_ids))
    entries = m.PoolEntry.objects.filter(scope, collection_id=collection_id)
    _add_open_pairs(collection_id, -entries.filter(is_open=True).count(), m)
    on_open = m.PoolEntry.objects.filter(
        query_id=OuterRef("query_id"), document_id=OuterRef("document_id"), is_open=True
    )
    rows = (
        m.Judgment.objects.filter(scope, collection_id=collection_id, status__in=FINAL)
        .annotate(on_open=Exists(on_open))
        .order_by()
        .values_list("judge_id", "on_open")
        .annotate(n=Count("pk"))
    )
    deltas: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for judge_id, is_on_open, n in rows:
        deltas[judge_id][0] -= n
        if is_on_open:
            deltas[judge_id][1] -= n
    _add_judges(collection_id, {j: (d[0], d[1]) for j, d in deltas.items()}, m)


def rebuild(*, collection_id: int, m: SimpleNamespace | None = None) -> None:
    """Recompute ``is_open`` and the counters of one collection from the judgments.

    Set-based: two updates of the entries whose state is wrong, one count of the open
    entries and one grouped count of the final judgments; the judge rows are replaced.
    """
    m = m or current_models()
    entries = m.PoolEntry.objects.filter(collection_id=collection_id)
    open_ids = open_condition(entries, m).filter(open_now=True).values("pk")
    entries.filter(is_open=True).exclude(pk__in=Subquery(open_ids)).update(is_open=False)
    entries.filter(is_open=False, pk__in=Subquery(open_ids)).update(is_open=True)
    m.PoolProgress.objects.update_or_create(
        collection_id=collection_id,
        defaults={"open_pairs": entries.filter(is_open=True).count()},
    )
    on_open = m.PoolEntry.objects.filter(
        query_id=OuterRef("query_id"), document_id=OuterRef("document_id"), is_open=True
    )
    rows = (
        m.Judgment.objects.filter(collection_id=collection_id, status__in=FINAL)
        .order_by()
        .values("judge_id")
        .annotate(
            n=Count("pk"),
            n_open=Count(Case(When(Exists(on_open), then=Value(1)), output_field=IntegerField())),
        )
        .values_list("judge_id", "n", "n_open")
    )
    m.JudgeProgress.objects.filter(collection_id=collection_id).delete()
    m.JudgeProgress.objects.bulk_create(
        [
            m.JudgeProgress(collection_id=collection_id, judge_id=j, done=n, done_open=n_open)
            for j, n, n_open in rows
        ],
        batch_size=1000,
    )
