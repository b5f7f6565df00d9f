"""Production settings: everything secret or host-specific comes from the environment.

This is the default settings module of every entry point (``manage.py``, WSGI, ASGI,
the Celery worker); development settings are used only when asked for
(``DJANGO_SETTINGS_MODULE=config.settings.dev``, which ``make run`` sets).

HTTPS (``manage.py check --deploy`` is clean with the defaults):

* ``GRADED_HTTPS`` (default ``1``): redirect HTTP to HTTPS, secure cookies, HSTS.
  ``0`` only for a deployment that is reachable over plain HTTP on purpose.
* ``GRADED_TLS_PROXY`` (default ``1``): TLS ends at a reverse proxy that sets
  ``X-Forwarded-Proto: https`` (and overwrites any value a client sent); Django trusts
  that header. ``0`` when gunicorn itself terminates TLS or no proxy sets the header.
* ``SECURE_HSTS_SECONDS`` (default one year), ``GRADED_HSTS_PRELOAD`` (default ``1``).
"""

import os

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.base import env_bool

WEAK_KEY_MARKERS = ("insecure", "dev-only", "test-only", "change-me", "changeme", "secret")


def check_secret_key(key: str) -> None:
    """Raise ``ImproperlyConfigured`` unless ``key`` is strong enough for production.

    Django's own bar (``security.W009``): at least 50 characters, at least 5 distinct ones,
    not Django's generated ``django-insecure-`` placeholder; and none of the words of
    development or example keys.
    """
    how = (
        'Generate one with: python -c "from django.core.management.utils import '
        'get_random_secret_key as k; print(k())". For local development use '
        "DJANGO_SETTINGS_MODULE=config.settings.dev (make run does)."
    )
    if not key:
        raise ImproperlyConfigured(f"SECRET_KEY must be set in the environment. {how}")
    lowered = key.lower()
    if (
        len(key) < 50
        or len(set(key)) < 5
        or lowered.startswith("django-insecure")
        or any(marker in lowered for marker in WEAK_KEY_MARKERS)
    ):
        raise ImproperlyConfigured(
            "SECRET_KEY is too weak for production (it needs 50+ characters, 5+ distinct, "
            f"and no placeholder words). {how}"
        )


check_secret_key(SECRET_KEY)  # noqa: F405
DEBUG = False
SECURE_CONTENT_TYPE_NOSNIFF = True
if env_bool("GRADED_TLS_PROXY", True):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
if env_bool("GRADED_HTTPS", True):
    SECURE_SSL_REDIRECT = True
    # A health probe straight to a web process (plain HTTP, inside the network) gets its
    # answer, not a redirect; /healthz shows no secret (config/health.py).
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("GRADED_HSTS_PRELOAD", True)
