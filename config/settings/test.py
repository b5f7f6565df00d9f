"""Settings for the test suite: fast hashing, inline background work."""

from config.settings.base import *  # noqa: F403

DEBUG = False
SECRET_KEY = "test-only-insecure-key"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# One folder per database: .ci/run runs the SQLite and PostgreSQL legs side by side.
MEDIA_ROOT = BASE_DIR / (  # noqa: F405
    ".test-media"
    if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"  # noqa: F405
    else ".test-media-pg"
)
LOGGING = {"version": 1, "disable_existing_loggers": False}
# Serve static files straight from the finders, as in development (nothing is collected).
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
GRADED_LLM_JOBS_INLINE = True  # LLM judge jobs run inside the request in tests
GRADED_LLM_BACKOFF_BASE = 0.01  # tiny retry backoff keeps fault tests fast
# No rate limits by default (tests of the limits set their own with override_settings).
GRADED_THROTTLE_RATES = dict.fromkeys(GRADED_THROTTLE_RATES)  # noqa: F405

# The in-memory SQLite test database is shared between threads in shared-cache mode, which
# locks whole tables: a page read while a background thread (an LLM job, the live server)
# holds a write lock failed with "database table is locked". Readers skip those read locks
# (writers still serialise); PRAGMA read_uncommitted matters only in shared-cache mode.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"].setdefault("OPTIONS", {})["init_command"] = (  # noqa: F405
        "PRAGMA read_uncommitted = 1;"
    )
GRADED_WEBHOOK_BACKOFF_BASE = 0.01  # alerts' webhook retries (metrics.schedules.delivery)
