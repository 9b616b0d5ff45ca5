"""Test overrides. Tests use the same real PostgreSQL (embedded by default) and Redis."""

from __future__ import annotations

import os

# Tests do not depend on a local secrets file (a fresh clone's pytest has none); the
# Celery workers the tests start inherit these.
os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-secret-key-not-for-any-deployment")
os.environ.setdefault("TUTORBRAIN_CHECKPOINT_KEY", "test-only-checkpoint-key")

from config.settings import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests that are about Celery start a real worker; everything else runs inline.
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
# The test process is not a web worker: some tests run many threads that each hold a
# connection (e.g. eight concurrent appenders plus the test's own). The servers the tests
# start (gunicorn, Celery) use config.settings and its pool size.
DATABASES["default"]["OPTIONS"]["pool"]["max_size"] = 32  # noqa: F405

# A second alias on the test database, for the read-replica router's test
# (tests/test_serving_replica.py). Nothing routes to it unless a test sets
# TUTORBRAIN_BLOCK_READ_DATABASE = "replica".
if "replica" not in DATABASES:  # noqa: F405
    _replica = {k: v for k, v in DATABASES["default"].items() if k != "TEST"}  # noqa: F405
    _replica["OPTIONS"] = dict(_replica["OPTIONS"])
    _replica["TEST"] = {"MIRROR": "default"}
    DATABASES["replica"] = _replica  # noqa: F405

# A block build on a loaded machine (CI, six test runs on two cores) can take longer than
# the production deadline, and a test that expects a block must not get `dropped` by
# luck. Tests about the deadline set their own small one.
TUTORBRAIN_BLOCK_DEADLINE_SECONDS = 60.0
