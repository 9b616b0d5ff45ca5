from django.db import migrations

from tutorbrain.groups import MEMORY_STAFF, grant

NIGHTLY_VIEW = [
    "tutorbrain.view_nightlyrun",
    "tutorbrain.view_calibrationsnapshot",
    "tutorbrain.view_selfmodel",
]


def forwards(apps, schema_editor):
    grant(apps, MEMORY_STAFF, NIGHTLY_VIEW)


class Migration(migrations.Migration):
    dependencies = [("tutorbrain", "0003_nightly_cycle")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
