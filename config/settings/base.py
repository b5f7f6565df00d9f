"""Settings shared by every environment; values come from the environment.

Environment variables:
    DATABASE_URL   database URL (default: SQLite file ``db.sqlite3`` in the project root)
    SECRET_KEY     required outside dev/test settings
    ALLOWED_HOSTS  comma-separated host names
    DEBUG          "1"/"true" to enable debug pages
    CELERY_BROKER_URL  e.g. redis://127.0.0.1:6379/0; when unset, background work runs inline
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    """Read a boolean environment variable ("1", "true", "yes", "on" are true)."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    """Read a comma-separated environment variable as a list of non-empty strings."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


SECRET_KEY = os.environ.get("SECRET_KEY", "")
DEBUG = env_bool("DEBUG")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "config.apps.GradedConfig",
    "judging",
    "metrics",
]

MIDDLEWARE = [
    # First, so it sees every request end: an unreachable database is a 503, not a 500.
    "config.outage.DatabaseOutageMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.middleware.ContentSecurityPolicyMiddleware",
    "config.middleware.QueryStringPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.throttling.LoginThrottleMiddleware",
    "config.query_params.UnknownQueryParameterMiddleware",
]
# Every sign-in (the login page, the admin's, any authenticate() with a request) passes the
# failure counters of config/throttling.py.
AUTHENTICATION_BACKENDS = ["config.throttling.ThrottledModelBackend"]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A server that does not answer (a host down, a dropped route) fails a request after
    # this many seconds instead of the operating system's TCP timeout (minutes): the
    # request then answers 503 (config/outage.py).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", int(os.environ.get("DB_CONNECT_TIMEOUT", "5"))
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "judging:home"
LOGOUT_REDIRECT_URL = "login"

# Content-Security-Policy sent with every response: no inline scripts, no third-party hosts.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "config.throttling.ThrottledTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "config.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    "DEFAULT_METADATA_CLASS": "config.metadata.APIMetadata",
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.PolicyJSONParser",
        "config.parsers.PolicyFormParser",
        "config.parsers.PolicyMultiPartParser",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "config.throttling.AnonApiThrottle",
        "config.throttling.UserApiThrottle",
    ],
}

# Most items one API page holds (?limit= above it is a 400); bounds the memory of a request.
GRADED_API_MAX_PAGE_SIZE = int(os.environ.get("GRADED_API_MAX_PAGE_SIZE", "1000"))

# Set glibc's allocation thresholds at start so that live rescoring's arrays reuse heap
# memory instead of faulting in fresh pages each judgment (metrics/live/allocator.py).
GRADED_TUNE_MALLOC = env_bool("GRADED_TUNE_MALLOC", True)

# Rate limits ("<count>/<s|min|hour|day>"; empty: no limit); see config/throttling.py.
GRADED_THROTTLE_RATES = {
    "anon": os.environ.get("GRADED_THROTTLE_ANON", "60/min"),
    "user": os.environ.get("GRADED_THROTTLE_USER", "1200/min"),
    "token_failure": os.environ.get("GRADED_THROTTLE_TOKEN_FAILURES", "20/hour"),
    "login": os.environ.get("GRADED_THROTTLE_LOGIN_FAILURES", "10/hour"),
    "login_account": os.environ.get("GRADED_THROTTLE_LOGIN_ACCOUNT_FAILURES", "50/hour"),
    "login_ip": os.environ.get("GRADED_THROTTLE_LOGIN_IP_FAILURES", "50/hour"),
    "login_device": os.environ.get("GRADED_THROTTLE_LOGIN_DEVICE_FAILURES", "10/hour"),
}
# Reverse proxies in front of Graded that append to X-Forwarded-For (0: none, the client is
# REMOTE_ADDR and the header is ignored). Rate limits count per client address.
GRADED_TRUSTED_PROXIES = int(os.environ.get("GRADED_TRUSTED_PROXIES", "0") or 0)
# Counters of the limits above: per process unless CACHE_URL names a shared Redis cache.
# While that Redis is unreachable, each process falls back to its own memory (config/cache.py).
CACHES = {
    "default": (
        {"BACKEND": "config.cache.DegradingRedisCache", "LOCATION": _cache_url}
        if (_cache_url := os.environ.get("CACHE_URL", ""))
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
SPECTACULAR_SETTINGS = {
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.document_query_refusals",
    ],
    "TITLE": "Graded API",
    "DESCRIPTION": "Relevance judgments, runs and evaluation scores.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from the vendored sidecar package: no CDN, no inline script.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "JudgmentStatusEnum": "judging.models.Judgment.Status",
        "RunStatusEnum": "metrics.models.Run.Status",
        "LLMJobStatusEnum": "judging.llm.models.LLMJob.Status",
        "JudgeKindEnum": "judging.models.Judge.Kind",
        "MembershipRoleEnum": "judging.models.Membership.Role",
        "GrantableRoleEnum": "judging.api.serializers.MEMBERSHIP_ROLES",
        "JudgmentChannelEnum": "judging.models.JudgmentEvent.Channel",
        "JudgmentFileFormatEnum": "judging.lists.formats.judgments.IMPORT_FORMATS",
    },
}

