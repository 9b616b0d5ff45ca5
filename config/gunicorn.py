"""gunicorn settings: the production server (`make serve`; docs/deployment.md).

    gunicorn -c config/gunicorn.py config.wsgi

Two processes of eight threads (gthread) on two cores, by default. A turn's Python work
(JSON, the embedding, ranking) holds its process's GIL while the database works for the
other threads, so one process per core keeps both cores busy; eight threads let each of
a process's kept-alive chat services have a thread, instead of a block request waiting
for one behind other services' appends (docs/deployment.md). Each process loads the embedding model once
(a warmed worker: about 270 MB resident). The connection pool of each process is sized
from the same numbers (config/settings.py), so the server holds at most
workers x (threads + block workers) database connections. Every value can be changed with the environment variables below.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from config.env import env_int, env_str  # noqa: E402

# The web processes' connections are named in pg_stat_activity (config/settings.py).
os.environ.setdefault("TUTORBRAIN_DB_APPLICATION_NAME", "tutorbrain-web")
# Each worker opens every connection of its pool at start and warms it (warm_up below):
# a connection opened later, in a turn, would make that turn pay a cold backend.
os.environ.setdefault("TUTORBRAIN_DB_POOL_KEEP_ALL", "1")

bind = env_str("TUTORBRAIN_BIND", "127.0.0.1:8000")
workers = env_int("TUTORBRAIN_WEB_WORKERS", 2, minimum=1)
threads = env_int("TUTORBRAIN_WEB_THREADS", 8, minimum=1)
worker_class = "gthread"
# A request that takes longer than this has its worker restarted (the block's own
# deadline is 2.5 s; file uploads are read by Celery, not in the request).
timeout = env_int("TUTORBRAIN_WEB_TIMEOUT", 60, minimum=1)
graceful_timeout = 30
keepalive = 5
# Connections waiting for a thread (beyond the threads' own): a burst queues here.
backlog = 2048
worker_connections = 1000
accesslog = os.environ.get("TUTORBRAIN_ACCESS_LOG") or None
errorlog = "-"
loglevel = env_str("TUTORBRAIN_WEB_LOG_LEVEL", "info")
proc_name = "tutorbrain"
# gunicorn's control socket defaults to one path per user (~/.gunicorn/gunicorn.ctl):
# two servers on one machine would fight over it. Not used here (signals do the job).
control_socket_disable = True
# No preload: each worker imports Django and opens its own pools after the fork (a
# psycopg pool's threads and sockets must not be shared across a fork).
preload_app = False


def post_worker_init(worker):
    """Before the worker accepts its first connection: load the model, build one block."""
    if os.environ.get("TUTORBRAIN_WARM_UP", "1").lower() in ("0", "false", "no", "off"):
        worker.log.info("worker %s: warm-up skipped (TUTORBRAIN_WARM_UP=0)", worker.pid)
        return
    from tutorbrain.warmup import warm_up

    try:
        timings = warm_up()
    except Exception:
        # A worker that cannot warm up still serves (its first turn pays the cold start);
        # readiness (/api/v1/health/ready/) names the part that failed.
        worker.log.exception("worker %s: warm-up failed", worker.pid)
        return
    # What is loaded now (Django, the model, the caches) lives as long as the worker: out
    # of the garbage collector's sight, a full collection no longer walks it. In a warmed
    # worker one took ~140 ms (206,000 objects), paid by whichever turn triggered it.
    gc.freeze()
    worker.log.info(
        "worker %s warmed up: %s",
        worker.pid,
        ", ".join(f"{name} {value:.0f}" for name, value in timings.items()),
    )
