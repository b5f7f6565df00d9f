"""Browser input of a schedule: when it runs, what it watches, where alerts go."""

from __future__ import annotations

from typing import Any

from django import forms

from metrics.schedules import noise
from metrics.schedules.models import SearchSchedule


class ScheduleForm(forms.Form):
    """A configuration's schedule (:class:`metrics.schedules.services.ScheduleFields`)."""

    frequency = forms.ChoiceField(choices=SearchSchedule.Frequency.choices, initial="daily")
    cron = forms.CharField(
        max_length=100,
        required=False,
        help_text="Cron only: minute hour day month weekday, UTC (e.g. 30 2 * * 1-5).",
    )
    measure = forms.ChoiceField(required=False, help_text="Watched measure.")
    direction = forms.ChoiceField(
        choices=[("drop", "A drop"), ("rise", "A rise"), ("either", "Either")],
        initial="drop",
        help_text="Which changes alert.",
    )
    alpha = forms.FloatField(
        min_value=0.001,
        max_value=0.2,
        initial=noise.ALPHA,
        help_text="Level of the paired test (the leaderboard's: 0.05).",
    )
    baseline = forms.ModelChoiceField(
        queryset=None,
        required=False,
        help_text="Compare with this snapshot (empty: the previous scheduled one).",
    )
    email = forms.BooleanField(required=False, initial=True, help_text="Mail the coordinators.")
    webhook = forms.ModelChoiceField(
        queryset=None, required=False, to_field_name="name", help_text="Registered by the operator."
    )
    active = forms.BooleanField(required=False, initial=True, help_text="Off: paused.")

    def __init__(
        self, *args: Any, measures: list[tuple[str, str]], snapshots: Any, webhooks: Any, **kw: Any
    ) -> None:
        """Offer the collection's measures, the configuration's snapshots and webhooks."""
        super().__init__(*args, **kw)
        self.fields["measure"].choices = [("", "The collection's first"), *measures]
        self.fields["baseline"].queryset = snapshots
        self.fields["webhook"].queryset = webhooks
