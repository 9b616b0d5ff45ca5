from django.db import migrations

from tutorbrain.groups import MEMORY_STAFF, grant


def forwards(apps, schema_editor):
    # Memory staff may open the hub page (teachers work from the concept maps).
    grant(apps, MEMORY_STAFF, ["tutorbrain.view_studentsubject"])


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0002_chain_verification_failure"),
        ("tutorbrain", "0006_no_truncate"),
    ]

    operations = [
        migrations.CreateModel(
            name="StudentSubject",
            fields=[],
            options={
                "verbose_name": "student-subject",
                "verbose_name_plural": "student-subjects",
                "proxy": True,
                "indexes": [],
                "constraints": [],
            },
            bases=("memory.pair",),
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
