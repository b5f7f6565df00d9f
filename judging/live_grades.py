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
from django.utils import timezone

from judging import aggregation
from judging.abstain import aggregate_abstain
from judging.db import insert_rows, update_values
from judging.models import Adjudication, Collection, Judge, Judgment, LiveGrade
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
) -> set[int]:
    """Recompute the live grades of the given queries (of one document only, if given).

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
    if policy.global_fit:
        return _refresh(collection_id, policy, version, wanted, {"collection_id": collection_id})
    ordered = sorted(wanted)
    changed: set[int] = set()
    # A few queries at a time, so a bulk import's memory does not grow with its size.
    for start in range(0, len(ordered), QUERY_CHUNK):
        scope: dict[str, object] = {
            "collection_id": collection_id,
            "query_id__in": ordered[start : start + QUERY_CHUNK],
        }
        if document_id is not None:
            scope["document_id"] = document_id
        changed |= _refresh(collection_id, policy, version, wanted, scope)
    return changed


def _refresh(
    collection_id: int,
    policy: aggregation.AggregationPolicy,
    version: int,
    wanted: set[int],
    scope: dict[str, object],
) -> set[int]:
    """Recompute and write the live grades of the judgments in ``scope`` (see :func:`refresh`)."""
    rows = list(
        Judgment.objects.filter(status=Status.GRADED, **scope).values_list(
            "query_id", "document_id", "grade", "judge__kind", "judge_id", "abstain_probability"
        )
    )
    adjudicated = {
        (q, d): g
        for q, d, g in Adjudication.objects.filter(revoked_at__isnull=True, **scope).values_list(
            "query_id", "document_id", "grade"
        )
    }
    # Plain tuples, not model instances: a bulk import reads hundreds of thousands.
    current = {
        (q, d): rest
        for q, d, *rest in LiveGrade.objects.filter(**scope).values_list(
            "query_id", "document_id", *CURRENT_FIELDS
        )
    }
    keys = sorted({(q, d) for q, d, *_ in rows} | adjudicated.keys())
    index = {key: i for i, key in enumerate(keys)}
    new: dict[tuple[int, int], tuple[float, int, int, bool, list[int], float | None]] = {}
    pair_index = np.fromiter((index[(q, d)] for q, d, *_ in rows), dtype=np.int64, count=len(rows))
    grades = np.fromiter((r[2] for r in rows), dtype=np.float64, count=len(rows))
    is_human = np.fromiter((r[3] == Judge.Kind.HUMAN for r in rows), dtype=bool, count=len(rows))
    judges = np.fromiter((r[4] for r in rows), dtype=np.int64, count=len(rows))
    recorded = np.fromiter(
        (np.nan if r[5] is None else r[5] for r in rows), dtype=np.float64, count=len(rows)
    )
    abstain = aggregate_abstain(pair_index, recorded, is_human, len(keys))
    pair_ids, live = policy(pair_index, grades, is_human, judge_index=judges)
    adj_pairs = np.fromiter((index[key] for key in adjudicated), dtype=np.int64)
    adj_grades = np.fromiter(adjudicated.values(), dtype=np.int64)
    pair_ids, live = aggregation.adjudicated_else(pair_ids, live, adj_pairs, adj_grades)
    used = policy.used_rows(pair_index, is_human) if rows else np.zeros(0, dtype=bool)
    humans = np.bincount(pair_index[used], weights=is_human[used], minlength=len(keys))
    totals = np.bincount(pair_index[used], minlength=len(keys))
    contributors: dict[int, list[int]] = {}
    for i, judge_id in zip(pair_index[used].tolist(), judges[used].tolist(), strict=True):
        contributors.setdefault(i, []).append(judge_id)
    humans_list, llms_list = humans.astype(int).tolist(), (totals - humans).astype(int).tolist()
    abstain_list = [None if a != a else a for a in abstain.tolist()]  # NaN: none recorded
    for i, value in zip(pair_ids.tolist(), live.tolist(), strict=True):
        key = keys[i]
        new[key] = (
            float(value),
            humans_list[i],
            llms_list[i],
            key in adjudicated,
            sorted(contributors.get(i, ())),
            abstain_list[i],
        )
    changed_queries: set[int] = set()
    gone = [key for key in current if key not in new]
    if gone:
        LiveGrade.objects.filter(pk__in=[current[key][0] for key in gone]).delete()
        changed_queries.update(key[0] for key in gone)
    changed, created = [], []
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    for key, (grade, n_humans, n_llms, is_adjudicated, judge_ids, abstain_p) in new.items():
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
                    is_adjudicated,
                    _json_ids(tuple(judge_ids)),
                    abstain_p,
                    now,
                )
            )
            changed_queries.add(key[0])
            continue
        pk, old_grade, old_abstain, old_version, *old_provenance = existing
        provenance = [n_humans, n_llms, policy.name, is_adjudicated, judge_ids]
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
                    is_adjudicated,
                    _json_ids(tuple(judge_ids)),
                    now,
                    pk,
                )
            )
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
