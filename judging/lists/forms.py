"""Forms of the collection-filling and judgment-list pages."""

from __future__ import annotations

from typing import Any

from django import forms

from judging.imports.services import PAGE_ROLES
from judging.lists.formats import collections as collection_formats
from judging.lists.formats import judgments as judgment_formats
from judging.models import Collection, Judge

AUTO = ""


#: What the create page says of the purposes' trade-off (one sentence).
PURPOSE_TRADE_OFF = (
    "Live scores let a team infer grades that are not published yet (a run's score moves "
    "with each grade), which is fine when the teams are your colleagues and unfair in a "
    "competition; either way every setting can be changed later under Settings › Visibility."
)


class CollectionCreateForm(forms.Form):
    """A new collection; its creator becomes the coordinator."""

    name = forms.CharField(max_length=200, label="Name")
    slug = forms.SlugField(
        required=False,
        max_length=100,
        label="Short name",
        help_text="Used in addresses and by scripts; made from the name unless you change "
        "it (letters, digits, hyphens and underscores).",
        widget=forms.TextInput(attrs={"data-slug-from": "name", "autocomplete": "off"}),
    )
    purpose = forms.ChoiceField(
        choices=Collection.Purpose.choices,
        widget=forms.RadioSelect,
        label="What is it for?",
        help_text=PURPOSE_TRADE_OFF,
        error_messages={"required": "Choose what the collection is for."},
    )
    guidelines = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="Instructions for judges (Markdown), shown on every card.",
    )
    judges_per_pair = forms.IntegerField(min_value=1, max_value=100, initial=1)


#: The import page's optional fields, folded away (the files' formats are detected).
ADVANCED_FIELDS = ("topics_format", "documents_format", "judgments_format", "judge_kind", "scale")


class CollectionImportForm(forms.Form):
    """Topic, document and judgment files for a collection; any may be left out."""

    topics = forms.FileField(
        required=False,
        label="Topics",
        help_text="TREC topic file (<top><num>…), JSON Lines {qid, text, description, "
        "narrative}, TSV qid<TAB>text, or CSV with a header (qid,text,description,narrative).",
    )
    topics_format = forms.ChoiceField(
        required=False,
        choices=[(AUTO, "Detect"), *((f, f) for f in collection_formats.TOPIC_FORMATS)],
        label="Topics format",
    )
    documents = forms.FileField(
        required=False,
        label="Documents",
        help_text="JSON Lines {docno, title, body, url, …}, TSV docno<TAB>text, or CSV with "
        "a header (docno,title,body,url; other columns are kept as fields).",
    )
    documents_format = forms.ChoiceField(
        required=False,
        choices=[(AUTO, "Detect"), *((f, f) for f in collection_formats.DOCUMENT_FORMATS)],
        label="Documents format",
    )
    judgments = forms.FileField(
        required=False,
        label="Judgments",
        help_text="qrels, csv (query,docid,rating), tsv, jsonl, json, ranklib, or a Quepid "
        "book (its JSON or csv export; each rater becomes an imported judge). In csv, tsv, "
        "jsonl and json, optional gold and gold_reason columns mark pairs as gold.",
    )
    judgments_format = forms.ChoiceField(
        required=False,
        choices=[(AUTO, "From the file name"), *((f, f) for f in judgment_formats.IMPORT_FORMATS)],
        label="Judgments format",
    )
    judge_name = forms.CharField(
        required=False,
        max_length=100,
        label="Whose judgments",
        help_text="A judge of this collection with that name, username or e-mail; else an "
        "imported judge, created on first use (e.g. TREC assessors). In a Quepid book, the "
        "labels that name no rater.",
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

    def __init__(self, *args: Any, kept: dict[str, str] | None = None, **kwargs: Any) -> None:
        """Offer to reuse the files ``kept`` (roles to names) from a refused try."""
        super().__init__(*args, **kwargs)
        self.offer_kept(kept or {})

    def offer_kept(self, kept: dict[str, str], refused: dict[str, str] | None = None) -> None:
        """Name the ``kept`` files (roles to names), offer to leave each out; name the ``refused``.

        ``refused`` (roles to names) are the files of the last try that had problems of
        their own: they were not kept, and their fields ask for a corrected file.
        """
        self.kept = dict(kept)
        self.refused = dict(refused or {})
        fields = {}
        for name, field in self.fields.items():
            if name.startswith("forget_"):
                continue
            fields[name] = field
            if name in self.kept:
                field.help_text = (
                    f"Kept from your last try: {self.kept[name]} (it passed its checks). "
                    "Choose a file to replace it."
                )
                fields[f"forget_{name}"] = forms.BooleanField(
                    required=False, label=f"Leave out the kept {name} file"
                )
            elif name in self.refused:
                field.help_text = (
                    f"Not kept: {self.refused[name]} had the problems listed above. "
                    "Choose the corrected file."
                )
            elif name in PAGE_ROLES:
                field.help_text = self.base_fields[name].help_text
        self.fields = fields
        self._bound_fields_cache.clear()  # bound fields copy their help text

    def file_groups(self) -> list[list[forms.BoundField]]:
        """Return each file's field with its "leave out the kept file" box, when it has one."""
        return [
            [self[name] for name in (role, f"forget_{role}") if name in self.fields]
            for role in PAGE_ROLES
        ]

    def advanced_fields(self) -> list[forms.BoundField]:
        """Return the fields the page folds away: formats, the kind of judge, the scale."""
        return [self[name] for name in ADVANCED_FIELDS]

    def advanced_errors(self) -> bool:
        """Say whether a folded-away field has an error (the page then opens the fold)."""
        return any(name in self.errors for name in ADVANCED_FIELDS)

    def files_given(self) -> set[str]:
        """Return the roles with a file: uploaded now, or kept and not left out."""
        data = self.cleaned_data
        return {
            role
            for role in PAGE_ROLES
            if data.get(role) or (role in self.kept and not data.get(f"forget_{role}"))
        }

    def clean(self) -> dict:
        """Require at least one file, and a judge name with a judgments file."""
        data = super().clean()
        given = self.files_given()
        if not given:
            raise forms.ValidationError("Choose at least one file.")
        if "judgments" in given and not (data.get("judge_name") or "").strip():
            self.add_error("judge_name", "Say whose judgments these are.")
        return data
