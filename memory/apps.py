from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory: tenancy and the episode log"
    default_auto_field = "django.db.models.BigAutoField"
