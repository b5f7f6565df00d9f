"""Write side of RAG answers: submission (validated in one round, all or nothing)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from graded.textpolicy import cap_errors, echo
from judging import services as judging_services
from judging.models import Collection, Document, LiveGrade, PoolEntry
from metrics.answers import parse
from metrics.answers.models import Answer, AnswerRun
from metrics.models import Team
from metrics.services import submission_checks
from metrics.visibility.models import Submission

_IN_CHUNK = 5_000  # document ids per IN list


@dataclass
class AnswersRejected(Exception):
    """An answer file was refused; ``errors`` lists every problem (line/item, field)."""

    errors: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        """Return the problems, one per line."""
        return "\n".join(_error_text(e) for e in self.errors)


def _error_text(error: dict[str, Any]) -> str:
    where = [f"line {error['line']}"] if error.get("line") else []
    where += [f"item {error['item']}"] if error.get("item") else []
    where += [error["field"]] if error.get("field") else []
    return f"{', '.join(where)}: {error['message']}" if where else error["message"]


def _tag_taken(tag: str) -> dict[str, str]:
    return {"field": "tag", "message": f"Answer tag {echo(tag)} is already used here."}


def _known_documents(collection: Collection, ids: set[str]) -> set[str]:
    wanted = sorted(ids)
    known: set[str] = set()
    for start in range(0, len(wanted), _IN_CHUNK):
        known.update(
            Document.objects.filter(
                collection=collection, external_id__in=wanted[start : start + _IN_CHUNK]
            ).values_list("external_id", flat=True)
        )
    return known


@transaction.atomic
def answers_submit(
    *,
    collection: Collection,
    team: Team,
    tag: str,
    content: bytes,
    user: AbstractBaseUser | None,
    description: str = "",
) -> AnswerRun:
    """Validate and store a file of RAG answers; pool the documents they cite.

    All or nothing. Raises ``BudgetExhausted`` when the team has used its submissions of
    the last 24 hours (answers share the runs' budget, :mod:`metrics.visibility`), and
    :class:`AnswersRejected` listing every problem in one round: the tag (empty, refused
    text, already used by an answer run of the collection), the team, the file's size,
    every record problem of :mod:`metrics.answers.parse`, topics the collection lacks and
    references to documents it lacks. The returned run's ``pairs_pooled`` says how many
    (topic, cited document) pairs entered the judging pool (unjudged, not yet pooled).
    """
    checked = submission_checks(
        collection=collection,
        team=team,
        user=user,
        tag=tag,
        description=description,
        size=len(content),
        noun="An answer run",
        tag_used=lambda t: AnswerRun.objects.filter(collection=collection, tag=t).exists(),
        tag_taken=_tag_taken,
    )
    tag, counted, errors = checked.tag, checked.counted, checked.errors
    if checked.oversized:
        raise AnswersRejected(errors)
    parsed = parse.read_answers(content)
    queries = dict(collection.queries.values_list("external_id", "pk"))
    line_errors = parsed.errors + parse.id_problems(
        parsed.answers,
        topics=queries.keys(),
        known_documents=lambda ids: _known_documents(collection, ids),
    )
    if errors or line_errors:
        line_errors.sort(key=parse.sort_key)
        raise AnswersRejected(cap_errors(errors + line_errors))
    run = AnswerRun(
        collection=collection,
        team=team,
        tag=tag,
        run_id=parsed.run_id or "",
        description=description,
        submitted_by=user,
        source_format=parsed.format,
        query_count=len(parsed.answers),
    )
    try:
        with transaction.atomic():  # a savepoint: a concurrent same-tag insert fails here
            run.save()
    except IntegrityError:
        if not AnswerRun.objects.filter(collection=collection, tag=tag).exists():
            raise
        raise AnswersRejected([_tag_taken(tag)]) from None
    Submission.objects.create(
        collection=collection,
        team_id=team.pk,
        run=None,
        tag=f"answers:{tag}"[:100],
        submitted_by=user,
        submitted_at=run.submitted_at or timezone.now(),
        counted=counted,
    )
    Answer.objects.bulk_create(
        Answer(
            answer_run=run,
            query_id=queries[a.topic_id],
            references=list(a.references),
            sentences=[{"text": s.text, "citations": list(s.citations)} for s in a.sentences],
            length=a.length,
        )
        for a in parsed.answers
    )
    run.pairs_pooled = _pool_cited(collection, parsed.answers, queries)
    return run


def _pool_cited(
    collection: Collection, answers: Iterable[parse.ParsedAnswer], queries: dict[str, int]
) -> int:
    """Add each (topic, cited document) pair without a live grade to the pool."""
    cited = {
        (queries[a.topic_id], a.references[c])
        for a in answers
        for s in a.sentences
        for c in s.citations
    }
    if not cited:
        return 0
    docs = dict(
        Document.objects.filter(
            collection=collection, external_id__in=sorted({d for _, d in cited})
        ).values_list("external_id", "pk")
    )
    pairs = {(q, docs[d]) for q, d in cited}
    judged = set(
        LiveGrade.objects.filter(
            collection=collection,
            query_id__in={q for q, _ in pairs},
            document_id__in={d for _, d in pairs},
        ).values_list("query_id", "document_id")
    )
    return judging_services.pool_add_ids(
        collection=collection, pairs=pairs - judged, source=PoolEntry.Source.RUN
    )
