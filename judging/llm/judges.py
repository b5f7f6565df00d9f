"""Write side of LLM judge configuration: register an LLM judge, change how it is called.

One service serves the REST API (``POST /api/v1/judges/``), the configuration page and, for
its checks, the admin form, so each refuses the same configurations with the same messages:
prompt placeholders are checked, the answer pattern must compile with at most one group (and
pass the cost checks of :func:`judging.llm.parse.compile_pattern`), the provider must be one
the operator registered and allow the judge's model, and the scale mapping must give every
native label a grade 0–4. Where requests go and which key they carry is the provider's,
never a coordinator's to set (see :class:`judging.llm.models.LLMProvider`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import transaction

from graded import textpolicy
from judging.llm import prompt
from judging.llm import selectors as selectors_llm
from judging.llm.parse import compile_pattern
from judging.llm.prompt import (
    DEFAULT_NATIVE_SCALE,
    DEFAULT_SCALE_MAPPING,
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_TEMPLATE,
    check_template,
)
from judging.models import GRADE_MAX, GRADE_MIN, Collection, Judge, LLMProvider

#: Text settings checked under the text policy (NUL, surrogates) and, for those the model
#: does not bound, their longest value in characters (a prompt as sent is checked again when
#: it is rendered, see :data:`judging.llm.prompt.MAX_PROMPT_CHARS`).
TEXT_LIMITS: dict[str, int | None] = {
    "name": None,
    "model": None,
    "provider": None,
    "model_version": None,
    "system_prompt": textpolicy.MAX_TEXT_LENGTH,
    "prompt_template": textpolicy.MAX_TEXT_LENGTH,
    "prompt_version": None,
    "answer_pattern": None,
}
#: Of :data:`TEXT_LIMITS`, the texts of several lines (carriage returns allowed); the others
#: are names (:func:`graded.textpolicy.name_problem`: no control character but tab and LF).
PROSE_FIELDS = frozenset({"system_prompt", "prompt_template", "answer_pattern"})
#: What a new LLM judge starts with on the page that registers one (and in the admin).
DEFAULT_CONFIG: dict[str, Any] = {
    "system_prompt": DEFAULT_SYSTEM_PROMPT,
    "prompt_template": DEFAULT_TEMPLATE,
    "native_scale": list(DEFAULT_NATIVE_SCALE),
    "scale_mapping": dict(DEFAULT_SCALE_MAPPING),
    "decoding": {"temperature": 0},
    "max_attempts": 3,
    "timeout_seconds": 60.0,
}
#: Bounds of the numeric settings (the serializer and the form show the same ones).
MAX_ATTEMPTS = (1, 20)
TIMEOUT_SECONDS = (0.1, 3600.0)


@dataclass(frozen=True)
class LLMJudgeConfig:
    """Everything that says how Graded calls an LLM judge (its collections aside)."""

    name: str
    model: str
    provider: str = ""
    model_version: str = ""
    llm_provider: LLMProvider | None = None
    system_prompt: str = ""
    prompt_template: str = ""
    prompt_version: str = ""
    answer_pattern: str = ""
    json_mode: bool = False
    native_scale: Sequence[str] = ()
    scale_mapping: Mapping[str, int] = field(default_factory=dict)
    decoding: Mapping[str, Any] = field(default_factory=dict)
    max_attempts: int = 5
    timeout_seconds: float = 60.0

    @classmethod
    def of(cls, judge: Judge) -> LLMJudgeConfig:
        """Return ``judge``'s current configuration."""
        return cls(**{f.name: getattr(judge, f.name) for f in dataclasses.fields(cls)})

    def with_changes(self, changes: Mapping[str, Any]) -> LLMJudgeConfig:
        """Return this configuration with the fields named in ``changes`` replaced."""
        names = {f.name for f in dataclasses.fields(self)}
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if k in names})

    def values(self) -> dict[str, Any]:
        """Return the fields by name (shallow: the provider stays the same object)."""
        return {name: getattr(self, name) for name in CONFIG_FIELDS}


CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(LLMJudgeConfig))


