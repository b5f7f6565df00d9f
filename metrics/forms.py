"""Forms of the metrics pages: they validate input; services and selectors do the work."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.db.models import QuerySet

from judging.models import Collection
from metrics.live.scoring import MeasureLabel, error_text
from metrics.models import Run, Team


def measure_choices(labels: Sequence[MeasureLabel]) -> list[tuple[str, str]]:
    """Return ``(requested name, requested name)`` choices, one per distinct measure."""
    return [(label.requested, label.requested) for label in labels]


class RunChoiceField(forms.ModelChoiceField):
    """A run chosen by id, shown as ``tag (team)``."""

    def label_from_instance(self, obj: Run) -> str:
        """Return the run's tag and team."""
        return f"{obj.tag} ({obj.team.name})"


class RunMultipleChoiceField(forms.ModelMultipleChoiceField):
    """Several runs chosen by id, shown as ``tag (team)``."""

    def label_from_instance(self, obj: Run) -> str:
        """Return the run's tag and team."""
        return f"{obj.tag} ({obj.team.name})"


class RunSubmitForm(forms.Form):
    """Upload one run file with its tag and description (and team, for multi-team users)."""

    file = forms.FileField(
        label="Run file",
        help_text="TREC run format (qid Q0 docno rank score tag) or JSON lines.",
    )
    tag = forms.CharField(
        max_length=100,
        label="Tag",
        help_text="The run's name; it must be new in this collection.",
    )
    description = forms.CharField(
        required=False,
        label="Description",
        help_text="How the run was produced (optional).",
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    team = forms.ModelChoiceField(queryset=Team.objects.none(), label="Team", empty_label=None)

    def __init__(self, *args: Any, teams: QuerySet[Team], **kwargs: Any) -> None:
        """Offer the user's teams; drop the team field when there is only one."""
        super().__init__(*args, **kwargs)
        self.teams = list(teams)
        self.fields["team"].queryset = teams
        if len(self.teams) == 1:
            del self.fields["team"]
        self.fields["file"].widget.attrs.update({"data-upload-input": ""})

    def selected_team(self) -> Team:
        """Return the chosen team (the only one when the user has just one)."""
        return self.cleaned_data.get("team") or self.teams[0]

    def add_rejection(self, errors: list[dict[str, Any]]) -> None:
        """Attach ``RunRejected.errors`` to the form: per field where known, else the file."""
        for error in errors:
            field = error.get("field")
            message = error_text(error)
            self.add_error(
                field if field in self.fields else "file", message[:1].upper() + message[1:]
            )


class MeasureForm(forms.Form):
    """Choose which measure a chart shows."""

    measure = forms.ChoiceField(label="Measure", required=False)

    def __init__(self, *args: Any, labels: Sequence[MeasureLabel], **kwargs: Any) -> None:
        """Offer the collection's measures; the first is the default."""
        super().__init__(*args, **kwargs)
        self.labels = list(labels)
        self.fields["measure"].choices = measure_choices(self.labels)

    def label(self) -> MeasureLabel | None:
        """Return the chosen measure's label, or the first measure when none (or a bad one)."""
        name = self.cleaned_data.get("measure") if self.is_valid() else None
        for label in self.labels:
            if label.requested == name:
                return label
        return self.labels[0] if self.labels else None


class CompareForm(forms.Form):
    """Choose two runs (A against B), or a baseline and several runs, and a measure."""

    a = RunChoiceField(queryset=Run.objects.none(), required=False, label="Run A")
    b = RunChoiceField(queryset=Run.objects.none(), required=False, label="Run B")
    baseline = RunChoiceField(queryset=Run.objects.none(), required=False, label="Baseline")
    runs = RunMultipleChoiceField(
        queryset=Run.objects.none(),
        required=False,
        label="Runs",
        help_text="Each is compared with the baseline; p-values are Holm-adjusted.",
        widget=forms.SelectMultiple(attrs={"size": 6}),
    )
    measure = forms.ChoiceField(label="Measure", required=False)

    def __init__(
        self,
        *args: Any,
        runs: QuerySet[Run],
        labels: Sequence[MeasureLabel],
        **kwargs: Any,
    ) -> None:
        """Offer only the runs the user may see and the collection's measures."""
        super().__init__(*args, **kwargs)
        self.labels = list(labels)
        for name in ("a", "b", "baseline", "runs"):
            self.fields[name].queryset = runs
        self.fields["measure"].choices = measure_choices(self.labels)

    def clean(self) -> dict[str, Any]:
        """Require either both of A and B, or a baseline and at least one run."""
        data = super().clean()
        if self.errors:
            return data
        if data.get("baseline") is not None:
            others = [r for r in data.get("runs") or [] if r.pk != data["baseline"].pk]
            if not others:
                self.add_error("runs", "Choose at least one run other than the baseline.")
            data["mode"] = "baseline"
            data["compared"] = others
        elif data.get("a") is not None or data.get("b") is not None:
            if data.get("a") is None or data.get("b") is None:
                self.add_error("b" if data.get("a") else "a", "Choose both runs.")
            data["mode"] = "pair"
            data["compared"] = [data["a"]] if data.get("a") else []
            data["baseline"] = data.get("b")
        else:
            self.add_error(None, "Choose runs A and B, or a baseline and runs.")
        return data

    def label(self) -> MeasureLabel | None:
        """Return the chosen measure's label (the first measure by default)."""
        name = self.cleaned_data.get("measure") if hasattr(self, "cleaned_data") else None
        for label in self.labels:
            if label.requested == name:
                return label
        return self.labels[0] if self.labels else None


#: The corrections the comparison of all pairs offers (``metrics.engine.pairs.CORRECTIONS``).
CORRECTION_CHOICES = [
    ("holm", "Holm over all pairs (paired t-test)"),
    ("tukey", "Tukey's HSD (topics as blocks)"),
]


class AllPairsForm(forms.Form):
    """Choose the runs to compare every pair of (default: all), a measure and a correction."""

    runs = RunMultipleChoiceField(
        queryset=Run.objects.none(),
        required=False,
        label="Runs",
        help_text="None chosen: every scored run (the leaderboard's).",
        widget=forms.SelectMultiple(attrs={"size": 6}),
    )
    measure = forms.ChoiceField(label="Measure", required=False)
    correction = forms.ChoiceField(
        label="Correction", choices=CORRECTION_CHOICES, required=False, initial="holm"
    )

    def __init__(
        self,
        *args: Any,
        runs: QuerySet[Run],
        labels: Sequence[MeasureLabel],
        **kwargs: Any,
    ) -> None:
        """Offer only the runs the user may see and the collection's measures."""
        kwargs.setdefault("auto_id", "pairs-%s")  # the page's other forms have runs too
        super().__init__(*args, **kwargs)
        self.labels = list(labels)
        self.fields["runs"].queryset = runs
        self.fields["measure"].choices = measure_choices(self.labels)

    def label(self) -> MeasureLabel | None:
        """Return the chosen measure's label (the first measure by default)."""
        name = self.cleaned_data.get("measure") if hasattr(self, "cleaned_data") else None
        for label in self.labels:
            if label.requested == name:
                return label
        return self.labels[0] if self.labels else None

    def chosen_correction(self) -> str:
        """Return the chosen correction (Holm by default)."""
        chosen = self.cleaned_data.get("correction") if hasattr(self, "cleaned_data") else None
        return chosen or CORRECTION_CHOICES[0][0]


class LeaderboardSettingsForm(forms.Form):
    """A collection's measure set and coverage threshold (publication: Settings › Visibility)."""

    measures = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        help_text="One measure per line, in any spelling the engine reads: trec_eval "
        "(ndcg_cut.10), ir_measures (nDCG@10, P(rel=2)@10) or a Graded flavour "
        "(nDCG(gain=exp,discount=jk,ideal=recall)@10), or trec_eval's sets official and "
        "all_trec (saved as their measures; the first measure sorts the leaderboard). "
        "Changing them rescores every run.",
    )
    coverage_threshold = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        help_text="Runs whose Judged@10 is below this share are flagged on the leaderboard.",
    )


