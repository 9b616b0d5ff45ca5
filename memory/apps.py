from django.apps import AppConfig
from django.db.models.signals import post_migrate

MEMORY_STAFF_GROUP = "memory staff"


def ensure_memory_staff_group(sender, using="default", **kwargs) -> None:
    """The "memory staff" group: may view the log and run the "verify chain" action."""
    from django.contrib.auth.models import Group, Permission

    group, _ = Group.objects.using(using).get_or_create(name=MEMORY_STAFF_GROUP)
    wanted = Permission.objects.using(using).filter(content_type__app_label="memory").filter(
        codename__startswith="view_"
    ) | Permission.objects.using(using).filter(
        content_type__app_label="memory", codename="verify_chain"
    )
    group.permissions.add(*wanted)


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory: tenancy and the episode log"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(
            ensure_memory_staff_group, sender=self, dispatch_uid="memory_staff_group"
        )