def llm_config_errors(values: Mapping[str, Any]) -> dict[str, list[str]]:
    """Return the problems of the LLM configuration ``values``, by field.

    Only the fields present in ``values`` are checked, so a form can report these problems
    beside its own in one round.
    """
    errors: dict[str, list[str]] = {}
    for name, limit in TEXT_LIMITS.items():
        if isinstance(values.get(name), str):
            check = textpolicy.prose_problem if name in PROSE_FIELDS else textpolicy.name_problem
            problem = check(values[name], max_length=limit, what="The text")
            if problem:
                errors[name] = [f"{problem}."]
    provider = values.get("llm_provider")
    model = str(values.get("model") or "").strip()
    if isinstance(provider, LLMProvider) and model and not provider.allows_model(model):
        errors["model"] = [f"The provider {provider.name} does not allow this model."]
    for name, check in (("prompt_template", check_template), ("answer_pattern", compile_pattern)):
        if values.get(name) and name not in errors:
            try:
                check(values[name])
            except ValueError as exc:  # TemplateError is a ValueError
                errors[name] = [str(exc)]
    for name, (low, high) in (("max_attempts", MAX_ATTEMPTS), ("timeout_seconds", TIMEOUT_SECONDS)):
        if values.get(name) is None:
            continue
        try:
            MinValueValidator(low)(values[name])
            MaxValueValidator(high)(values[name])
        except ValidationError as exc:
            errors[name] = list(exc.messages)
    for name, kind, what in (
        ("native_scale", list | tuple, "list of labels"),
        ("scale_mapping", dict, "object of label: grade"),
        ("decoding", dict, "object"),
    ):
        if name in values and not isinstance(values[name], kind):
            errors[name] = [f"Give a JSON {what}."]
    if "native_scale" not in errors and "scale_mapping" not in errors:
        problems = _scale_problems(
            values.get("native_scale") or [], values.get("scale_mapping") or {}
        )
        if problems:
            errors["scale_mapping"] = problems
    return errors


def _scale_problems(native: Sequence[Any], mapping: Mapping[str, Any]) -> list[str]:
    """Return what is wrong with a native scale and its mapping onto grades 0–4."""
    bad = [
        str(k)
        for k, v in mapping.items()
        if isinstance(v, bool) or not isinstance(v, int) or not GRADE_MIN <= v <= GRADE_MAX
    ]
    if bad:
        return [f"Map every label to a grade {GRADE_MIN}–{GRADE_MAX}: {', '.join(bad)}."]
    labels = [str(x) for x in native]
    problems = []
    unknown = sorted(set(mapping) - set(labels)) if labels else []
    if unknown:
        problems.append(f"Labels not in native_scale: {', '.join(unknown)}.")
    missing = sorted(set(labels) - set(mapping)) if mapping else []
    if missing:
        problems.append(f"No grade for native labels: {', '.join(missing)}.")
    return problems


def llm_config_normalised(values: Mapping[str, Any]) -> dict[str, Any]:
    """Return the fields of ``values`` that normalisation changes: trimmed names and URL."""
    changes: dict[str, Any] = {}
    for name in ("name", "model"):
        if isinstance(values.get(name), str):
            changes[name] = values[name].strip()
    if isinstance(values.get("native_scale"), list | tuple):
        changes["native_scale"] = [str(x) for x in values["native_scale"]]
    return changes


def _checked(config: LLMJudgeConfig) -> LLMJudgeConfig:
    """Return ``config`` normalised, with the defaults of a runnable judge filled in.

    Raises ``ValidationError`` naming every bad field. A judge given a provider but no
    prompt template gets the default prompt (and, without a scale, the default 0–3 scale
    and its mapping), so that what it is asked and how its answers are read match.
    """
    errors = llm_config_errors(config.values())
    if not config.model.strip():
        errors["model"] = ["Give the LLM's model name."]
    if errors:
        raise ValidationError(errors)
    changes = llm_config_normalised(config.values())
    changes.update(scale_mapping=dict(config.scale_mapping), decoding=dict(config.decoding))
    if config.llm_provider is not None and not config.prompt_template:
        changes["prompt_template"] = DEFAULT_TEMPLATE
        changes["system_prompt"] = config.system_prompt or DEFAULT_SYSTEM_PROMPT
        if not config.native_scale and not config.scale_mapping:
            changes["native_scale"] = list(DEFAULT_NATIVE_SCALE)
            changes["scale_mapping"] = dict(DEFAULT_SCALE_MAPPING)
    return dataclasses.replace(config, **changes)


