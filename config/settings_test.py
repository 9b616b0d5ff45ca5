"""Test overrides. Tests use the same real PostgreSQL (embedded by default) and Redis."""

from __future__ import annotations

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests that are about Celery start a real worker; everything else runs inline.
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
