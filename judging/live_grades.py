"""Keep the live judgment list current: aggregate, apply adjudications, write the difference.

Called inside the judgment services' transactions (with the collection's row lock held);
never on its own. Each live grade records its provenance: the policy, whether an
adjudication in force set it, and the judges whose grades the policy used.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable

import numpy as np
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from judging import aggregation
from judging.abstain import aggregate_abstain
from judging.db import Pairs, fetch_columns, insert_rows, of_pairs, update_values
from judging.models import Adjudication, Collection, Judge, Judgment, LiveGrade
from judging.quality import qualification
from judging.quality.models import JudgeQualification
from judging.signals import judgments_changed

Status = Judgment.Status
#: Queries whose live grades are recomputed together (bounds memory in bulk imports).
QUERY_CHUNK = 100
#: The columns of a new live grade, in the order :func:`_refresh` builds its rows.
CREATED_FIELDS = (
    "collection",
    "query",
    "document",
    "grade",
    "human_count",
    "llm_count",
    "version",
    "policy",
    "adjudicated",
    "judge_ids",
    "abstain_probability",
    "updated_at",
)
#: What :func:`_refresh` reads of a current live grade (after its query and document).
CURRENT_FIELDS = (
    "id",
    "grade",
    "abstain_probability",
    "version",
    "human_count",
    "llm_count",
    "policy",
    "adjudicated",
    "judge_ids",
)
#: What it writes of a changed one: the same, then ``updated_at`` (the row's id last).
CHANGED_FIELDS = (*CURRENT_FIELDS[1:], "updated_at")


@functools.lru_cache(maxsize=4096)
def _json_ids(judge_ids: tuple[int, ...]) -> str:
    """Return the JSON of a pair's judge ids (a bulk import repeats a few lists many times)."""
    return json.dumps(list(judge_ids))


def refresh(
    *,
    collection_id: int,
    policy_name: str,
    version: int,
    query_ids: Iterable[int],
    document_id: int | None = None,
    pairs: Iterable[Pairs] | None = None,
    counted_only: bool | None = None,
) -> set[int]:
    """Recompute the live grades of the given queries (of one document only, if given).

    ``counted_only``: leave out the labels of judges who do not count yet, because the
    collection asks for qualification (:mod:`judging.quality.qualification`; None reads
    the collection's setting). Their labels are kept, they only do not enter the live list.

    With ``pairs`` (a bulk import's written pairs, range by range, covering ``query_ids``)
    only those pairs are recomputed: the others' judgments did not change, and reading
    them would make an import's time grow with the labels its queries already hold.

    ``version`` is the collection's new judgment-list version, recorded on changed grades.
    Reads the graded judgments with their judges, applies the policy (vectorised), lets
    adjudications in force override it ("adjudicated, else <policy>"), aggregates the
    recorded abstention probabilities (:mod:`judging.abstain`), and writes only the
    difference. A policy fitted on the whole collection (Dawid–Skene) is refitted
    and every pair it moves is written; queries outside ``query_ids`` whose grades moved
    are announced with a bulk ``judgments_changed`` after commit (rescored in the
    background). Return the ids of the queries whose live grades changed.
    """
    policy = aggregation.get_policy(policy_name)
    wanted = set(query_ids)
    if counted_only is None:
        counted_only = qualification.bar(collection_id).on
    base: dict[str, object] = {"collection_id": collection_id, "counted_only": counted_only}
    if policy.global_fit:
        return _refresh(collection_id, policy, version, wanted, base)
    changed: set[int] = set()
    if pairs is not None:
        for scope_pairs in pairs:
            scope: dict[str, object] = {**base, "pairs": scope_pairs}
            changed |= _refresh(collection_id, policy, version, wanted, scope)
        return changed
    ordered = sorted(wanted)
    # A few queries at a time, so a bulk import's memory does not grow with its size.
    for start in range(0, len(ordered), QUERY_CHUNK):
        chunk = ordered[start : start + QUERY_CHUNK]
        # The range as well as the list: PostgreSQL then reads only the chunk's part of
        # the (collection, query, ...) indexes. With the list alone, a planner whose
        # statistics predate the import's rows scanned the whole collection per chunk.
        scope: dict[str, object] = {
            **base,
            "query_id__gte": chunk[0],
            "query_id__lte": chunk[-1],
            "query_id__in": chunk,
        }
        if document_id is not None:
            scope["document_id"] = document_id
        changed |= _refresh(collection_id, policy, version, wanted, scope)
    return changed


#: Scope entries that are not field lookups.
SCOPE_FLAGS = frozenset({"pairs", "counted_only"})


def _scoped(queryset: QuerySet, scope: dict[str, object]) -> QuerySet:
    """Return the rows of ``queryset`` in ``scope`` (field lookups, and maybe ``pairs``).

    ``counted_only`` is not a lookup: :func:`_graded` applies it to the labels.
    """
    lookups = {name: value for name, value in scope.items() if name not in SCOPE_FLAGS}
    queryset = queryset.filter(**lookups)
    if "pairs" in scope:
        queryset = of_pairs(queryset, scope["pairs"])  # type: ignore[arg-type]
    return queryset


