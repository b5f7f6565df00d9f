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

    spread = forms.IntegerField(
        min_value=1,
        max_value=4,
        required=False,
        label="Spread at least",
        help_text="Highest minus lowest grade; empty: the collection's setting.",
    )
    cut = forms.TypedChoiceField(
        coerce=int,
        empty_value=None,
        required=False,
        label="Split at the relevance cut",
        help_text="Only pairs some judges grade below this grade and others at or above it.",
    )
    no_majority = forms.BooleanField(
        required=False,
        label="Only pairs with no majority (3 or more judges)",
    )
    sort = forms.ChoiceField(choices=list(SORTS.items()), required=False, label="Order")
    adjudicated = forms.BooleanField(required=False, label="Include adjudicated pairs")

    def __init__(self, *args, grade_names: list[str], **kwargs) -> None:
        """Offer each cut between two grades, named by the collection's grade names."""
        super().__init__(*args, **kwargs)
        self.fields["cut"].choices = [("", "Any")] + [
            (g, f"{grade_names[g - 1]} | {grade_names[g]}") for g in range(1, len(grade_names))
        ]

    def filters(self) -> dict:
        """Return the selector's keyword arguments: the valid fields, defaults elsewhere."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return {
            "min_spread": data.get("spread"),
            "cut": data.get("cut"),
            "no_majority": bool(data.get("no_majority")),
            "sort": data.get("sort") or "spread",
            "include_adjudicated": bool(data.get("adjudicated")),
        }