# Background work: Celery with a broker when CELERY_BROKER_URL is set, inline otherwise.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Workers take one message at a time, so a job's chunk tasks spread over the workers
# instead of waiting in one worker's prefetch buffer.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Queue of every task (one per deployment; tests that start workers use their own).
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
# An unacknowledged task (its worker was killed) goes back to the queue after this long.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(os.environ.get("GRADED_BROKER_VISIBILITY_SECONDS", "3600"))
}
# Celery beat (``celery -A config beat``, one process per deployment) ticks the search
# schedules every minute; the schedules themselves live in metrics.schedules' tables.
CELERY_BEAT_SCHEDULE = {
    "search-schedules": {"task": "metrics.search_schedules_tick", "schedule": 60.0},
}
# Alerts' mail: Django's mail settings (EMAIL_HOST, …); the sender:
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "graded@localhost")

# LLM judge jobs are split into chunks of this many pairs; up to GRADED_LLM_JOB_WORKERS
# Celery workers share one job. A worker holds a chunk under a lease it renews while it
# works; a chunk whose lease ran out (its worker died) is taken over by another worker.
GRADED_LLM_CHUNK_PAIRS = int(os.environ.get("GRADED_LLM_CHUNK_PAIRS", "128"))
GRADED_LLM_JOB_WORKERS = int(os.environ.get("GRADED_LLM_JOB_WORKERS", "4"))
GRADED_LLM_LEASE_SECONDS = float(os.environ.get("GRADED_LLM_LEASE_SECONDS", "60"))
# A worker stops its LLM job after this many answers in a row that no retry can fix (401,
# 403, 404, a model the provider does not know, a refused destination); 0: never.
GRADED_LLM_FAIL_FAST_AFTER = int(os.environ.get("GRADED_LLM_FAIL_FAST_AFTER", "3"))

# Live search: a finished snapshot's raw answers (kept to re-map it without querying) are
# dropped this many days after it finished; 0 keeps them for ever.
GRADED_SEARCH_ANSWERS_KEEP_DAYS = int(os.environ.get("GRADED_SEARCH_ANSWERS_KEEP_DAYS", "90"))

# Judging.
GRADED_MAX_SECONDS_PER_PAIR = 1800  # client-measured judging time is capped at this
GRADED_RUN_MAX_BYTES = int(os.environ.get("GRADED_RUN_MAX_BYTES", str(200 * 1024 * 1024)))
# Persisted docno indexes of large collections (metrics.live.docno_index);
# empty: MEDIA_ROOT/docno-index.
# Processes that submit runs share it (same host, or a shared filesystem).
GRADED_DOCNO_INDEX_DIR = os.environ.get("GRADED_DOCNO_INDEX_DIR", "")
# An import adding at least this many documents builds the docno index in the background,
# so the collection's first run submission finds it ready.
GRADED_DOCNO_INDEX_PREBUILD_MIN = int(os.environ.get("GRADED_DOCNO_INDEX_PREBUILD_MIN", "100000"))
# Uploads on the Import files page at least this large (all files together) are imported
# by a worker, with progress, instead of in the web request.
GRADED_BACKGROUND_IMPORT_BYTES = int(
    os.environ.get("GRADED_BACKGROUND_IMPORT_BYTES", str(8 * 1024 * 1024))
)
# A worker running a background import says it is alive this often; a running import
# silent for longer than GRADED_IMPORT_STALE_SECONDS shows as interrupted (its worker was
# killed or lost), and a coordinator may retry it.
GRADED_IMPORT_HEARTBEAT_SECONDS = float(os.environ.get("GRADED_IMPORT_HEARTBEAT_SECONDS", "10"))
GRADED_IMPORT_STALE_SECONDS = float(os.environ.get("GRADED_IMPORT_STALE_SECONDS", "120"))
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
