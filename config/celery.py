"""Celery application; runs tasks inline when no broker is configured.

Like every entry point it defaults to the production settings (DEBUG off, a strong key
required), so a worker never runs with DEBUG by accident.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")

app = Celery("graded")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
