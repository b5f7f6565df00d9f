"""Forms of the gold pairs page."""

from __future__ import annotations

from typing import Any

from django import forms

from graded import textpolicy
from judging.forms import GRADE_CHOICES
from judging.grades import GRADE_MAX, GRADE_MIN
from judging.models import Collection, Document, Query


class GoldPairForm(forms.Form):
    """Mark one pair as gold: its query id, document id, expected grade and why."""

    qid = forms.CharField(max_length=textpolicy.MAX_ID_LENGTH, label="Query id")
    docno = forms.CharField(max_length=textpolicy.MAX_ID_LENGTH, label="Document id")
    grade = forms.TypedChoiceField(choices=GRADE_CHOICES, coerce=int, label="Expected grade")
    reason = forms.CharField(
        required=False,
        max_length=textpolicy.MAX_NOTE_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why this grade; coordinators see it, judges never do.",
    )
    pool_now = forms.BooleanField(
        required=False,
        label="Add it to the pool now",
        help_text="Unticked, a pair not pooled yet waits and enters the pool with the next "
        "pairs pooled (a run's, an import's, yours), looking like them. Ticked, it enters "
        "at once, alone: a judge watching the pool could notice it.",
    )

    def __init__(self, *args: object, collection: Collection, **kwargs: object) -> None:
        """Bind the form to the collection whose pairs it marks."""
        super().__init__(*args, **kwargs)
        self.collection = collection
        self.fields["grade"].choices = [
            (g, f"{g} – {name}") for g, name in enumerate(collection.grade_names)
        ]

    @staticmethod
    def initial_from(params: Any) -> dict[str, Any]:
        """Return the pair a *Mark as gold* link names (``?qid=…&docno=…&grade=…``).

        Where a coordinator looks at a pair (adjudication, disagreements, the pool, a
        label's history) the link opens this form filled in; only what reads as a field's
        value is taken (ids as text, the grade as a whole 0–4), the rest is left empty.
        """
        initial: dict[str, Any] = {}
        for name in ("qid", "docno"):
            value = str(params.get(name, "")).strip()
            if value and len(value) <= textpolicy.MAX_ID_LENGTH:
                initial[name] = value
        grade = str(params.get("grade", "")).strip()
        if len(grade) == 1 and grade in "0123456789" and GRADE_MIN <= int(grade) <= GRADE_MAX:
            initial["grade"] = int(grade)
        return initial

    def clean_qid(self) -> Query:
        """Return the collection's query of this id, or say it is unknown."""
        qid = self.cleaned_data["qid"].strip()
        query = Query.objects.filter(collection=self.collection, external_id=qid).first()
        if query is None:
            raise forms.ValidationError(f"No query {textpolicy.echo(qid)} in this collection.")
        return query

    def clean_docno(self) -> Document:
        """Return the collection's document of this id, or say it is unknown."""
        docno = self.cleaned_data["docno"].strip()
        document = Document.objects.filter(collection=self.collection, external_id=docno).first()
        if document is None:
            raise forms.ValidationError(f"No document {textpolicy.echo(docno)} in this collection.")
        return document


class GoldRateForm(forms.Form):
    """The share of served pairs that are gold pairs, in percent."""

    percent = forms.IntegerField(
        min_value=0,
        max_value=100,
        label="Gold pairs mixed in (% of pairs served)",
        help_text="Each judge is served the gold pairs they have not graded at this rate, "
        "blind; 0 turns mixing off. 5–10% is usual.",
    )


class QualificationForm(forms.Form):
    """The qualification bar: gold pairs a judge needs, and the share of them exact."""

    qualification_pairs = forms.IntegerField(
        min_value=0,
        max_value=1000,
        label="Gold pairs before a judge's labels count",
        help_text="0 turns qualification off: every judge's labels count.",
    )
    qualification_percent = forms.IntegerField(
        min_value=0,
        max_value=100,
        label="Exactly right among the judge's last gold pairs (%)",
        help_text="Over as many of the judge's most recent gold pairs as asked above; a "
        "judge who falls below stops counting until back at the bar.",
    )
    confirm = forms.BooleanField(
        required=False,
        label="Set it even though it leaves out most of the judgment list",
        help_text="Needed for a bar that keeps less than half of the judgment list's lines, "
        "or no judge: preview it first.",
    )
