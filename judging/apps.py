"""Judging app configuration."""

from django.apps import AppConfig


class JudgingConfig(AppConfig):
    """Collections, queries, documents, judges, judgments and their history."""

    name = "judging"
    verbose_name = "Judging"
