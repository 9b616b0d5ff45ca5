"""A throwaway database for runs that must not leave rows behind (the demo's scenarios).

The scenarios build fresh students, subjects and chains on every run, and the episode log
is append-only: rows written into the main database stay there (the admin filled up with
a "Scenario runs" organization after each `make demo`). So they run in a database of their
own on the same server, created and migrated for the run and dropped after it, by a child
process whose settings point at it (`TUTORBRAIN_DB_NAME`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

SCRATCH_SUFFIX = "_scratch"
MANAGE_PY = Path(settings.BASE_DIR) / "manage.py"


def scratch_name(suffix: str = SCRATCH_SUFFIX) -> str:
    return f"{connection.settings_dict['NAME']}{suffix}"


def _quoted(name: str) -> str:
    return connection.ops.quote_name(name)


@contextmanager
def scratch_database(suffix: str = SCRATCH_SUFFIX) -> Iterator[str]:
    """Create an empty database beside the configured one; drop it afterwards, whatever
    happens. A scratch database left by a killed run is dropped first."""
    name = scratch_name(suffix)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_quoted(name)} WITH (FORCE)")
        cursor.execute(f"CREATE DATABASE {_quoted(name)}")
    try:
        yield name
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {_quoted(name)} WITH (FORCE)")


def database_exists(name: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        return cursor.fetchone() is not None


def manage_in(database: str, *args: str) -> subprocess.CompletedProcess:
    """Run `manage.py <args>` in a child process whose default database is `database`."""
    env = {**os.environ, "TUTORBRAIN_DB_NAME": database}
    return subprocess.run(
        [sys.executable, str(MANAGE_PY), *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
