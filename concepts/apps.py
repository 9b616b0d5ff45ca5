from django.apps import AppConfig


class ConceptsConfig(AppConfig):
    name = "concepts"
    verbose_name = "Concept maps"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from concepts.receivers import on_episodes_appended
        from memory.signals import episodes_appended

        episodes_appended.connect(on_episodes_appended, dispatch_uid="concepts.teaching")
