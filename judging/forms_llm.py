"""Forms of the LLM judge pages: start a job, configure an LLM judge."""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms

from .llm.parse import compile_pattern
from .llm.prompt import TemplateError, check_template
from .models import Judge

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class LLMJobForm(forms.Form):
    """What to run: an LLM judge over the pairs it has not graded yet."""

    judge = forms.ModelChoiceField(queryset=Judge.objects.none(), label="LLM judge")
    concurrency = forms.IntegerField(
        min_value=1, max_value=256, initial=4, label="Requests in flight at once"
    )
    limit = forms.IntegerField(min_value=1, required=False, label="At most this many pairs")
    queries = forms.CharField(
        required=False,
        label="Only these query ids (comma-separated)",
        widget=forms.TextInput(attrs={"placeholder": "all queries"}),
    )

    def __init__(self, *args: Any, judges: Any, **kwargs: Any) -> None:
        """Offer the runnable LLM judges."""
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = judges

    def clean_queries(self) -> list[str]:
        """Split the query ids."""
        return [q.strip() for q in self.cleaned_data["queries"].split(",") if q.strip()]


class _JSONField(forms.CharField):
    """A JSON value edited as text."""

    def __init__(self, *, kind: type, **kwargs: Any) -> None:
        self.kind = kind
        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.TextInput(attrs={"spellcheck": "false"}))
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        """Show Python values as JSON."""
        if isinstance(value, list | dict):
            return json.dumps(value)
        return value

    def to_python(self, value: Any) -> Any:
        """Parse the JSON text; empty means an empty value."""
        value = (value or "").strip()
        if not value:
            return self.kind()
        try:
            parsed = json.loads(value)
        except ValueError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc}.") from None
        if not isinstance(parsed, self.kind):
            raise forms.ValidationError(f"Give a JSON {self.kind.__name__}.")
        return parsed


class LLMConfigChecks:
    """Field checks of an LLM judge's configuration, shared by the page and the admin."""

    cleaned_data: dict[str, Any]

    def full_clean(self) -> None:
        """Validate; a refused ``api_key_env`` is not shown back (it may be a pasted key)."""
        super().full_clean()  # type: ignore[misc]
        name = self.add_prefix("api_key_env")  # type: ignore[attr-defined]
        if "api_key_env" in self.errors and name in self.data:  # type: ignore[attr-defined]
            self.data = self.data.copy()  # type: ignore[attr-defined]
            self.data[name] = ""

    def clean_api_key_env(self) -> str:
        """Accept only a variable name (never echo what was typed: it may be a key)."""
        value = self.cleaned_data["api_key_env"].strip()
        if value and not _ENV_NAME.match(value):
            raise forms.ValidationError(
                "Give the NAME of an environment variable (letters, digits, _), never the key."
            )
        return value

    def clean_prompt_template(self) -> str:
        """Refuse unknown placeholders, naming them."""
        value = self.cleaned_data["prompt_template"]
        try:
            check_template(value)
        except TemplateError as exc:
            raise forms.ValidationError(str(exc)) from None
        return value

    def clean_answer_pattern(self) -> str:
        """Check the pattern compiles with at most one group."""
        value = self.cleaned_data["answer_pattern"]
        if value:
            try:
                compile_pattern(value)
            except ValueError as exc:
                raise forms.ValidationError(str(exc)) from None
        return value

    def clean_endpoint(self) -> str:
        """Accept http(s) base URLs."""
        value = self.cleaned_data["endpoint"].strip()
        if value and not value.lower().startswith(("http://", "https://")):
            raise forms.ValidationError("Give an http:// or https:// base URL.")
        return value.rstrip("/")


class LLMJudgeForm(LLMConfigChecks, forms.ModelForm):
    """How Graded calls an LLM judge (the key is named by its environment variable)."""

    decoding = _JSONField(kind=dict, help_text='e.g. {"temperature": 0, "max_tokens": 400}')
    native_scale = _JSONField(kind=list, help_text='e.g. ["0", "1", "2", "3"]')
    scale_mapping = _JSONField(kind=dict, help_text='e.g. {"0": 0, "1": 1, "2": 3, "3": 4}')

    class Meta:
        model = Judge
        fields = [
            "name",
            "model",
            "endpoint",
            "api_key_env",
            "system_prompt",
            "prompt_template",
            "prompt_version",
            "answer_pattern",
            "json_mode",
            "native_scale",
            "scale_mapping",
            "decoding",
            "max_attempts",
            "timeout_seconds",
        ]
        labels = {"api_key_env": "API key variable", "json_mode": "JSON mode"}
        widgets = {
            "system_prompt": forms.Textarea(attrs={"rows": 3}),
            "prompt_template": forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}),
        }

    def clean(self) -> dict[str, Any]:
        """Check the mapping covers the native scale with grades 0–4."""
        data = super().clean()
        native = [str(x) for x in data.get("native_scale") or []]
        mapping = data.get("scale_mapping") or {}
        if "native_scale" in data:
            data["native_scale"] = native
        bad = [k for k, v in mapping.items() if not isinstance(v, int) or not 0 <= v <= 4]
        if bad:
            self.add_error("scale_mapping", f"Map every label to a grade 0–4: {', '.join(bad)}.")
        elif native and mapping and set(native) != set(mapping):
            self.add_error("scale_mapping", "Map exactly the labels of the native scale.")
        return data


class JudgeAdminForm(LLMConfigChecks, forms.ModelForm):
    """The admin's judge form, with the LLM configuration checks."""

    class Meta:
        model = Judge
        fields = [
            "kind",
            "name",
            "user",
            "provider",
            "model",
            "model_version",
            *LLMJudgeForm.Meta.fields[2:],
        ]
