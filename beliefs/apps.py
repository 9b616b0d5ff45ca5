from django.apps import AppConfig
from django.db.models.signals import post_migrate

DERIVE_DISPATCH_UID = "beliefs.derive_from_checks"

# What memory staff may do with beliefs (R-4.5: re-derive; the rest is viewing).
MEMORY_STAFF_BELIEF_PERMISSIONS = (
    "view_belief",
    "view_beliefevidence",
    "view_pairbeliefs",
    "view_rederivation",
    "rederive_belief",
)


def ensure_memory_staff_permissions(sender, using="default", **kwargs) -> None:
    """Give the "memory staff" group the beliefs permissions after every migrate/flush.

    The data migration grants them once; this keeps them after a test flush (which
    empties the group tables but re-sends post_migrate) and on fresh databases alike.
    """
    from django.contrib.auth.models import Group, Permission

    from tutorbrain.groups import MEMORY_STAFF

    group, _ = Group.objects.using(using).get_or_create(name=MEMORY_STAFF)
    group.permissions.add(
        *Permission.objects.using(using).filter(
            content_type__app_label="beliefs", codename__in=MEMORY_STAFF_BELIEF_PERMISSIONS
        )
    )


class BeliefsConfig(AppConfig):
    name = "beliefs"
    verbose_name = "Beliefs about students"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Beliefs are derived after each appended check commits: memory announces
        # appends with a signal because it may not import the apps built on it.
        from beliefs.services import on_episodes_appended
        from memory.signals import episodes_appended

        episodes_appended.connect(on_episodes_appended, dispatch_uid=DERIVE_DISPATCH_UID)
        post_migrate.connect(
            ensure_memory_staff_permissions, sender=self, dispatch_uid="beliefs_memory_staff"
        )
