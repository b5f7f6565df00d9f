"""Forms of the LLM judge pages: start a job, configure an LLM judge."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from judging.llm import judges as services_judges
from judging.models import Judge


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
        except RecursionError:
            raise forms.ValidationError("Not valid JSON: nested too deeply.") from None
        except ValueError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc}.") from None
        if not isinstance(parsed, self.kind):
            raise forms.ValidationError(f"Give a JSON {self.kind.__name__}.")
        return parsed


class LLMConfigChecks:
    """The LLM configuration checks of :mod:`judging.llm.judges`, on a form.

    Shared by the configuration page and the admin, so that they report every problem in
    one round with the service's messages (and the REST API's).
    """

    cleaned_data: dict[str, Any]

    def clean(self) -> dict[str, Any]:
        """Add the service's problems per field; normalise what it normalises."""
        data = super().clean()  # type: ignore[misc]
        for name, messages in services_judges.llm_config_errors(data).items():
            for message in messages:
                self.add_error(name, message)  # type: ignore[attr-defined]
        data.update(services_judges.llm_config_normalised(data))
        return data


class LLMJudgeForm(LLMConfigChecks, forms.ModelForm):
    """How Graded calls an LLM judge (through a provider the operator registered)."""

    decoding = _JSONField(kind=dict, help_text='e.g. {"temperature": 0, "max_tokens": 400}')
    native_scale = _JSONField(kind=list, help_text='e.g. ["0", "1", "2", "3"]')
    scale_mapping = _JSONField(kind=dict, help_text='e.g. {"0": 0, "1": 1, "2": 3, "3": 4}')

    class Meta:
        model = Judge
        fields = [
            "name",
            "model",
            "llm_provider",
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
        labels = {"llm_provider": "Provider", "json_mode": "JSON mode"}
        widgets = {
            "system_prompt": forms.Textarea(attrs={"rows": 3}),
            "prompt_template": forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}),
        }

    def __init__(self, *args: Any, providers: Any = None, **kwargs: Any) -> None:
        """Offer only ``providers`` (those open to the collection and the user), if given."""
        super().__init__(*args, **kwargs)
        if providers is not None:
            self.fields["llm_provider"].queryset = providers
        # A judge without a provider cannot run: refuse to save one (the model allows it
        # for judges kept after their provider is removed).
        provider = self.fields["llm_provider"]
        provider.required = True
        provider.error_messages["required"] = (
            "Choose a provider: an LLM judge cannot run without one."
        )

    def save(self, commit: bool = True) -> Judge:
        """Refuse: the configuration is written by ``services_judges.llm_judge_update``."""
        raise NotImplementedError("Save through judging.llm.judges.llm_judge_update().")


class JudgeAdminForm(LLMConfigChecks, forms.ModelForm):
    """The admin's judge form, with the LLM configuration checks.

    It names the collections a judge works for (an LLM judge appears on their pages only),
    and a new judge starts from the default prompt, scale and mapping.
    """

    class Meta:
        model = Judge
        fields = [
            "kind",
            "name",
            "user",
            "collections",
            "provider",
            "model",
            "model_version",
            *LLMJudgeForm.Meta.fields[2:],
        ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Start a new judge from :data:`judging.llm.judges.DEFAULT_CONFIG`."""
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            for name, value in services_judges.DEFAULT_CONFIG.items():
                if name in self.fields and not self.is_bound:
                    self.initial.setdefault(name, value)