def _set(judge: Judge, config: LLMJudgeConfig) -> None:
    """Copy ``config`` onto ``judge`` (in memory)."""
    for name in CONFIG_FIELDS:
        setattr(judge, name, getattr(config, name))


@transaction.atomic
def llm_judge_create(*, config: LLMJudgeConfig, collections: Sequence[Collection]) -> Judge:
    """Register an LLM judge working for ``collections``, all or nothing.

    Raises ``ValidationError`` naming every bad field; nothing is written then.
    """
    judge = Judge(kind=Judge.Kind.LLM)
    _set(judge, _checked(config))
    judge.full_clean(exclude=["user"])  # the model's own rules: lengths, the kind rule
    judge.save()
    judge.collections.set(collections)
    return judge


@transaction.atomic
def llm_judge_update(
    *,
    judge: Judge,
    config: LLMJudgeConfig,
    collections: Sequence[Collection] | None = None,
) -> Judge:
    """Change how Graded calls the LLM judge ``judge`` (every configuration field).

    ``collections``, if given, replaces the collections the judge works for (at least one).
    A change of what decides its grades makes a new version (:func:`judge_version`): the
    labels it gave keep the version that gave them, its next labels record the new one.
    Raises ``ValidationError`` naming every bad field; the judge is then left as it was, in
    the database and in memory.
    """
    if judge.kind != Judge.Kind.LLM:
        raise ValidationError({"judge": "Only an LLM judge has a configuration."})
    if collections is not None and not collections:
        raise ValidationError({"collections": "An LLM judge works for at least one collection."})
    before = LLMJudgeConfig.of(judge)
    try:
        _set(judge, _checked(config))
        judge.full_clean(exclude=["user"])
        judge.save(update_fields=list(CONFIG_FIELDS))
    except BaseException:
        _set(judge, before)
        raise
    if collections is not None:
        judge.collections.set(collections)
    return judge


def provider_closed_to(
    *, provider: LLMProvider | None, collections: Sequence[Collection], user: Any
) -> dict[str, list[str]]:
    """Return the ``llm_provider`` problem of a judge set to ``provider`` for ``collections``.

    The provider must be open to each collection (as the configuration page offers only
    the providers open to its collection, and a job refuses any other); ``user`` is the
    coordinator choosing it (a provider open to one of their groups counts).
    """
    if provider is None:
        return {}
    closed = [
        collection.slug
        for collection in collections
        if not selectors_llm.provider_open_to(provider=provider, collection=collection, user=user)
    ]
    if not closed:
        return {}
    return {
        "llm_provider": [
            f"The provider {provider.name} is not open to the collection"
            f"{'s' if len(closed) > 1 else ''} {', '.join(closed)}; "
            "GET /api/v1/llm-providers/ lists those open to you."
        ]
    }


def judge_version(judge: Judge) -> str:
    """Return a digest naming an LLM judge's configuration (what changes its grades).

    Model, model version, provider, prompt (template version) and system prompt, answer
    pattern, JSON mode, scale and its mapping, and decoding; not its name, retries or
    timeout.
    """
    config = LLMJudgeConfig.of(judge)
    skip = {"name", "max_attempts", "timeout_seconds", "llm_provider", "prompt_template"}
    values: dict[str, Any] = {
        name: getattr(config, name) for name in CONFIG_FIELDS if name not in skip
    }
    values["llm_provider"] = judge.llm_provider_id
    values["prompt_template"] = prompt.template_version(
        judge.prompt_template or prompt.DEFAULT_TEMPLATE, judge.prompt_version
    )
    encoded = json.dumps(values, sort_keys=True, default=str).encode("utf-8")
    return "v-" + hashlib.sha256(encoded).hexdigest()[:12]
