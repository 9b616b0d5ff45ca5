"""TRUNCATE is refused on every write-once table (issue 14): row triggers do not fire on
TRUNCATE, so without a statement trigger one statement would empty the episode log."""

from __future__ import annotations

from datetime import UTC, datetime

import pgtrigger
import pytest
from django.apps import apps
from django.db import DatabaseError, connection, transaction

from beliefs.models import Belief
from memory.immutability import AppendOnlyModel
from memory.models import Episode
from memory.services import episode_append

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 7, 12, 10, 0, tzinfo=UTC)


def _protected_models() -> list[type]:
    models = {
        model for model, trigger in pgtrigger.registered() if trigger.name.endswith("_no_truncate")
    }
    return sorted(models, key=lambda m: m._meta.label)


def test_every_write_once_table_has_a_truncate_trigger():
    write_once = {
        model
        for model in apps.get_models()
        if issubclass(model, AppendOnlyModel) or model is Belief
    }
    assert write_once, "no write-once models found"
    assert write_once <= set(_protected_models())


@pytest.mark.parametrize("model", _protected_models(), ids=lambda m: m._meta.label)
def test_truncating_a_write_once_table_is_rejected_by_the_database(model, pair):
    episode_append(pair=pair, kind="question", summary="What is osmosis?", now=NOW)
    table = model._meta.db_table
    with connection.cursor() as cursor:
        # The test's own inserts leave deferred foreign-key checks pending, and PostgreSQL
        # refuses a TRUNCATE behind pending trigger events: run them now.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with (
        pytest.raises(DatabaseError, match="Cannot truncate"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        # CASCADE: the foreign keys would refuse first otherwise, hiding the trigger.
        cursor.execute(f'TRUNCATE "{table}" CASCADE')
    assert Episode.objects.filter(pair=pair).count() == 1


def test_the_truncate_trigger_names_the_table(pair):
    with (
        pytest.raises(DatabaseError, match="memory_answerstance table: it is append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute('TRUNCATE "memory_answerstance"')
