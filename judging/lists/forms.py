"""Forms of the collection-filling and judgment-list pages."""

from __future__ import annotations

from django import forms

from judging.lists.formats import collections as collection_formats
from judging.lists.formats import judgments as judgment_formats
from judging.models import Judge

AUTO = ""


class CollectionCreateForm(forms.Form):
    """A new collection; its creator becomes the coordinator."""

    name = forms.CharField(max_length=200, label="Name")
    slug = forms.SlugField(
        max_length=100, label="Short name", help_text="Used in addresses and by scripts."
    )
    guidelines = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="Instructions for judges (Markdown), shown on every card.",
    )
    judges_per_pair = forms.IntegerField(min_value=1, max_value=100, initial=1)


class CollectionImportForm(forms.Form):
    """Topic, document and judgment files for a collection; any may be left out."""

    topics = forms.FileField(
        required=False,
        label="Topics",
        help_text="TREC topic file (<top><num>…), JSON Lines {qid, text, description, "
        "narrative} or TSV qid<TAB>text.",
    )
    topics_format = forms.ChoiceField(
        required=False,
        choices=[(AUTO, "Detect"), *((f, f) for f in collection_formats.TOPIC_FORMATS)],
        label="Topics format",
    )
    documents = forms.FileField(
        required=False,
        label="Documents",
        help_text="JSON Lines {docno, title, body, url, …} or TSV docno<TAB>text.",
    )
    documents_format = forms.ChoiceField(
        required=False,
        choices=[(AUTO, "Detect"), *((f, f) for f in collection_formats.DOCUMENT_FORMATS)],
        label="Documents format",
    )
    judgments = forms.FileField(
        required=False,
        label="Judgments",
        help_text="qrels, csv (query,docid,rating), jsonl, json or ranklib.",
    )
    judgments_format = forms.ChoiceField(
        required=False,
        choices=[(AUTO, "From the file name"), *((f, f) for f in judgment_formats.FORMATS)],
        label="Judgments format",
    )
    judge_name = forms.CharField(
        required=False,
        max_length=100,
        label="Whose judgments",
        help_text="An imported judge, created on first use (e.g. TREC assessors).",
    )
    judge_kind = forms.ChoiceField(choices=Judge.Kind.choices, initial=Judge.Kind.HUMAN)
    scale = forms.CharField(
        required=False,
        max_length=200,
        label="Grade scale",
        help_text="When not 0–4: a range such as 0-3 or 1-5, or a table such as 0=0,1=2,2=4.",
    )
    dry_run = forms.BooleanField(
        required=False, label="Dry run", help_text="Check and count only; write nothing."
    )

    def clean(self) -> dict:
        """Require at least one file, and a judge name with a judgments file."""
        data = super().clean()
        if not any(data.get(name) for name in ("topics", "documents", "judgments")):
            raise forms.ValidationError("Choose at least one file.")
        if data.get("judgments") and not (data.get("judge_name") or "").strip():
            self.add_error("judge_name", "Say whose judgments these are.")
        return data
