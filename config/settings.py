"""Settings for tutor brain: one module, every environment value read through config.env.

Product defaults that a deployment may tune are settings (TUTORBRAIN_*); constants that
define the product's behaviour (salience by kind, readiness bands, block weights) are
named constants in the module that uses them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_choice, env_file, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

# --- Secrets --------------------------------------------------------------------------
# The public default below is for DEBUG only: with DEBUG off it would let anyone forge
# sessions and re-sign a rewritten episode chain's checkpoint, so start-up refuses it.
# A local checkout gets random keys from `make` (var/local-secrets.env, git-ignored),
# read when the environment does not set them; a deployment sets the variables.
INSECURE_DEFAULT_SECRET = "dev-only-insecure-key-change-me-in-production"
LOCAL_SECRETS_FILE = Path(
    env_str("TUTORBRAIN_LOCAL_SECRETS_FILE", str(BASE_DIR / "var" / "local-secrets.env"))
)
_local_secrets = env_file(LOCAL_SECRETS_FILE)
DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env_str(
    "DJANGO_SECRET_KEY", _local_secrets.get("DJANGO_SECRET_KEY", INSECURE_DEFAULT_SECRET)
)
# Key for HMAC-signed chain checkpoints. Defaults to SECRET_KEY; set it separately so a
# checkpoint stored elsewhere stays verifiable when the web secret rotates.
TUTORBRAIN_CHECKPOINT_KEY = env_str(
    "TUTORBRAIN_CHECKPOINT_KEY", _local_secrets.get("TUTORBRAIN_CHECKPOINT_KEY", SECRET_KEY)
)
if not DEBUG:
    for _name, _value in (
        ("DJANGO_SECRET_KEY", SECRET_KEY),
        ("TUTORBRAIN_CHECKPOINT_KEY", TUTORBRAIN_CHECKPOINT_KEY),
    ):
        if _value == INSECURE_DEFAULT_SECRET or not _value.strip():
            raise ImproperlyConfigured(
                f"{_name} must be set to a secret value when DJANGO_DEBUG is off: the "
                "default is public (anyone could forge sessions and chain checkpoints). "
                "Generate one with: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
            )
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
# Served over HTTPS (behind a TLS-terminating reverse proxy): cookies only over HTTPS,
# and the proxy's X-Forwarded-Proto says a request was secure. Off by default so the
# local `make demo` admin login works over plain http. HSTS and the http->https
# redirect are the proxy's job (docs/hardening.md: `manage.py check --deploy`).
DJANGO_HTTPS = env_bool("DJANGO_HTTPS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = DJANGO_HTTPS
if DJANGO_HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "pgtrigger",
    "memory",
    "concepts",
    "beliefs",
    "tutorbrain",
    "tutorbrain.block",
]

MIDDLEWARE = [
    # First: notes the arrival time (the block deadline counts from it), refuses a too
    # large body from its Content-Length, and makes every 4xx under /api/ JSON.
    "tutorbrain.api.middleware.ApiRequestMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Serves the admin's and the API docs' static files (the Swagger UI comes from the
    # sidecar package) in every mode, so the docs page works with DEBUG off and no network.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

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

# --- Web server -----------------------------------------------------------------------
# gunicorn (config/gunicorn.py) reads these too: the connection pool below is sized from
# them. Two processes of eight threads fit two cores: the embedding and the Python parts
# of a turn hold the GIL of their process, the database does the rest (docs/deployment.md).
TUTORBRAIN_WEB_WORKERS = env_int("TUTORBRAIN_WEB_WORKERS", 2, minimum=1)
TUTORBRAIN_WEB_THREADS = env_int("TUTORBRAIN_WEB_THREADS", 8, minimum=1)
# Worker threads that build blocks under the deadline (tutorbrain/block/deadline.py).
TUTORBRAIN_BLOCK_WORKERS = env_int("TUTORBRAIN_BLOCK_WORKERS", 4, minimum=1)

# --- Database -------------------------------------------------------------------------
# DATABASE_URL set: use that server (any PostgreSQL >= 15 with pgvector).
# Unset: start or attach to the embedded PostgreSQL 18 + pgvector (config/embedded_db.py).
DATABASES: dict[str, dict[str, Any]]
if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": dict(dj_database_url.parse(os.environ["DATABASE_URL"]))}
    USING_EMBEDDED_DATABASE = False
else:
    from config.embedded_db import ensure_running

    _embedded = ensure_running()
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": _embedded["NAME"],
            "USER": _embedded["USER"],
            "HOST": _embedded["HOST"],
            "PORT": _embedded["PORT"],
            "PASSWORD": "",
        }
    }
    USING_EMBEDDED_DATABASE = True
DATABASES["default"]["ENGINE"] = "django.db.backends.postgresql"
# A Celery worker started by a test must use the test's database, not the main one.
if os.environ.get("TUTORBRAIN_DB_NAME"):
    DATABASES["default"]["NAME"] = os.environ["TUTORBRAIN_DB_NAME"]
# Parallel test runs (several sessions, CI) each get their own test database.
DATABASES["default"]["TEST"] = {
    "NAME": "test_tutorbrain" + env_str("TUTORBRAIN_TEST_DB_SUFFIX", ""),
}
# Connections: psycopg's pool, one per process and database alias (Django requires
# CONN_MAX_AGE=0 with it: a connection goes back to the pool at the end of each request).
# A process never holds more than max_size connections, so the server's total is bounded
# by processes x max_size whatever the traffic: by default 2 x (8 + 4) = 24 for the web
# server. `timeout`: how long a request waits for a free connection before failing.
TUTORBRAIN_DB_POOL_MAX_SIZE = env_int(
    "TUTORBRAIN_DB_POOL_MAX_SIZE", TUTORBRAIN_WEB_THREADS + TUTORBRAIN_BLOCK_WORKERS, minimum=1
)
# The production server keeps every connection it may use open (config/gunicorn.py sets
# TUTORBRAIN_DB_POOL_KEEP_ALL), and warms each at start (tutorbrain.warmup): a new
# PostgreSQL backend loads its catalog caches during its first block, 10-60 ms more.
TUTORBRAIN_DB_POOL_MIN_SIZE = (
    TUTORBRAIN_DB_POOL_MAX_SIZE
    if env_bool("TUTORBRAIN_DB_POOL_KEEP_ALL", False)
    else env_int("TUTORBRAIN_DB_POOL_MIN_SIZE", 2, minimum=0)
)
TUTORBRAIN_DB_POOL_TIMEOUT = env_float("TUTORBRAIN_DB_POOL_TIMEOUT", 10.0, minimum=0.1)
if TUTORBRAIN_DB_POOL_MIN_SIZE > TUTORBRAIN_DB_POOL_MAX_SIZE:
    raise ImproperlyConfigured("TUTORBRAIN_DB_POOL_MIN_SIZE must be <= TUTORBRAIN_DB_POOL_MAX_SIZE")


def _pooled(database: dict[str, Any]) -> dict[str, Any]:
    database["CONN_MAX_AGE"] = 0
    # Names the process kind in pg_stat_activity (gunicorn sets "tutorbrain-web").
    database.setdefault("OPTIONS", {}).setdefault(
        "application_name", env_str("TUTORBRAIN_DB_APPLICATION_NAME", "tutorbrain")
    )
    # A pooled connection is checked (one empty round trip) before it is handed out, so
    # a database restart costs no failed request.
    database["CONN_HEALTH_CHECKS"] = True
    database.setdefault("OPTIONS", {})["pool"] = {
        "min_size": TUTORBRAIN_DB_POOL_MIN_SIZE,
        "max_size": TUTORBRAIN_DB_POOL_MAX_SIZE,
        "timeout": TUTORBRAIN_DB_POOL_TIMEOUT,
    }
    return database


_pooled(DATABASES["default"])
# A read replica for block builds (docs/deployment.md): the memory block's reads go to
# it, every write goes to "default" (config/routers.py).
TUTORBRAIN_REPLICA_DATABASE_URL = env_str("TUTORBRAIN_REPLICA_DATABASE_URL", "")
if TUTORBRAIN_REPLICA_DATABASE_URL:
    DATABASES["replica"] = _pooled(dict(dj_database_url.parse(TUTORBRAIN_REPLICA_DATABASE_URL)))
    DATABASES["replica"]["ENGINE"] = "django.db.backends.postgresql"
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
# The alias block builds read from: "replica" when one is configured.
TUTORBRAIN_BLOCK_READ_DATABASE = "replica" if "replica" in DATABASES else "default"
DATABASE_ROUTERS = ["config.routers.BlockReadRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "var" / "static"
# Files are found in the installed apps at request time: no collectstatic step to forget.
# (Run collectstatic and turn this off behind a CDN or a front web server if you have one.)
WHITENOISE_USE_FINDERS = True
# WhiteNoise also serves STATIC_ROOT (after a collectstatic) and warns when it is absent.
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
MEDIA_ROOT = Path(env_str("TUTORBRAIN_MEDIA_ROOT", str(BASE_DIR / "var" / "media")))
MEDIA_URL = "media/"

# --- REST API -------------------------------------------------------------------------
# Requests per API key (DRF's "<n>/<second|minute|hour|day>", or "off"): past it, 429
# with Retry-After. 3000/minute is about 15 chat turns a second for one key, what two
# cores serve; raise it with the server's size (docs/deployment.md).
_api_rate = env_str("TUTORBRAIN_API_RATE", "3000/minute").strip().lower()
TUTORBRAIN_API_RATE: str | None = None if _api_rate in ("off", "none", "") else _api_rate
if TUTORBRAIN_API_RATE is not None:
    _count, _, _period = TUTORBRAIN_API_RATE.partition("/")
    if not (_count.isdigit() and int(_count) > 0 and _period[:1] in ("s", "m", "h", "d")):
        raise ImproperlyConfigured(
            f"TUTORBRAIN_API_RATE must look like 3000/minute (or off), got {_api_rate!r}"
        )
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["tutorbrain.api.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["tutorbrain.api.auth.HasOrganization"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "tutorbrain.api.errors.json_exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "tutorbrain.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_CLASSES": ["tutorbrain.api.throttling.ApiKeyRateThrottle"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "tutor brain API",
    "DESCRIPTION": "Long-term memory for AI tutors: episodes, concept map, beliefs, memory block.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Served from the sidecar package: the docs page works with no network.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The ApiKey security scheme comes from tutorbrain.api.schema.ApiKeyScheme.
}

# --- Celery ---------------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", CELERY_BROKER_URL)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 300, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 360, minimum=1)
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")
# acks_late: a task's message is acknowledged when the task ends, so a worker killed
# mid-task (OOM, deploy, kill -9) does not lose it; reject_on_worker_lost: a killed
# pool process's message goes back to the queue at once. Every task is idempotent (a
# claim by conditional update or a unique constraint), so a second delivery is safe.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = env_str("TUTORBRAIN_NIGHTLY_TIMEZONE", "UTC")
# The nightly cycle's time of day; the beat schedule itself is in config/celery.py.
TUTORBRAIN_NIGHTLY_HOUR = env_int("TUTORBRAIN_NIGHTLY_HOUR", 2, minimum=0)
TUTORBRAIN_NIGHTLY_MINUTE = env_int("TUTORBRAIN_NIGHTLY_MINUTE", 30, minimum=0)
if TUTORBRAIN_NIGHTLY_HOUR > 23 or TUTORBRAIN_NIGHTLY_MINUTE > 59:
    raise ImproperlyConfigured("TUTORBRAIN_NIGHTLY_HOUR must be 0-23 and _MINUTE 0-59")
# How often beat re-queues file readings whose worker is gone (concepts.reading_lease).
TUTORBRAIN_READING_SWEEP_SECONDS = env_int("TUTORBRAIN_READING_SWEEP_SECONDS", 60, minimum=5)
# The one place the periodic schedule is defined.
CELERY_BEAT_SCHEDULE = {
    "nightly-cycle": {
        "task": "tutorbrain.tasks.nightly_fan_out",
        "schedule": crontab(hour=TUTORBRAIN_NIGHTLY_HOUR, minute=TUTORBRAIN_NIGHTLY_MINUTE),
    },
    "requeue-lost-file-readings": {
        "task": "concepts.requeue_lost_readings",
        "schedule": float(TUTORBRAIN_READING_SWEEP_SECONDS),
    },
}

# --- Cache (API throttling) ----------------------------------------------------------
# Shared by every web process, so a key's rate is counted once across the server. The
# default is the broker's Redis database (keys are prefixed "tutorbrain:", Celery's are
# not); give it a database of its own in production, e.g. redis://host:6379/1.
TUTORBRAIN_CACHE_URL = env_str("TUTORBRAIN_CACHE_URL", CELERY_BROKER_URL)
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": TUTORBRAIN_CACHE_URL,
        "KEY_PREFIX": "tutorbrain",
        # A Redis that does not answer must not hang a request (throttling fails open).
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }
}

# --- Embeddings -----------------------------------------------------------------------
# "use": multilingual Universal Sentence Encoder v3 shipped inside its wheel (512-d).
# "openai": any OpenAI-compatible /v1/embeddings endpoint.
TUTORBRAIN_EMBEDDER = env_choice("TUTORBRAIN_EMBEDDER", "use", ("use", "openai"))
TUTORBRAIN_EMBEDDING_BASE_URL = env_str("TUTORBRAIN_EMBEDDING_BASE_URL", "")
TUTORBRAIN_EMBEDDING_MODEL = env_str("TUTORBRAIN_EMBEDDING_MODEL", "")
TUTORBRAIN_EMBEDDING_API_KEY = env_str("TUTORBRAIN_EMBEDDING_API_KEY", "")
_EMBEDDER_DIMENSIONS = {"use": 512}
if TUTORBRAIN_EMBEDDER == "openai":
    if not (TUTORBRAIN_EMBEDDING_BASE_URL and TUTORBRAIN_EMBEDDING_MODEL):
        raise ImproperlyConfigured(
            "TUTORBRAIN_EMBEDDER=openai needs TUTORBRAIN_EMBEDDING_BASE_URL and TUTORBRAIN_EMBEDDING_MODEL"
        )
    TUTORBRAIN_EMBEDDING_DIMENSIONS = env_int("TUTORBRAIN_EMBEDDING_DIMENSIONS", 0, minimum=1)
else:
    TUTORBRAIN_EMBEDDING_DIMENSIONS = _EMBEDDER_DIMENSIONS[TUTORBRAIN_EMBEDDER]

# --- Concept extraction ---------------------------------------------------------------
TUTORBRAIN_EXTRACTOR = env_choice("TUTORBRAIN_EXTRACTOR", "offline", ("offline", "llm"))
TUTORBRAIN_LLM_BASE_URL = env_str("TUTORBRAIN_LLM_BASE_URL", "")
TUTORBRAIN_LLM_MODEL = env_str("TUTORBRAIN_LLM_MODEL", "")
TUTORBRAIN_LLM_API_KEY = env_str("TUTORBRAIN_LLM_API_KEY", "")
TUTORBRAIN_LLM_TIMEOUT_SECONDS = env_float("TUTORBRAIN_LLM_TIMEOUT_SECONDS", 60.0, minimum=0.1)

# --- Read path ------------------------------------------------------------------------
TUTORBRAIN_BLOCK_DEADLINE_SECONDS = env_float(
    "TUTORBRAIN_BLOCK_DEADLINE_SECONDS", 2.5, minimum=0.05
)
TUTORBRAIN_DEFAULT_TOKEN_BUDGET = env_int("TUTORBRAIN_DEFAULT_TOKEN_BUDGET", 900, minimum=1)
# Test hook: make every block build this much slower (in the database), to exercise
# the deadline. Always 0 in production.
TUTORBRAIN_BLOCK_TEST_DELAY_SECONDS = env_float(
    "TUTORBRAIN_BLOCK_TEST_DELAY_SECONDS", 0.0, minimum=0.0
)

# --- Limits on input ------------------------------------------------------------------
TUTORBRAIN_MAX_TEXT_CHARS = env_int("TUTORBRAIN_MAX_TEXT_CHARS", 20_000, minimum=100)
TUTORBRAIN_MAX_MESSAGE_CHARS = env_int("TUTORBRAIN_MAX_MESSAGE_CHARS", 4_000, minimum=10)
TUTORBRAIN_MAX_FILE_BYTES = env_int("TUTORBRAIN_MAX_FILE_BYTES", 20 * 1024 * 1024, minimum=1024)
TUTORBRAIN_MAX_BATCH_EVENTS = env_int("TUTORBRAIN_MAX_BATCH_EVENTS", 1_000, minimum=1)
# The largest JSON body: a full batch (1,000 events of 20,000-character ASCII texts, about
# 20 MB) fits. Larger: 413 naming this limit. A multipart upload may be
# TUTORBRAIN_MAX_FILE_BYTES plus 1 MiB of form fields (tutorbrain/api/middleware.py).
TUTORBRAIN_MAX_JSON_BODY_BYTES = env_int(
    "TUTORBRAIN_MAX_JSON_BODY_BYTES", 32 * 1024 * 1024, minimum=1024
)
# Django's own limit on a body read whole (and on multipart form fields) is the same one,
# so no request passes the API's check to be refused later with an HTML page.
DATA_UPLOAD_MAX_MEMORY_SIZE = TUTORBRAIN_MAX_JSON_BODY_BYTES

# --- Nightly cycle --------------------------------------------------------------------
TUTORBRAIN_VERIFY_BATCH_SIZE = env_int("TUTORBRAIN_VERIFY_BATCH_SIZE", 200, minimum=1)
# Time limits (seconds; the hard limit is the soft one plus a grace) and retries of the
# nightly tasks (tutorbrain/tasks.py). Backoff doubles from 1 s up to the maximum.
TUTORBRAIN_NIGHTLY_PAIR_SOFT_TIME_LIMIT = env_int(
    "TUTORBRAIN_NIGHTLY_PAIR_SOFT_TIME_LIMIT", 120, minimum=1
)
TUTORBRAIN_NIGHTLY_FAN_OUT_SOFT_TIME_LIMIT = env_int(
    "TUTORBRAIN_NIGHTLY_FAN_OUT_SOFT_TIME_LIMIT", 1800, minimum=1
)
# Whether the nightly consolidation notes are embedded (off: re-embed later with reembed).
TUTORBRAIN_NIGHTLY_EMBED = env_bool("TUTORBRAIN_NIGHTLY_EMBED", True)
TUTORBRAIN_NIGHTLY_MAX_RETRIES = env_int("TUTORBRAIN_NIGHTLY_MAX_RETRIES", 5, minimum=0)
TUTORBRAIN_NIGHTLY_RETRY_BACKOFF_MAX = env_int(
    "TUTORBRAIN_NIGHTLY_RETRY_BACKOFF_MAX", 600, minimum=1
)

# Redis delivers a message again when it was not acknowledged within this many seconds:
# with acks_late that is a task's whole run, and an ETA/countdown retry's wait too. It
# must exceed the longest hard time limit (the nightly fan-out's) and the longest retry
# backoff, or a task still running would be delivered twice; it is shorter than Redis's
# default hour so the message of a whole killed worker comes back sooner. File readings
# do not wait for it: the sweep re-queues them within a minute.
_LONGEST_TASK_WAIT = max(
    TUTORBRAIN_NIGHTLY_FAN_OUT_SOFT_TIME_LIMIT + 60, TUTORBRAIN_NIGHTLY_RETRY_BACKOFF_MAX
)
CELERY_VISIBILITY_TIMEOUT = env_int(
    "CELERY_VISIBILITY_TIMEOUT", _LONGEST_TASK_WAIT + 300, minimum=_LONGEST_TASK_WAIT + 1
)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "WARNING")},
}
