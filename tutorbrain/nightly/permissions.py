"""Memory staff may view the nightly records (runs, calibration snapshots, self-models)."""

from __future__ import annotations

MEMORY_STAFF_NIGHTLY_PERMISSIONS = (
    "view_nightlyrun",
    "view_calibrationsnapshot",
    "view_selfmodel",
)


def ensure_memory_staff_nightly_permissions(sender, using="default", **kwargs) -> None:
    """After every migrate or flush: the data migration grants these once, but a test
    flush empties the group tables and only re-sends post_migrate."""
    from django.contrib.auth.models import Group, Permission

    from tutorbrain.groups import MEMORY_STAFF

    group, _ = Group.objects.using(using).get_or_create(name=MEMORY_STAFF)
    group.permissions.add(
        *Permission.objects.using(using).filter(
            content_type__app_label="tutorbrain", codename__in=MEMORY_STAFF_NIGHTLY_PERMISSIONS
        )
    )
