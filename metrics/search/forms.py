"""Browser input of live search: a configuration (or its next version), try and run."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from metrics.search import presets


class ConfigurationForm(forms.Form):
    """A configuration's name, team and the content of its next version."""

    name = forms.CharField(max_length=100, help_text="Name within the collection.")
    team = forms.ModelChoiceField(queryset=None, help_text="Whose runs the snapshots are.")
    endpoint = forms.ModelChoiceField(
        queryset=None, to_field_name="name", help_text="Registered by the operator."
    )
    path = forms.CharField(
        max_length=500, help_text="After the endpoint's base URL, e.g. /my-index/_search."
    )
    method = forms.ChoiceField(choices=[("POST", "POST"), ("GET", "GET")], initial="POST")
    template = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6, "class": "mono"}),
        help_text="JSON: query DSL, Solr parameters or a generic body. Placeholders: "
        "{{query_text}}, {{query_id}}, {{description}}, {{narrative}}, {{k}}.",
    )
    depth = forms.IntegerField(min_value=1, max_value=1000, initial=100, help_text="Depth k.")
    mapping = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "class": "mono"}),
        help_text='JMESPath over the preset, e.g. {"hits": "data.items", "id": "doc.key"}; '
        "empty: the engine's preset.",
    )

    def __init__(self, *args: Any, teams: Any, endpoints: Any, **kwargs: Any) -> None:
        """Offer the collection's teams and the endpoints open to it."""
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        self.fields["endpoint"].queryset = endpoints
        if not self.is_bound:
            _method, path, template = presets.DEFAULT_REQUESTS[presets.ELASTICSEARCH]
            self.initial.setdefault("template", json.dumps(template, indent=1))
            self.initial.setdefault("path", path)

    def clean_template(self) -> Any:
        """Parse the template as JSON (placeholders are checked by the service)."""
        try:
            return json.loads(self.cleaned_data["template"])
        except ValueError as exc:
            raise forms.ValidationError(f"Not JSON ({exc}).") from None

    def clean_mapping(self) -> dict[str, str] | None:
        """Parse the mapping: a JSON object of strings, or nothing."""
        text = (self.cleaned_data.get("mapping") or "").strip()
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise forms.ValidationError(f"Not JSON ({exc}).") from None
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise forms.ValidationError("Give a JSON object of JMESPath strings.")
        return value


class SnapshotForm(forms.Form):
    """*Run it*: an optional run tag."""

    tag = forms.CharField(max_length=100, required=False, help_text="Empty: one is made.")


class SnapshotChoiceField(forms.ModelChoiceField):
    """A snapshot chosen by id, shown as its tag and version."""

    def label_from_instance(self, obj: Any) -> str:
        """Return the tag and the version that made it."""
        return f"{obj.tag} ({obj.version})"


class DiffForm(forms.Form):
    """Two snapshots (the baseline first), the measure and the depth of the rankings."""

    a = SnapshotChoiceField(queryset=None, label="Baseline snapshot")
    b = SnapshotChoiceField(queryset=None, label="Compared snapshot")
    measure = forms.ChoiceField(label="Measure")
    k = forms.IntegerField(
        min_value=1, max_value=100, initial=10, required=False, label="Rankings' depth"
    )

    def __init__(self, *args: Any, snapshots: Any, measures: list[str], **kwargs: Any) -> None:
        """Offer the collection's snapshots that became runs, and its measures."""
        super().__init__(*args, **kwargs)
        self.fields["a"].queryset = self.fields["b"].queryset = snapshots
        self.fields["measure"].choices = [(m, m) for m in measures]

    def clean(self) -> dict[str, Any]:
        """Refuse a snapshot compared with itself."""
        data = super().clean()
        if data.get("a") is not None and data.get("a") == data.get("b"):
            self.add_error("b", "Choose a snapshot other than the baseline.")
        return data
