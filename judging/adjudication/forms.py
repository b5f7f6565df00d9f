"""Forms of the adjudication pages: they validate input; services do the work."""

from __future__ import annotations

from django import forms

from judging.adjudication.selectors import SORTS
from judging.models import GRADE_MAX, GRADE_MIN


class AdjudicationForm(forms.Form):
    """A final grade for a pair and the reason for it."""

    grade = forms.TypedChoiceField(
        coerce=int,
        choices=[(g, str(g)) for g in range(GRADE_MIN, GRADE_MAX + 1)],
        widget=forms.RadioSelect,
        label="Final grade",
    )
    reason = forms.CharField(
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Reason",
        help_text="Why this grade; kept in the pair's history.",
    )

    def __init__(self, *args, grade_names: list[str], **kwargs) -> None:
        """Name each grade with the collection's grade names."""
        super().__init__(*args, **kwargs)
        self.fields["grade"].choices = [(g, f"{g} · {name}") for g, name in enumerate(grade_names)]


class DisagreementFilterForm(forms.Form):
    """Filter and order the disagreement queue."""

    spread = forms.IntegerField(min_value=1, max_value=4, required=False, label="Spread at least")
    sort = forms.ChoiceField(choices=list(SORTS.items()), required=False, label="Order")
    adjudicated = forms.BooleanField(required=False, label="Include adjudicated pairs")

    def filters(self) -> dict:
        """Return the selector's keyword arguments (defaults for invalid input)."""
        data = self.cleaned_data if self.is_valid() else {}
        return {
            "min_spread": data.get("spread"),
            "sort": data.get("sort") or "spread",
            "include_adjudicated": bool(data.get("adjudicated")),
        }
