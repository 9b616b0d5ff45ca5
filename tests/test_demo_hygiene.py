"""`make demo` run twice: one demo school, the same login and key, no scenario rows left."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from memory.models import ApiKey, Organization
from memory.services import api_key_hash
from tutorbrain.evaluation.scratch import database_exists, scratch_name
from tutorbrain.management.commands import demo


@pytest.fixture
def credentials_file(tmp_path, monkeypatch):
    path = tmp_path / "demo-credentials.json"
    monkeypatch.setattr(demo, "CREDENTIALS_FILE", path)
    return path


def accounts(**options):
    command = demo.Command(stdout=io.StringIO())
    return command.accounts(**options)


@pytest.mark.django_db
def test_a_second_demo_run_keeps_the_login_and_the_key(credentials_file):
    organization, key, password = accounts()
    again_organization, again_key, again_password = accounts()

    assert (again_organization, again_key, again_password) == (organization, key, password)
    assert Organization.objects.filter(slug="demo").count() == 1
    live = ApiKey.objects.filter(organization=organization, revoked_at__isnull=True)
    assert [k.key_hash for k in live] == [api_key_hash(key)]
    assert get_user_model().objects.get(username="admin").check_password(password)
    assert oct(credentials_file.stat().st_mode & 0o777) == "0o600"


@pytest.mark.django_db
def test_new_credentials_are_issued_only_when_asked_and_the_old_key_stops_working(
    credentials_file,
):
    _, key, password = accounts()
    _, new_key, new_password = accounts(new=True)

    assert new_key != key and new_password != password
    assert ApiKey.objects.get(key_hash=api_key_hash(key)).revoked_at is not None
    assert not get_user_model().objects.get(username="admin").check_password(password)


@pytest.mark.django_db
def test_saved_credentials_that_no_longer_work_are_replaced(credentials_file):
    _, key, _ = accounts()
    ApiKey.objects.filter(key_hash=api_key_hash(key)).update(revoked_at="2026-01-01T00:00Z")

    _, again_key, _ = accounts()

    assert again_key != key


@pytest.mark.django_db(transaction=True)
def test_scenarios_in_a_scratch_database_leave_nothing_behind():
    out, err = io.StringIO(), io.StringIO()

    with pytest.raises(SystemExit) as exit_status:
        call_command("scenarios", only=["empty_month"], scratch=True, stdout=out, stderr=err)

    assert exit_status.value.code == 0, err.getvalue()
    assert "3/3 passed" in out.getvalue()
    assert not Organization.objects.filter(slug="scenarios").exists()
    assert not database_exists(scratch_name())