class RepoolForm(forms.Form):
    """A new pool depth: every run's unjudged top-k documents join the judging pool."""

    depth = forms.IntegerField(min_value=1, max_value=10_000, label="Pool depth")


class AggregationSettingsForm(forms.Form):
    """How the collection turns several judges' grades into one and assigns pairs."""

    aggregation_policy = forms.ChoiceField(
        label="Aggregation policy",
        help_text="Changing it is recorded, starts a new judgment-list version and rescores "
        "every run in the background. Adjudicated pairs always keep their final grade.",
    )
    judges_per_pair = forms.IntegerField(min_value=1, max_value=50, label="Judges per pair")
    max_judges_per_pair = forms.IntegerField(
        min_value=0,
        max_value=50,
        label="More judges for disagreements, up to",
        help_text="A pair whose grades spread by the disagreement spread (below) gets one "
        "more judge at a time up to this many (0: off).",
    )
    disagreement_spread = forms.IntegerField(
        min_value=1,
        max_value=4,
        label="Disagreement spread",
        help_text="Grades this far apart (highest minus lowest) put a pair in the "
        "disagreement queue and, when escalation is on, send it to one more judge.",
    )
    agreement_alert_threshold = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        label="Agreement alert below",
        help_text="Warn when a judge agrees with the others on less than this share of pairs.",
    )
    llm_hint = forms.ChoiceField(
        choices=Collection._meta.get_field("llm_hint").choices,
        required=False,
        label="Show human judges the LLM grade",
        help_text="Each human label records whether it was shown (assisted) or not (blind); "
        "“half” lets you measure anchoring.",
    )

    evidence = forms.ChoiceField(
        choices=Collection._meta.get_field("evidence").choices,
        required=False,
        label="Evidence spans",
        help_text="Whether human judges select the passages that support their grade on "
        "the card: not at all, if they wish, or for every grade from the one below.",
    )
    evidence_from_grade = forms.IntegerField(
        min_value=0,
        max_value=4,
        required=False,
        label="Evidence required from grade",
        help_text="With evidence required: grades from this one to 4 need at least one span "
        "(can't judge and later never do).",
    )

    def clean_llm_hint(self) -> str | None:
        """Return the rule chosen, or None (unchanged) when the form left it out."""
        return self.cleaned_data.get("llm_hint") or None

    def clean_evidence(self) -> str | None:
        """Return the evidence setting chosen, or None (unchanged) when left out."""
        return self.cleaned_data.get("evidence") or None

    def __init__(self, *args: Any, policies: Sequence[tuple[str, str]], **kwargs: Any) -> None:
        """Offer the known policies, each with its description."""
        super().__init__(*args, **kwargs)
        self.fields["aggregation_policy"].choices = list(policies)


class CardSettingsForm(forms.Form):
    """What the judging card asks of human judges: the LLM hint and evidence spans.

    The same fields as on :class:`AggregationSettingsForm` (which still takes them), for
    the settings page's own tab; a field left out leaves its setting unchanged.
    """

    llm_hint = AggregationSettingsForm.base_fields["llm_hint"]
    evidence = AggregationSettingsForm.base_fields["evidence"]
    evidence_from_grade = AggregationSettingsForm.base_fields["evidence_from_grade"]

    clean_llm_hint = AggregationSettingsForm.clean_llm_hint
    clean_evidence = AggregationSettingsForm.clean_evidence