def _graded(scope: dict[str, object]) -> list[np.ndarray]:
    """Return the graded judgments in ``scope`` as columns, sorted by query, document, judge.

    Columns: query, document, grade, whether the judge is human (0/1), judge, and the
    recorded abstention probability (NaN where none). On PostgreSQL packed by the server
    (:func:`judging.db.fetch_columns`): a bulk import's hundreds of thousands of judgments
    arrive without a Python tuple each.
    """
    table = connection.ops.quote_name(Judgment._meta.db_table)
    judges = connection.ops.quote_name(Judge._meta.db_table)
    where, params = ["j.collection_id = %s", "j.status = %s"], [scope["collection_id"], "graded"]
    if "query_id__gte" in scope:
        where.append("j.query_id BETWEEN %s AND %s")
        params += [scope["query_id__gte"], scope["query_id__lte"]]
    if "query_id__in" in scope:
        queries = list(scope["query_id__in"])  # type: ignore[call-overload]
        where.append(f"j.query_id IN ({', '.join(['%s'] * len(queries))})")
        params += queries
    if "document_id" in scope:
        where.append("j.document_id = %s")
        params.append(scope["document_id"])
    if "pairs" in scope:
        condition, more = scope["pairs"].condition("j")  # type: ignore[attr-defined]
        where.append(condition)
        params += more
    if scope.get("counted_only"):
        standings = connection.ops.quote_name(JudgeQualification._meta.db_table)
        where.append(
            f"j.judge_id IN (SELECT s.judge_id FROM {standings} s "
            "WHERE s.collection_id = %s AND s.counted = %s)"
        )
        params += [scope["collection_id"], True]
    columns = fetch_columns(
        fields=[
            ("j.query_id", "i"),
            ("j.document_id", "i"),
            ("j.grade", "f"),
            ("(k.kind = %s)::int", "i"),
            ("j.judge_id", "i"),
            ("COALESCE(j.abstain_probability, 'NaN')", "f"),
        ],
        source=f"FROM {table} j JOIN {judges} k ON k.id = j.judge_id WHERE {' AND '.join(where)}",
        params=[Judge.Kind.HUMAN.value, *params],
        order_by=["j.query_id", "j.document_id", "j.judge_id"],
    )
    if columns is not None:
        return columns
    labels = _scoped(Judgment.objects.filter(status=Status.GRADED), scope)
    if scope.get("counted_only"):
        labels = labels.filter(
            judge_id__in=JudgeQualification.objects.filter(
                collection_id=scope["collection_id"], counted=True
            ).values("judge_id")
        )
    rows = list(
        labels.order_by("query_id", "document_id", "judge_id").values_list(
            "query_id", "document_id", "grade", "judge__kind", "judge_id", "abstain_probability"
        )
    )
    n = len(rows)
    return [
        np.fromiter((r[0] for r in rows), dtype=np.int64, count=n),
        np.fromiter((r[1] for r in rows), dtype=np.int64, count=n),
        np.fromiter((r[2] for r in rows), dtype=np.float64, count=n),
        np.fromiter((r[3] == Judge.Kind.HUMAN for r in rows), dtype=np.int64, count=n),
        np.fromiter((r[4] for r in rows), dtype=np.int64, count=n),
        np.fromiter((np.nan if r[5] is None else r[5] for r in rows), dtype=np.float64, count=n),
    ]


