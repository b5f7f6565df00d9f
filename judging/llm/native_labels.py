"""Map native labels of LLM judges posted over REST onto 0–4, and keep their provenance.

For an LLM judge with a native scale or a scale mapping, the ``grade`` of a posted
judgment (one, a batch, or a qrels / JSON Lines file) is a label on the judge's own scale:
it is mapped onto Graded's 0–4 grades, and the native label — with any ``raw_output`` — is
stored beside the judgment (:class:`judging.llm.models.LLMOutput`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError

from judging.lists.judgment_rows import LineError
from judging.llm import services as services_llm
from judging.llm.services import LLMGrade
from judging.models import Collection, Judge, Judgment
from judging.services import JudgmentRow, Status


def mapped_item(judge: Judge, data: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """Return a copy of one posted judgment with its grade mapped, and the native label.

    Raises ``ValidationError`` on ``grade`` for an off-scale label.
    """
    item = dict(data)
    status = item.get("status") or Status.GRADED
    if status != Status.GRADED or item.get("grade") is None:
        return item, ""
    label, grade = services_llm.native_to_grade(judge, item["grade"])
    item["grade"] = grade
    return item, label


def mapped_items(
    judge: Judge, items: Sequence[Any]
) -> tuple[list[Any], dict[int, str], list[LineError]]:
    """Map the grades of a batch; return the items, native labels by line, and line errors."""
    out: list[Any] = []
    natives: dict[int, str] = {}
    errors: list[LineError] = []
    for line, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            out.append(item)
            continue
        try:
            mapped, label = mapped_item(judge, item)
        except ValidationError as exc:
            errors.append({"line": line, "message": f"grade: {exc.message_dict['grade'][0]}"})
            out.append({**item, "grade": None, "status": Status.LATER})
            continue
        natives[line] = label
        out.append(mapped)
    return out, natives, errors


def mapped_rows(
    judge: Judge, rows: Sequence[JudgmentRow]
) -> tuple[list[JudgmentRow], dict[int, str], list[LineError]]:
    """Map the grades of parsed file rows; return rows, native labels by line, errors."""
    out: list[JudgmentRow] = []
    natives: dict[int, str] = {}
    errors: list[LineError] = []
    for row in rows:
        if row.status != Status.GRADED or row.grade is None:
            out.append(row)
            continue
        try:
            label, grade = services_llm.native_to_grade(judge, row.grade)
        except ValidationError as exc:
            errors.append({"line": row.line, "message": f"grade: {exc.message_dict['grade'][0]}"})
            continue
        natives[row.line] = label
        out.append(row._replace(grade=grade))
    return out, natives, errors


def store_outputs(
    *,
    judge: Judge,
    collection: Collection,
    rows: Sequence[JudgmentRow],
    natives: Mapping[int, str],
    raw_outputs: Mapping[int, str],
) -> None:
    """Keep the native labels and raw outputs of an LLM judge's recorded rows."""
    if judge.kind != Judge.Kind.LLM:
        return
    grades = [
        LLMGrade(
            query_external_id=row.query_external_id,
            document_external_id=row.document_external_id,
            grade=row.grade if row.grade is not None else 0,
            native_label=natives.get(row.line, ""),
            raw_output=raw_outputs.get(row.line, ""),
        )
        for row in rows
        if natives.get(row.line) or raw_outputs.get(row.line)
    ]
    services_llm.outputs_store(judge=judge, collection=collection, grades=grades)


def store_output(*, judgment: Judgment, native_label: str, raw_output: str) -> None:
    """Keep the native label and raw output of one judgment of an LLM judge."""
    if judgment.judge.kind != Judge.Kind.LLM or not (native_label or raw_output):
        return
    services_llm.outputs_store(
        judge=judgment.judge,
        collection=judgment.collection,
        grades=[
            LLMGrade(
                query_external_id=judgment.query.external_id,
                document_external_id=judgment.document.external_id,
                grade=judgment.grade if judgment.grade is not None else 0,
                native_label=native_label,
                raw_output=raw_output,
            )
        ],
    )
