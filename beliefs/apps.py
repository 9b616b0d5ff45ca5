from django.apps import AppConfig


class BeliefsConfig(AppConfig):
    name = "beliefs"
    verbose_name = "Beliefs about students"
    default_auto_field = "django.db.models.BigAutoField"
