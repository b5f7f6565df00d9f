"""Read side of RAG answers: which answer runs a viewer sees, and one run's answers."""

from __future__ import annotations

from django.db.models import QuerySet

from judging.models import Collection
from metrics.answers.models import Answer, AnswerRun
from metrics.selectors import Viewer


def visible_answer_runs(*, collection: Collection, who: Viewer) -> QuerySet[AnswerRun]:
    """Return the answer runs ``who`` may see, as for ranked runs: all, or own team's."""
    runs = AnswerRun.objects.filter(collection=collection).select_related("team")
    if who.sees_all_runs:
        return runs
    if not who.team_ids:
        return runs.none()
    return runs.filter(team_id__in=who.team_ids)


def answers_of(*, run: AnswerRun) -> QuerySet[Answer]:
    """Return the run's answers with their query ids, in query order (one query)."""
    return (
        Answer.objects.filter(answer_run=run)
        .select_related("query")
        .only("query__external_id", "references", "sentences", "length", "answer_run_id")
        .order_by("query__external_id")
    )