def _pairs(query: np.ndarray, document: np.ndarray) -> tuple[list, list, np.ndarray]:
    """Return the distinct (query, document) pairs, sorted, and each row's pair index."""
    order = np.lexsort((document, query))
    q, d = query[order], document[order]
    first = np.ones(len(q), dtype=bool)
    first[1:] = (q[1:] != q[:-1]) | (d[1:] != d[:-1])
    inverse = np.empty(len(q), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return q[first].tolist(), d[first].tolist(), inverse


def _refresh(
    collection_id: int,
    policy: aggregation.AggregationPolicy,
    version: int,
    wanted: set[int],
    scope: dict[str, object],
) -> set[int]:
    """Recompute and write the live grades of the judgments in ``scope`` (see :func:`refresh`)."""
    query, document, grades, human, judges, recorded = _graded(scope)
    adjudications = list(
        _scoped(Adjudication.objects.filter(revoked_at__isnull=True), scope).values_list(
            "query_id", "document_id", "grade"
        )
    )
    # Plain tuples, not model instances: a bulk import reads hundreds of thousands.
    current = {
        (q, d): rest
        for q, d, *rest in _scoped(LiveGrade.objects.all(), scope).values_list(
            "query_id", "document_id", *CURRENT_FIELDS
        )
    }
    n = len(query)
    key_q, key_d, inverse = _pairs(
        np.concatenate([query, np.array([a[0] for a in adjudications], dtype=np.int64)]),
        np.concatenate([document, np.array([a[1] for a in adjudications], dtype=np.int64)]),
    )
    n_keys = len(key_q)
    pair_index, adj_pairs = inverse[:n], inverse[n:]
    is_human = human.astype(bool)
    abstain = aggregate_abstain(pair_index, recorded, is_human, n_keys)
    pair_ids, live = policy(pair_index, grades, is_human, judge_index=judges)
    adj_grades = np.array([a[2] for a in adjudications], dtype=np.int64)
    pair_ids, live = aggregation.adjudicated_else(pair_ids, live, adj_pairs, adj_grades)
    is_adjudicated = np.zeros(n_keys, dtype=bool)
    is_adjudicated[adj_pairs] = True
    used = policy.used_rows(pair_index, is_human) if n else np.zeros(0, dtype=bool)
    humans = np.bincount(pair_index[used], weights=is_human[used], minlength=n_keys)
    totals = np.bincount(pair_index[used], minlength=n_keys)
    # Each pair's contributing judges, ascending: the rows come sorted by pair and judge,
    # so a pair's judges are one slice of the used rows.
    used_judges = judges[used].tolist()
    ends = np.cumsum(totals).tolist()
    humans_list, llms_list = humans.astype(int).tolist(), (totals - humans).astype(int).tolist()
    abstain_list = [None if a != a else a for a in abstain.tolist()]  # NaN: none recorded
    adjudicated_list = is_adjudicated.tolist()
    changed_queries: set[int] = set()
    changed, created = [], []
    kept: set[tuple[int, int]] = set()
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    for i, grade in zip(pair_ids.tolist(), live.tolist(), strict=True):
        key = (key_q[i], key_d[i])
        n_humans, n_llms, adjudicated = humans_list[i], llms_list[i], adjudicated_list[i]
        judge_ids = used_judges[ends[i] - humans_list[i] - llms_list[i] : ends[i]]
        abstain_p = abstain_list[i]
        existing = current.get(key)
        if existing is None:
            created.append(
                (
                    collection_id,
                    key[0],
                    key[1],
                    grade,
                    n_humans,
                    n_llms,
                    version,
                    policy.name,
                    adjudicated,
                    _json_ids(tuple(judge_ids)),
                    abstain_p,
                    now,
                )
            )
            changed_queries.add(key[0])
            continue
        kept.add(key)
        pk, old_grade, old_abstain, old_version, *old_provenance = existing
        provenance = [n_humans, n_llms, policy.name, adjudicated, judge_ids]
        scored = (old_grade, old_abstain) != (grade, abstain_p)
        if scored or old_provenance != provenance:
            if scored:  # what runs are scored by (grade, UDCG's abstention) moved
                changed_queries.add(key[0])
            changed.append(
                (
                    grade,
                    abstain_p,
                    version if scored else old_version,
                    n_humans,
                    n_llms,
                    policy.name,
                    adjudicated,
                    _json_ids(tuple(judge_ids)),
                    now,
                    pk,
                )
            )
    gone = [key for key in current if key not in kept]
    if gone:
        LiveGrade.objects.filter(pk__in=[current[key][0] for key in gone]).delete()
        changed_queries.update(key[0] for key in gone)
    insert_rows(LiveGrade, CREATED_FIELDS, created)
    update_values(LiveGrade, CHANGED_FIELDS, changed)
    elsewhere = frozenset(changed_queries - wanted)
    if elsewhere:
        transaction.on_commit(
            lambda: judgments_changed.send(
                sender=Collection,
                collection_id=collection_id,
                query_ids=elsewhere,
                version=version,
                bulk=True,
            )
        )
    return changed_queries


def lines_if(*, collection_id: int, policy_name: str, judge_ids: set[int] | None) -> int:
    """Return how many lines the live list would have if only ``judge_ids``' labels counted.

    None: every judge's. The same aggregation as :func:`refresh` (the policy on the graded
    labels, adjudications in force on top), counted rather than written: what a
    qualification bar would leave of the list (:func:`judging.quality.selectors.
    bar_effect`). Two queries.
    """
    policy = aggregation.get_policy(policy_name)
    query, document, grades, human, judges, _recorded = _graded({"collection_id": collection_id})
    if judge_ids is not None:
        keep = np.isin(judges, np.fromiter(judge_ids, dtype=np.int64, count=len(judge_ids)))
        query, document, grades, human, judges = (
            query[keep],
            document[keep],
            grades[keep],
            human[keep],
            judges[keep],
        )
    adjudicated = set(
        Adjudication.objects.filter(
            collection_id=collection_id, revoked_at__isnull=True
        ).values_list("query_id", "document_id")
    )
    if not len(query):
        return len(adjudicated)
    key_q, key_d, pair_index = _pairs(query, document)
    pair_ids, _live = policy(pair_index, grades, human.astype(bool), judge_index=judges)
    lines = {(key_q[i], key_d[i]) for i in pair_ids.tolist()}
    return len(lines | adjudicated)
