"""The two staff groups, and how a data migration grants them permissions.

Here, at the bottom of the dependency order, so that every app's migrations may use it.
What each group may do in the finished product is one table in tutorbrain.groups.
"""

from __future__ import annotations

TEACHERS = "teachers"
MEMORY_STAFF = "memory staff"


def grant(apps, group_name: str, permissions: list[str]) -> None:
    """Give `group_name` the permissions "app_label.codename" (creating what is missing).

    Permissions are normally created after `migrate` finishes; a data migration that
    assigns them must create them first.
    """
    from django.apps import apps as global_apps
    from django.contrib.auth.management import create_permissions

    for label in {p.split(".", 1)[0] for p in permissions}:
        create_permissions(global_apps.get_app_config(label), apps=apps, verbosity=0)
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=group_name)
    for dotted in permissions:
        label, codename = dotted.split(".", 1)
        permission = Permission.objects.get(content_type__app_label=label, codename=codename)
        group.permissions.add(permission)


def revoke_group(apps, group_name: str) -> None:
    apps.get_model("auth", "Group").objects.filter(name=group_name).delete()
