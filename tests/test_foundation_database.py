from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection

pytestmark = pytest.mark.django_db


def test_the_database_is_postgresql_18_with_pgvector_installed():
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        version = int(cursor.fetchone()[0])
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    if settings.USING_EMBEDDED_DATABASE:
        assert version >= 180000
    assert row is not None, "the vector extension must be created by a migration"


def test_a_cosine_distance_query_orders_vectors_by_angle():
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT name FROM (VALUES ('same', '[1,0,0]'::vector), ('near', '[1,1,0]'::vector),
                                     ('opposite', '[-1,0,0]'::vector)) AS t(name, v)
            ORDER BY v <=> '[2,0,0]'::vector
            """
        )
        assert [r[0] for r in cursor.fetchall()] == ["same", "near", "opposite"]


def test_the_embedded_server_is_started_from_the_project_data_directory():
    if not settings.USING_EMBEDDED_DATABASE:
        pytest.skip("DATABASE_URL points to an external server")
    from config.embedded_db import data_dir

    with connection.cursor() as cursor:
        cursor.execute("SHOW data_directory")
        assert cursor.fetchone()[0] == str(data_dir())


def test_a_second_start_attaches_to_the_running_server_instead_of_starting_another():
    if not settings.USING_EMBEDDED_DATABASE:
        pytest.skip("DATABASE_URL points to an external server")
    from config.embedded_db import ensure_running

    first = ensure_running()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_postmaster_start_time()")
        started = cursor.fetchone()[0]
    second = ensure_running()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_postmaster_start_time()")
        assert cursor.fetchone()[0] == started
    assert first == second
