from django.apps import AppConfig

DERIVE_DISPATCH_UID = "beliefs.derive_from_checks"


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
