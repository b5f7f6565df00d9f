"""Read side of judgment-list exports: filtered rows streamed from the database.

Rows come sorted by qid, then docno, in code-point order (``COLLATE "C"`` on PostgreSQL,
SQLite's binary order), over ``.iterator(chunk_size=...)`` — a server-side cursor on
PostgreSQL — so an export of any size holds one chunk in memory. The text formats live in
:mod:`judging.lists.formats.judgments`.
"""

from __future__ import annotations

import hashlib
import heapq
import importlib.metadata
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Collate
from django.utils import timezone

from config.params import MAX_BIGINT, whole_param
from judging.lists.formats import judgments as fmt
from judging.models import (
    Collection,
    Judge,
    Judgment,
    LiveGrade,
    Membership,
    PoolEntry,
    Query,
)

CHUNK_SIZE = 5000
Role = Membership.Role
#: The grade of a pooled pair nobody has graded yet, in an export that asks for them.
UNJUDGED_GRADE = -1


#: ``provenance`` of a live export: every live grade, or only those a human (or an
#: adjudicator) gave; pairs graded by LLM judges alone are left out.
PROVENANCES = ("all", "human")


@dataclass(frozen=True)
class ExportSpec:
    """What to export: the format, aggregated or raw labels, and the filters."""

    format: str = "qrels"
    raw: bool = False
    query: str | None = None
    judge: int | None = None
    kind: str | None = None
    since_version: int | None = None
    min_judges: int | None = None
    provenance: str = "all"
    unjudged: bool = False
    metadata: bool = False

    def key(self) -> str:
        """Return a short stable digest of the spec (part of the ETag)."""
        text = repr(sorted(asdict(self).items()))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _whole(params: Mapping[str, str], name: str, minimum: int) -> int | None:
    """Read a whole-number parameter of at least ``minimum``; None when absent."""
    return whole_param(params, name, minimum=minimum, maximum=MAX_BIGINT)


def export_spec(params: Mapping[str, str]) -> ExportSpec:
    """Read an :class:`ExportSpec` from query parameters; ``ValidationError`` names the field."""
    format_name = (params.get("format") or "qrels").strip().lower()
    labels = (params.get("labels") or "live").strip().lower()
    if labels not in ("live", "raw"):
        raise ValidationError({"labels": "Use live (the aggregated list) or raw."})
    raw = labels == "raw"
    allowed = fmt.RAW_FORMATS if raw else fmt.FORMATS
    if format_name not in allowed:
        what = "Raw labels come" if raw else "The judgment list comes"
        raise ValidationError({"format": f"{what} as {', '.join(allowed)}."})
    kind = (params.get("kind") or "").strip().lower() or None
    if kind is not None and kind not in Judge.Kind.values:
        raise ValidationError({"kind": f"Use one of {', '.join(Judge.Kind.values)}."})
    provenance = (params.get("provenance") or "all").strip().lower()
    if provenance not in PROVENANCES:
        raise ValidationError(
            {"provenance": "Use all (human and LLM-filled grades) or human (human only)."}
        )
    query = (params.get("query") or "").strip() or None
    if query is not None and len(query) > 100:
        raise ValidationError({"query": "A query id has at most 100 characters."})
    spec = ExportSpec(
        format=format_name,
        raw=raw,
        query=query,
        judge=_whole(params, "judge", 1),
        kind=kind,
        since_version=_whole(params, "since_version", 0),
        min_judges=_whole(params, "min_judges", 1),
        provenance=provenance,
        unjudged=_flag(params, "unjudged"),
        metadata=_flag(params, "metadata"),
    )
    if spec.unjudged:
        narrowing = [
            name
            for name in ("judge", "kind", "since_version", "min_judges")
            if getattr(spec, name) is not None
        ]
        if raw or narrowing or provenance != "all":
            raise ValidationError(
                {
                    "unjudged": "Unjudged pairs come with the whole live list (or one query), "
                    "not with raw labels or the judge, kind, since_version, min_judges and "
                    "provenance filters."
                }
            )
    if spec.metadata and format_name not in fmt.COMMENT_FORMATS:
        raise ValidationError(
            {"metadata": f"A provenance comment fits only {', '.join(fmt.COMMENT_FORMATS)}."}
        )
    return spec


