from django.apps import AppConfig


class ConceptsConfig(AppConfig):
    name = "concepts"
    verbose_name = "Concept maps"
    default_auto_field = "django.db.models.BigAutoField"
