from __future__ import annotations

from django.contrib.auth.models import Group
from django.core.management import call_command

from tutorbrain.groups import MEMORY_STAFF, STAFF_GROUP_PERMISSIONS, TEACHERS


def _held(name: str) -> set[str]:
    group = Group.objects.get(name=name)
    return {
        f"{app}.{codename}"
        for app, codename in group.permissions.values_list("content_type__app_label", "codename")
    }


def test_both_staff_groups_hold_their_whole_permission_table(db):
    for name in (TEACHERS, MEMORY_STAFF):
        assert set(STAFF_GROUP_PERMISSIONS[name]) <= _held(name), name


def test_teachers_may_teach_but_not_rederive_and_memory_staff_the_reverse(db):
    assert "concepts.teach_concept" in _held(TEACHERS)
    assert "beliefs.rederive_belief" not in _held(TEACHERS)
    assert "memory.verify_chain" not in _held(TEACHERS)
    assert {"beliefs.rederive_belief", "memory.verify_chain"} <= _held(MEMORY_STAFF)
    assert "concepts.teach_concept" not in _held(MEMORY_STAFF)


def test_the_groups_come_back_whole_after_a_flush(transactional_db):
    call_command("flush", interactive=False, verbosity=0)

    for name in (TEACHERS, MEMORY_STAFF):
        assert set(STAFF_GROUP_PERMISSIONS[name]) <= _held(name), name
