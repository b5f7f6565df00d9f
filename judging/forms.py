"""Forms of the judging pages: they validate input; the services do the writing."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from graded import textpolicy
from judging import evidence
from judging.lists import importers
from judging.models import GRADE_MAX, GRADE_MIN, Collection, Judgment
from judging.services import KEEP

Status = Judgment.Status
GRADE_CHOICES = [(g, str(g)) for g in range(GRADE_MIN, GRADE_MAX + 1)]
NOTE_MAX_LENGTH = textpolicy.MAX_NOTE_LENGTH
PAIRS_MAX_BYTES = 5 * 1024 * 1024


def add_service_errors(form: forms.Form, error: ValidationError) -> None:
    """Attach a service's ``ValidationError`` to the form, per field where the form has it."""
    if hasattr(error, "error_dict"):
        for field, messages in error.message_dict.items():
            form.add_error(field if field in form.fields else None, messages)
    else:
        form.add_error(None, error.messages)


class JudgmentForm(forms.Form):
    """One label from the judging card: a grade, or the status "can't judge" or "later"."""

    grade = forms.TypedChoiceField(
        choices=GRADE_CHOICES, coerce=int, required=False, empty_value=None, label="Grade"
    )
    status = forms.ChoiceField(
        choices=[("", "—"), (Status.CANNOT_JUDGE, "Can't judge"), (Status.LATER, "Later")],
        required=False,
        label="Status",
    )
    note = forms.CharField(
        required=False,
        max_length=NOTE_MAX_LENGTH,
        label="Note",
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    seconds = forms.FloatField(required=False, min_value=0, label="Seconds")
    evidence = forms.CharField(
        required=False,
        label="Evidence",
        widget=forms.HiddenInput,
        help_text="Set by the card: the evidence spans as JSON (judging.evidence); left out "
        "when the card has none to say (the label's spans stay).",
    )
    llm_shown = forms.TypedChoiceField(
        choices=[("", "—"), ("0", "blind"), ("1", "assisted")],
        coerce=lambda v: v == "1",
        required=False,
        empty_value=None,
        label="LLM grade shown",
        help_text="Set by the card: whether it showed an LLM grade of the pair.",
    )

    def clean_evidence(self) -> Any:
        """Return the spans given (shape-checked), or ``services.KEEP`` when not sent."""
        if "evidence" not in self.data:
            return KEEP
        raw = self.cleaned_data.get("evidence") or "[]"
        try:
            value = textpolicy.loads_json(raw)
        except textpolicy.TextRefused as exc:
            raise ValidationError(f"The spans are not readable: {exc.message}.") from None
        try:
            spans = evidence.spans_from_value(value)
        except ValidationError as exc:
            raise ValidationError(exc.message_dict["evidence"]) from None
        return [span.as_dict() for span in spans or ()]

    def clean(self) -> dict[str, Any]:
        """Require exactly one of a grade or a status."""
        data = super().clean()
        if "grade" in self.errors or "status" in self.errors:
            return data
        grade, status = data.get("grade"), data.get("status")
        if grade is not None and status:
            self.add_error("status", "Give a grade or a status, not both.")
        elif grade is None and not status:
            self.add_error("grade", "Choose a grade from 0 to 4, “Can't judge” or “Later”.")
        return data

    def label(self, previous: Judgment | None = None) -> dict[str, Any]:
        """Return the keyword arguments for ``services.judgment_record``.

        Against the judge's ``previous`` judgment of the pair: time spent adds up over
        visits, an unchanged label keeps its time (so history gets no empty change), and
        fields the card does not show are kept.
        """
        data = self.cleaned_data
        label = {
            "grade": data["grade"],
            "status": data["status"] or Status.GRADED,
            "note": data["note"],
            "seconds": data["seconds"],
            "evidence": data.get("evidence", KEEP),
        }
        if previous is not None:
            label["abstain_probability"] = previous.abstain_probability
            unchanged = (previous.grade, previous.status, previous.note) == (
                label["grade"],
                label["status"],
                label["note"],
            )
            if unchanged or label["seconds"] is None:
                label["seconds"] = previous.seconds
            elif previous.seconds:
                label["seconds"] += previous.seconds
        return label


class JudgmentUpdateForm(forms.Form):
    """Change one of the judge's own judgments from the judgment list."""

    status = forms.ChoiceField(choices=Status.choices, label="Status", widget=forms.RadioSelect)
    grade = forms.TypedChoiceField(
        choices=GRADE_CHOICES,
        coerce=int,
        required=False,
        empty_value=None,
        label="Grade",
        widget=forms.RadioSelect,
        help_text="Only for the status “Graded”.",
    )
    note = forms.CharField(
        required=False,
        max_length=NOTE_MAX_LENGTH,
        label="Note",
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    def __init__(self, *args: Any, collection: Collection, **kwargs: Any) -> None:
        """Label the grade choices with the collection's grade names."""
        super().__init__(*args, **kwargs)
        self.fields["grade"].choices = [(g, f"{g} · {name}") for g, name in collection.grade_scale]

    def clean(self) -> dict[str, Any]:
        """Require a grade for "graded"; drop it for the other statuses."""
        data = super().clean()
        if data.get("status") == Status.GRADED:
            if data.get("grade") is None and "grade" not in self.errors:
                self.add_error("grade", "A graded judgment needs a grade from 0 to 4.")
        elif "status" in data:
            data["grade"] = None
        return data


class JudgmentFilterForm(forms.Form):
    """Filters of the judge's judgment list (GET)."""

    status = forms.ChoiceField(
        choices=[("", "Any status"), *Status.choices], required=False, label="Status"
    )
    grade = forms.TypedChoiceField(
        choices=[("", "Any grade"), *GRADE_CHOICES],
        coerce=int,
        required=False,
        empty_value=None,
        label="Grade",
    )
    query = forms.CharField(required=False, max_length=100, label="Query id")

    def __init__(self, *args: Any, collection: Collection, **kwargs: Any) -> None:
        """Label the grade choices with the collection's grade names."""
        super().__init__(*args, **kwargs)
        self.fields["grade"].choices = [
            ("", "Any grade"),
            *((g, f"{g} · {name}") for g, name in collection.grade_scale),
        ]

    def filters(self) -> dict[str, Any]:
        """Return the valid filters as keyword arguments of ``judgments_of_judge``."""
        data = self.cleaned_data if self.is_valid() else {}
        return {
            "status": data.get("status") or None,
            "grade": data.get("grade"),
            "query_external_id": (data.get("query") or "").strip() or None,
        }


class PoolEntryCreateForm(forms.Form):
    """Pairs to add to a collection's pool: pasted lines or an uploaded text file."""

    pairs = forms.CharField(
        required=False,
        label="Pairs",
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false"}),
        help_text="One pair per line: query id, white space, document id. "
        "Lines starting with # are ignored.",
    )
    file = forms.FileField(
        required=False,
        label="…or a file",
        help_text="A UTF-8 text file with the same lines.",
        # htmx keeps the chosen file when the page comes back with errors (hx-preserve).
        widget=forms.ClearableFileInput(attrs={"hx-preserve": "true"}),
    )

    def clean(self) -> dict[str, Any]:
        """Read exactly one source and parse it into ``rows``."""
        data = super().clean()
        text, upload = data.get("pairs") or "", data.get("file")
        if upload is not None and text.strip():
            raise ValidationError(
                "Paste pairs or upload a file, not both (line numbers would be ambiguous)."
            )
        if upload is not None:
            if upload.size > PAIRS_MAX_BYTES:
                self.add_error("file", "The file is larger than 5 MB.")
                return data
            try:
                text = textpolicy.decode_utf8(upload.read())
            except textpolicy.TextRefused as refused:
                self.add_error("file", f"Line {refused.line or 1}: {refused.message}.")
                return data
        try:
            rows, line_errors = importers.parse_pairs_collecting(text)
        except ValidationError as error:
            self.add_error("file" if upload is not None else "pairs", error)
            return data
        if not rows and not line_errors:
            self.add_error("pairs", "Give at least one “query-id document-id” line.")
        # Malformed lines are reported by the service together with unknown ids.
        data["rows"] = rows
        data["line_errors"] = line_errors
        return data


DOCUMENTS_MAX_BYTES = 50 * 1024 * 1024


class DocumentImportForm(forms.Form):
    """A JSON Lines file of documents to create or fill in."""

    file = forms.FileField(
        label="Documents file",
        help_text='JSON Lines, one document per line: {"docno": ..., "title": ..., '
        '"body": ..., "url": ...}; other keys are kept as extra fields.',
    )

    def clean(self) -> dict[str, Any]:
        """Parse the file into ``rows``, naming every bad line."""
        data = super().clean()
        upload = data.get("file")
        if upload is None:
            return data
        if upload.size > DOCUMENTS_MAX_BYTES:
            self.add_error(
                "file", "The file is larger than 50 MB; use manage.py import_collection."
            )
            return data
        try:
            data["rows"] = importers.parse_documents(upload.read(), name=upload.name)
        except ValidationError as error:
            self.add_error("file", error)
            return data
        if not data["rows"]:
            self.add_error("file", "The file holds no documents.")
        return data
