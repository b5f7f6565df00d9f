"""Filters of the coordinators' pool page."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet

from metrics.forms import RunChoiceField
from metrics.models import Run
from metrics.pool.models import LIMITS, STRATEGY_CHOICES


class PoolFilterForm(forms.Form):
    """Filter the judging pool by query, judged count, source run, or unjudged pairs only."""

    query = forms.CharField(
        required=False, max_length=200, label="Query id", help_text="Exact query id."
    )
    graded = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=1000,
        label="Judged by",
        help_text="Number of judges.",
    )
    run = RunChoiceField(
        queryset=Run.objects.none(), required=False, label="Source run", empty_label="Any run"
    )
    unjudged = forms.BooleanField(required=False, label="Unjudged only")

    def __init__(self, *args: Any, runs: QuerySet[Run], **kwargs: Any) -> None:
        """Offer the collection's runs as sources."""
        super().__init__(*args, **kwargs)
        self.fields["run"].queryset = runs

    def filters(self) -> dict[str, Any]:
        """Return the valid filters as keyword arguments of ``pool_entries``."""
        if not self.is_valid():
            return {}
        data = self.cleaned_data
        return {
            "query_external_id": data.get("query") or None,
            "graded_count": data.get("graded"),
            "run": data.get("run"),
            "unjudged_only": bool(data.get("unjudged")),
        }


#: The parameters each strategy reads (metrics.pool.services): the settings page shows only
#: the chosen strategy's (issue 34, item 6).
PARAMETERS: dict[str, tuple[str, ...]] = {
    "depth": (),
    "steady": ("wave_size", "horizon", "rel_level", "cutoff"),
    "hybrid": ("wave_size", "horizon", "rel_level", "cutoff"),
    "mtf": ("wave_size", "horizon", "rel_level"),
    "mm-ns": ("wave_size", "horizon", "rel_level"),
    "thompson": ("wave_size", "horizon", "rel_level", "seed"),
    "swap": ("wave_size", "horizon", "rel_level", "cutoff"),
    "llm-check": ("wave_size", "horizon", "rel_level", "cutoff", "seed", "audit_percent"),
}


class PoolingPolicyForm(forms.Form):
    """Which strategy orders the judges' queue, and its parameters."""

    strategy = forms.ChoiceField(
        choices=STRATEGY_CHOICES,
        label="Pooling strategy",
        help_text="When unsure, pick steady (its description says why). Every change is "
        "kept as a new version.",
    )
    wave_size = forms.IntegerField(
        min_value=LIMITS["wave_size"][0],
        max_value=LIMITS["wave_size"][1],
        label="Wave size",
        help_text="Planned pairs judges share before the next wave (each in their own order).",
    )
    horizon = forms.IntegerField(
        min_value=LIMITS["horizon"][0],
        max_value=LIMITS["horizon"][1],
        label="Plan ahead",
        help_text="Unjudged pairs planned.",
    )
    rel_level = forms.IntegerField(
        min_value=LIMITS["rel_level"][0],
        max_value=LIMITS["rel_level"][1],
        label="Relevant from grade",
        help_text="What counts as a hit.",
    )
    cutoff = forms.IntegerField(
        min_value=LIMITS["cutoff"][0],
        max_value=LIMITS["cutoff"][1],
        label="Cut-off",
        help_text="Ranks steady, hybrid and swap weigh.",
    )
    seed = forms.IntegerField(
        min_value=LIMITS["seed"][0],
        max_value=LIMITS["seed"][1],
        label="Seed",
        help_text="Random seed, so that a plan can be repeated.",
    )
    audit_percent = forms.IntegerField(
        min_value=LIMITS["audit_percent"][0],
        max_value=LIMITS["audit_percent"][1],
        label="Random audit (%)",
        help_text="Share of human checks on random pairs, for an unbiased agreement figure.",
    )


class StabilityForm(forms.Form):
    """The stop rule's step and target (query string of the stability page)."""

    step = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=100_000,
        label="Step N",
        help_text="Judgments per step, back and ahead.",
    )
    target = forms.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        label="Target τ",
        help_text="τ at which more judging stops paying.",
    )

    def values(self) -> dict[str, Any]:
        """Return the valid values given (the defaults for the others)."""
        if not self.is_valid():
            return {}
        return {k: v for k, v in self.cleaned_data.items() if v is not None}


def strategy_fields(form: PoolingPolicyForm) -> list[tuple[Any, str]]:
    """Return each parameter field with the strategies that read it (space-separated)."""
    return [
        (form[name], " ".join(s for s, names in PARAMETERS.items() if name in names))
        for name in form.fields
        if name != "strategy"
    ]
