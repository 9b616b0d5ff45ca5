"""What each staff group may do: one table, kept true after every migrate and flush.

teachers: view the concept map and teach it. memory staff: inspect the memory, verify
chains, re-derive beliefs, read the nightly records. The data migrations granted these
as each app arrived; `staff_groups_ensure` (post_migrate) restores the whole table, since
a test flush empties the group tables and only re-sends post_migrate.
"""

from __future__ import annotations

from django.db.models import Q

from memory.staff import MEMORY_STAFF, TEACHERS, grant, revoke_group

__all__ = ["MEMORY_STAFF", "STAFF_GROUP_PERMISSIONS", "TEACHERS", "grant", "revoke_group"]

CONCEPT_VIEW = [
    "concepts.view_concept",
    "concepts.view_conceptsource",
    "concepts.view_prerequisite",
    "concepts.view_taughtnote",
    "concepts.view_filereading",
    "concepts.view_subjectmap",
]

STAFF_GROUP_PERMISSIONS: dict[str, list[str]] = {
    TEACHERS: [
        "memory.view_subject",
        "memory.view_subjectfile",
        *CONCEPT_VIEW,
        "concepts.teach_concept",
    ],
    MEMORY_STAFF: [
        "memory.view_organization",
        "memory.view_student",
        "memory.view_subject",
        "memory.view_subjectfile",
        "memory.view_pair",
        "memory.view_episode",
        "memory.view_answerstance",
        "memory.view_citationcheck",
        "memory.view_chainverification",
        "memory.view_chaincheckpoint",
        "memory.verify_chain",
        *CONCEPT_VIEW,
        "beliefs.view_belief",
        "beliefs.view_beliefevidence",
        "beliefs.view_pairbeliefs",
        "beliefs.view_rederivation",
        "beliefs.rederive_belief",
        "tutorbrain.view_nightlyrun",
        "tutorbrain.view_calibrationsnapshot",
        "tutorbrain.view_selfmodel",
        "tutorbrain.view_studentsubject",
    ],
}


def staff_groups_ensure(sender=None, using: str = "default", **kwargs) -> None:
    """Create both groups if missing and give them every permission of the table."""
    from django.contrib.auth.models import Group, Permission

    for name, dotted in STAFF_GROUP_PERMISSIONS.items():
        group, _ = Group.objects.using(using).get_or_create(name=name)
        wanted = Q(pk__in=[])
        for permission in dotted:
            label, codename = permission.split(".", 1)
            wanted |= Q(content_type__app_label=label, codename=codename)
        group.permissions.add(*Permission.objects.using(using).filter(wanted))