def _flag(params: Mapping[str, str], name: str) -> bool:
    """Read a yes/no parameter (1/true/yes/on or 0/false/no/off; absent: no)."""
    value = (params.get(name) or "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValidationError({name: "Use 1 or 0."})


def may_export(*, collection: Collection, roles: set[str], raw: bool) -> str | None:
    """Return why ``roles`` may not export (a message), or None when they may.

    Coordinators may export everything. Team members may export the aggregated list once
    the coordinator publishes it (``judgments_published``). Judges never may: judging is
    blind, and a judge who also holds another role is still a judge. Raw labels (judges'
    names and notes) are for coordinators only.
    """
    if Role.COORDINATOR in roles:
        return None
    if Role.JUDGE in roles:
        return "Judges cannot download judgment lists: judging is blind."
    if raw:
        return "Raw labels (every judge's grade and note) are for coordinators only."
    if Role.TEAM in roles and collection.judgments_published:
        return None
    return "The judgment list is not published to teams yet; ask the coordinator."


def _ordered(queryset: QuerySet, *fields: str) -> QuerySet:
    """Order by ``fields`` in code-point order whatever the database's collation."""
    if connection.vendor == "postgresql":
        return queryset.order_by(*(Collate(F(f), "C") for f in fields))
    return queryset.order_by(*fields)


def _live_queryset(collection: Collection, spec: ExportSpec) -> QuerySet[LiveGrade]:
    """Return the live grades selected by ``spec``'s filters."""
    queryset = LiveGrade.objects.filter(collection=collection)
    if spec.query is not None:
        queryset = queryset.filter(query__external_id=spec.query)
    if spec.since_version is not None:
        queryset = queryset.filter(version__gt=spec.since_version)
    if spec.min_judges is not None:
        queryset = queryset.filter(human_count__gte=spec.min_judges - F("llm_count"))
    if spec.provenance == "human":  # no pair whose grade only LLM judges gave
        queryset = queryset.filter(Q(human_count__gt=0) | Q(adjudicated=True))
    if spec.kind == Judge.Kind.HUMAN:
        queryset = queryset.filter(human_count__gt=0)
    elif spec.kind == Judge.Kind.LLM:
        queryset = queryset.filter(llm_count__gt=0)
    if spec.judge is not None:
        queryset = queryset.filter(
            Exists(
                Judgment.objects.filter(
                    judge_id=spec.judge,
                    query_id=OuterRef("query_id"),
                    document_id=OuterRef("document_id"),
                    status=Judgment.Status.GRADED,
                )
            )
        )
    return queryset


def _tuples(*querysets: QuerySet) -> Iterator[tuple]:
    """Yield the rows of ``values_list`` querysets as plain tuples, a chunk at a time.

    Runs each queryset's SQL on Django's chunked cursor (a server-side cursor on
    PostgreSQL) inside one transaction, so the rows come from one snapshot as they are
    read (no ``WITH HOLD`` copy of the whole result) and, on PostgreSQL, without JIT
    compilation (which costs more than it saves on this plain sorted join). Skips the
    ORM's per-row machinery, which costs more than the query itself on a million rows:
    only for fields the database returns as Python needs them (text, numbers). Several
    querysets, each sorted by its first two columns, are merged in that order.
    """
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as settings:
                settings.execute("SET LOCAL jit = off")
        streams = [_fetched(queryset) for queryset in querysets]
        if len(streams) == 1:
            yield from streams[0]
        else:  # code-point order in the database ("C"/binary) is Python's str order
            yield from heapq.merge(*streams, key=lambda row: (row[0], row[1]))


def _fetched(queryset: QuerySet) -> Iterator[tuple]:
    """Yield a queryset's rows from a chunked cursor (inside the caller's transaction)."""
    sql, params = queryset.query.sql_with_params()
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(CHUNK_SIZE):
            yield from rows


def live_rows(*, collection: Collection, spec: ExportSpec) -> Iterator[fmt.LiveRow]:
    """Yield the selected pairs of the live judgment list, sorted by qid then docno.

    With ``spec.unjudged`` the pooled pairs without a live grade come too, with grade
    :data:`UNJUDGED_GRADE` (trec_eval reads a negative grade as "pooled, not judged").
    """
    fields = ["query__external_id", "document__external_id", "grade", "human_count", "llm_count"]
    if spec.format == "csv":
        fields.append("query__text")
    queryset = _ordered(
        _live_queryset(collection, spec), "query__external_id", "document__external_id"
    ).values_list(*fields)
    if not spec.unjudged:
        return _tuples(queryset)  # tuples in LiveRow's field order
    pool = PoolEntry.objects.filter(collection=collection).exclude(
        Exists(
            LiveGrade.objects.filter(
                query_id=OuterRef("query_id"), document_id=OuterRef("document_id")
            )
        )
    )
    if spec.query is not None:
        pool = pool.filter(query__external_id=spec.query)
    extra = ["query__text"] if spec.format == "csv" else []
    pooled = _ordered(pool, "query__external_id", "document__external_id").values_list(
        "query__external_id",
        "document__external_id",
        Value(UNJUDGED_GRADE),
        Value(0),
        Value(0),
        *extra,
    )
    return _tuples(queryset, pooled)


def _labels_queryset(collection: Collection, spec: ExportSpec) -> QuerySet[Judgment]:
    """Return the judgments selected by ``spec``'s filters."""
    queryset = Judgment.objects.filter(collection=collection)
    if spec.query is not None:
        queryset = queryset.filter(query__external_id=spec.query)
    if spec.judge is not None:
        queryset = queryset.filter(judge_id=spec.judge)
    if spec.kind is not None:
        queryset = queryset.filter(judge__kind=spec.kind)
    if spec.provenance == "human":
        queryset = queryset.filter(judge__kind=Judge.Kind.HUMAN)
    if spec.since_version is not None or spec.min_judges is not None:
        live = LiveGrade.objects.filter(
            query_id=OuterRef("query_id"), document_id=OuterRef("document_id")
        )
        if spec.since_version is not None:
            live = live.filter(version__gt=spec.since_version)
        if spec.min_judges is not None:
            live = live.filter(human_count__gte=spec.min_judges - F("llm_count"))
        queryset = queryset.filter(Exists(live))
    return queryset


def label_rows(*, collection: Collection, spec: ExportSpec) -> Iterator[fmt.LabelRow]:
    """Yield every selected judge's current label, sorted by qid, docno, then judge id."""
    queryset = _ordered(
        _labels_queryset(collection, spec), "query__external_id", "document__external_id"
    )
    queryset = queryset.order_by(*queryset.query.order_by, "judge_id").values_list(
        "query__external_id",
        "document__external_id",
        "judge_id",
        "judge__name",
        "judge__kind",
        "status",
        "grade",
        "note",
        "seconds",
        "updated_at",
        "query__text",
        "judge__user__email",
        "evidence",
        "guidelines_version",
        "judge_version",
    )
    rows = queryset.iterator(chunk_size=CHUNK_SIZE)
    for *label, updated, text, email, spans, guidelines, judge_version in rows:
        # qid, docno, judge id, name, kind, status, grade, note, seconds as selected above
        yield fmt.LabelRow(
            *label,
            updated.isoformat().replace("+00:00", "Z"),
            text,
            email or "",
            spans,
            guidelines,
            judge_version or "",
        )


def label_judges(*, collection: Collection, spec: ExportSpec) -> list[tuple[int, str]]:
    """Return (id, name) of the judges with a grade among the selected labels, by id."""
    graded = _labels_queryset(collection, spec).filter(grade__isnull=False)
    return list(graded.values_list("judge_id", "judge__name").distinct().order_by("judge_id"))


def qid_numbers(*, collection: Collection) -> dict[str, int]:
    """Return the RankLib number of every query of the collection (see the formats doc)."""
    pairs = Query.objects.filter(collection=collection).values_list("external_id", "pk")
    return fmt.ranklib_numbers(pairs.iterator(chunk_size=CHUNK_SIZE))


def provenance(*, collection: Collection, spec: ExportSpec, version: int) -> dict[str, Any]:
    """Return where an export comes from (ir_metadata style): collection, list, policy, date."""
    return {
        "collection": collection.slug,
        "collection_name": collection.name,
        "judgment_list_version": version,
        "labels": "raw" if spec.raw else "live",
        "aggregation_policy": collection.aggregation_policy,
        "provenance": spec.provenance,
        "filters": {
            name: getattr(spec, name)
            for name in ("query", "judge", "kind", "since_version", "min_judges")
            if getattr(spec, name) is not None
        },
        "unjudged": UNJUDGED_GRADE if spec.unjudged else None,
        "exported_at": timezone.now().isoformat(timespec="seconds").replace("+00:00", "Z"),
        "software": f"Graded {graded_version()}",
    }


def graded_version() -> str:
    """Return the installed Graded's version (``unknown`` when not installed)."""
    try:
        return importlib.metadata.version("graded")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def export_lines(
    *, collection: Collection, spec: ExportSpec, version: int | None = None
) -> Iterator[str]:
    """Yield the text lines of the export ``spec`` describes.

    With ``spec.metadata`` the first line is a provenance comment
    (:func:`judging.lists.formats.judgments.metadata_comment`).
    """
    if spec.metadata:
        current = collection.judgments_version if version is None else version
        yield fmt.metadata_comment(provenance(collection=collection, spec=spec, version=current))
    if spec.raw:
        judges = (
            label_judges(collection=collection, spec=spec) if spec.format == "quepid_csv" else ()
        )
        yield from fmt.write_labels(
            spec.format,
            label_rows(collection=collection, spec=spec),
            name=collection.name,
            grade_names=list(collection.grade_names),
            judges=judges,
        )
        return
    numbers = qid_numbers(collection=collection) if spec.format == "ranklib" else None
    yield from fmt.write_live(
        spec.format, live_rows(collection=collection, spec=spec), qid_numbers=numbers
    )


def export_filename(*, collection: Collection, spec: ExportSpec, version: int) -> str:
    """Return ``<slug>-v<version>[-raw][-<filter>…].<ext>``: one name per kind of export.

    Every choice that changes the content is in the name (issue 34, item 6: three
    different qrels exports used to download under one name), in a fixed order:
    ``-raw``, ``-<provenance>`` (human, llm, …), ``-with-unjudged``, ``-with-metadata``,
    ``-q<query>``, ``-judge<id>``, ``-<kind>``, ``-since<version>``, ``-min<judges>judges``.
    """
    parts = [f"{collection.slug}-v{version}"]
    if spec.raw:
        parts.append("raw")
    if spec.provenance and spec.provenance != "all":
        parts.append(spec.provenance)
    if spec.unjudged:
        parts.append("with-unjudged")
    if spec.metadata:
        parts.append("with-metadata")
    if spec.query:
        parts.append(f"q{spec.query}")
    if spec.judge is not None:
        parts.append(f"judge{spec.judge}")
    if spec.kind:
        parts.append(spec.kind)
    if spec.since_version is not None:
        parts.append(f"since{spec.since_version}")
    if spec.min_judges is not None:
        parts.append(f"min{spec.min_judges}judges")
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(parts))
    return f"{stem}.{fmt.EXTENSIONS[spec.format]}"


def export_etag(*, collection: Collection, spec: ExportSpec, version: int) -> str:
    """Return the (weak) ETag of an export at a judgment-list version."""
    return f'W/"{collection.pk}-v{version}-{spec.key()}"'
