"""Forms of the guidelines page: change the guidelines, or one query's instructions."""

from __future__ import annotations

from django import forms

from judging.guidelines.services import MAX_GUIDELINES_LENGTH, MAX_VERSION_NOTE_LENGTH
from judging.models import Collection, Query


class GuidelinesForm(forms.Form):
    """The collection's guidelines (Markdown) and why they change."""

    guidelines = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 12}),
        required=False,
        max_length=MAX_GUIDELINES_LENGTH,
        strip=False,
        help_text="Markdown, shown on every judging card.",
    )
    note = forms.CharField(
        required=False,
        max_length=MAX_VERSION_NOTE_LENGTH,
        label="What changed and why",
        help_text="Shown beside the version, e.g. “Clarified when a buying guide counts”.",
    )


class QueryInstructionsForm(forms.Form):
    """One query's description and narrative, and why they change."""

    query = forms.CharField(max_length=500, label="Query id")
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        max_length=MAX_GUIDELINES_LENGTH,
        strip=False,
    )
    narrative = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
        max_length=MAX_GUIDELINES_LENGTH,
        strip=False,
    )
    note = forms.CharField(
        required=False, max_length=MAX_VERSION_NOTE_LENGTH, label="What changed and why"
    )

    def __init__(self, *args: object, collection: Collection, **kwargs: object) -> None:
        """Bind the form to the collection whose queries it may change."""
        super().__init__(*args, **kwargs)
        self.collection = collection

    def clean_query(self) -> Query:
        """Return the collection's query of this id, or say which id is unknown."""
        external_id = self.cleaned_data["query"].strip()
        query = Query.objects.filter(collection=self.collection, external_id=external_id).first()
        if query is None:
            raise forms.ValidationError(f"No query {external_id!r} in this collection.")
        return query
