"""LLM judges call operator-registered providers, never a coordinator's free-text endpoint.

Existing judges' endpoints become providers (one per distinct base URL, allowed to serve the
models its judges use). A key variable is carried over only when it has the documented
``GRADED_LLM_KEY_`` prefix: any other name (``SECRET_KEY``, ``DATABASE_URL``…) is dropped,
so no existing row can keep sending a server secret. No existing provider is allowed to reach
private addresses: an operator who ran a judge on a local server allows its host again.
"""

import re
from urllib.parse import urlsplit

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models

KEY_ENV_PATTERN = r"\AGRADED_LLM_KEY_[A-Z0-9_]+\Z"


def endpoints_to_providers(apps, schema_editor):
    Judge = apps.get_model("judging", "Judge")
    LLMProvider = apps.get_model("judging", "LLMProvider")
    providers = {}
    for judge in Judge.objects.exclude(endpoint="").order_by("pk"):
        key_env = judge.api_key_env if re.match(KEY_ENV_PATTERN, judge.api_key_env or "") else ""
        url = judge.endpoint.strip().rstrip("/")
        provider = providers.get((url, key_env))
        if provider is None:
            host = (urlsplit(url).hostname or "provider").lower()
            base = re.sub(r"[^a-z0-9_-]+", "-", host).strip("-")[:80] or "provider"
            name, n = base, 1
            while LLMProvider.objects.filter(name=name).exists():
                n += 1
                name = f"{base}-{n}"
            provider = LLMProvider.objects.create(
                name=name, base_url=url, api_key_env=key_env, allowed_models=[]
            )
            providers[(url, key_env)] = provider
        if judge.model and judge.model not in provider.allowed_models:
            provider.allowed_models = [*provider.allowed_models, judge.model]
            provider.save(update_fields=["allowed_models"])
        judge.llm_provider = provider
        judge.save(update_fields=["llm_provider"])


class Migration(migrations.Migration):
    dependencies = [("judging", "0009_jpage_progress_counters")]

    operations = [
        migrations.CreateModel(
            name="LLMProvider",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "name",
                    models.SlugField(
                        help_text="Name coordinators pick (letters, digits, -, _).",
                        max_length=100,
                        unique=True,
                    ),
                ),
                (
                    "base_url",
                    models.CharField(
                        help_text="Base URL of an OpenAI-compatible API (requests go to "
                        "<it>/chat/completions).",
                        max_length=500,
                    ),
                ),
                (
                    "api_key_env",
                    models.CharField(
                        blank=True,
                        help_text="Environment variable holding the key, GRADED_LLM_KEY_…; "
                        "empty: no key.",
                        max_length=100,
                        validators=[
                            django.core.validators.RegexValidator(
                                KEY_ENV_PATTERN,
                                "Name an environment variable starting with GRADED_LLM_KEY_ "
                                "(capital letters, digits, _), never the key itself.",
                            )
                        ],
                    ),
                ),
                (
                    "allowed_models",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text='Model names judges may use with this provider, e.g. '
                        '["gpt-4o"]; ["*"]: any.',
                    ),
                ),
                (
                    "allowed_private_hosts",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="Host names, addresses or networks (10.0.0.0/8) this "
                        "provider may reach although they are loopback, private or link-local "
                        "(a local vLLM). Empty: public only.",
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "verbose_name": "LLM provider",
                "ordering": ["name"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("api_key_env", ""))
                        | models.Q(("api_key_env__regex", KEY_ENV_PATTERN)),
                        name="llm_provider_key_env_prefix",
                        violation_error_message="Name an environment variable starting with "
                        "GRADED_LLM_KEY_ (capital letters, digits, _), never the key itself.",
                    )
                ],
            },
        ),
        migrations.AddField(
            model_name="judge",
            name="llm_provider",
            field=models.ForeignKey(
                blank=True,
                help_text="Where Graded sends this LLM judge's requests (registered by the "
                "operator).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="judges",
                to="judging.llmprovider",
            ),
        ),
        migrations.RunPython(endpoints_to_providers, migrations.RunPython.noop),
        migrations.RemoveField(model_name="judge", name="api_key_env"),
        migrations.RemoveField(model_name="judge", name="endpoint"),
    ]
