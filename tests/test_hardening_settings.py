"""Start-up refuses the public default secrets with DEBUG off (issue 14): a chain rewritten
and re-signed with a public key would otherwise verify as intact."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = "dev-only-insecure-key-change-me-in-production"


def _start(tmp_path, **variables: str) -> subprocess.CompletedProcess:
    """Load the settings in a fresh interpreter, the way every process starts."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DJANGO_SECRET_KEY", "TUTORBRAIN_CHECKPOINT_KEY", "DJANGO_DEBUG")
    }
    env.update(variables)
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    env["TUTORBRAIN_LOCAL_SECRETS_FILE"] = str(tmp_path / "absent.env")
    code = "import django.conf as c; c.settings.SECRET_KEY; print('started')"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": DEFAULT}, "DJANGO_SECRET_KEY"),
        (
            {"DJANGO_SECRET_KEY": "a-real-secret", "TUTORBRAIN_CHECKPOINT_KEY": DEFAULT},
            "TUTORBRAIN_CHECKPOINT_KEY",
        ),
        (
            {"DJANGO_SECRET_KEY": "a-real-secret", "TUTORBRAIN_CHECKPOINT_KEY": " "},
            "TUTORBRAIN_CHECKPOINT_KEY",
        ),
    ],
)
def test_debug_off_with_a_default_secret_refuses_to_start_naming_the_variable(
    tmp_path, variables, named
):
    result = _start(tmp_path, DJANGO_DEBUG="false", **variables)
    assert result.returncode != 0
    assert "started" not in result.stdout
    assert f"{named} must be set to a secret value when DJANGO_DEBUG is off" in result.stderr


def test_debug_off_with_real_secrets_starts(tmp_path):
    result = _start(
        tmp_path, DJANGO_DEBUG="false", DJANGO_SECRET_KEY="s3cret", TUTORBRAIN_CHECKPOINT_KEY="k3y"
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_debug_on_may_use_the_default_for_development(tmp_path):
    result = _start(tmp_path, DJANGO_DEBUG="true")
    assert result.returncode == 0, result.stderr[-2000:]


def test_a_local_secrets_file_written_by_make_is_read_when_the_environment_is_silent(tmp_path):
    secrets_file = tmp_path / "local.env"
    secrets_file.write_text(
        "# local\nDJANGO_SECRET_KEY=from-the-file\nTUTORBRAIN_CHECKPOINT_KEY=ck\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DJANGO_SECRET_KEY", "TUTORBRAIN_CHECKPOINT_KEY")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_DEBUG="false",
        TUTORBRAIN_LOCAL_SECRETS_FILE=str(secrets_file),
    )
    code = (
        "import django.conf as c; s = c.settings; print(s.SECRET_KEY, s.TUTORBRAIN_CHECKPOINT_KEY)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["from-the-file", "ck"]
