"""The production server (gunicorn, config/gunicorn.py) as a subprocess on loopback,
against the test database, for the serving tests."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class GunicornServer:
    """`gunicorn -c config/gunicorn.py config.wsgi` on 127.0.0.1, reading the given database.

    The server's log is read continuously (a full pipe would stall it); `wait_warm`
    returns once every worker has logged its warm-up.
    """

    def __init__(self, database_name: str, *, workers: int = 2, env: dict | None = None):
        self.port = free_port()
        self.workers = workers
        self.lines: list[str] = []
        full_env = dict(os.environ)
        full_env.update(
            {
                "DJANGO_SETTINGS_MODULE": "config.settings",
                "TUTORBRAIN_DB_NAME": database_name,
                "TUTORBRAIN_WEB_WORKERS": str(workers),
                "TUTORBRAIN_WEB_LOG_LEVEL": "info",
            }
        )
        full_env.update(env or {})
        gunicorn = Path(sys.executable).parent / "gunicorn"
        self.process = subprocess.Popen(
            [
                str(gunicorn),
                "-c",
                "config/gunicorn.py",
                "--bind",
                f"127.0.0.1:{self.port}",
                "config.wsgi",
            ],  # fmt: skip
            cwd=ROOT,
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # Its own process group: stop() can end the workers too, even stuck ones.
            start_new_session=True,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip())

    def wait_warm(self, timeout: float = 240.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("gunicorn exited:\n" + "\n".join(self.lines[-40:]))
            if any("warm-up failed" in line for line in self.lines):
                raise RuntimeError("a worker could not warm up:\n" + "\n".join(self.lines[-40:]))
            if sum("warmed up" in line for line in self.lines) >= self.workers:
                return
            time.sleep(0.2)
        raise TimeoutError("gunicorn workers did not warm up:\n" + "\n".join(self.lines[-40:]))

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._reader.join(timeout=5)


def call(conn: http.client.HTTPConnection, method: str, path: str, key: str, body=None):
    """One request on a kept-alive connection; returns (status, parsed JSON, headers)."""
    headers = {"Authorization": f"Api-Key {key}"}
    payload = None
    if body is not None:
        payload = json.dumps(body)
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=payload, headers=headers)
    response = conn.getresponse()
    raw = response.read()
    return response.status, (json.loads(raw) if raw else None), dict(response.getheaders())
