from django.apps import AppConfig
from django.db.models.signals import post_migrate

# Kept equal to the list tutorbrain's 0001_staff_groups migration grants (memory may not
# import tutorbrain): a test flush empties the group tables, post_migrate restores them.
MEMORY_STAFF_GROUP = "memory staff"
MEMORY_STAFF_PERMISSIONS = (
    "view_organization",
    "view_student",
    "view_subject",
    "view_subjectfile",
    "view_pair",
    "view_episode",
    "view_answerstance",
    "view_citationcheck",
    "view_chainverification",
    "view_chaincheckpoint",
    "verify_chain",
)


def ensure_memory_staff_group(sender, using="default", **kwargs) -> None:
    """The "memory staff" group: may view the log and run the "verify chain" action."""
    from django.contrib.auth.models import Group, Permission

    group, _ = Group.objects.using(using).get_or_create(name=MEMORY_STAFF_GROUP)
    group.permissions.add(
        *Permission.objects.using(using).filter(
            content_type__app_label="memory", codename__in=MEMORY_STAFF_PERMISSIONS
        )
    )


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory: tenancy and the episode log"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(
            ensure_memory_staff_group, sender=self, dispatch_uid="memory_staff_group"
        )
