"""Memory staff see beliefs, the per-pair page and the re-derivation log, and re-derive."""

from django.db import migrations

from memory.staff import MEMORY_STAFF, grant

PERMISSIONS = [
    "beliefs.view_belief",
    "beliefs.view_beliefevidence",
    "beliefs.view_pairbeliefs",
    "beliefs.view_rederivation",
    "beliefs.rederive_belief",
]


def forwards(apps, schema_editor):
    grant(apps, MEMORY_STAFF, PERMISSIONS)


class Migration(migrations.Migration):
    dependencies = [
        ("beliefs", "0003_rederivation_log_and_model_guard"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
