from django.db import migrations

from tutorbrain.groups import MEMORY_STAFF, TEACHERS, grant

CONCEPT_VIEW = [
    "concepts.view_concept",
    "concepts.view_conceptsource",
    "concepts.view_prerequisite",
    "concepts.view_taughtnote",
    "concepts.view_filereading",
    "concepts.view_subjectmap",
]


def forwards(apps, schema_editor):
    grant(apps, TEACHERS, [*CONCEPT_VIEW, "concepts.teach_concept"])
    grant(apps, MEMORY_STAFF, [*CONCEPT_VIEW, "beliefs.view_belief", "beliefs.view_beliefevidence",
                               "beliefs.rederive_belief"])


class Migration(migrations.Migration):
    dependencies = [
        ("tutorbrain", "0001_staff_groups"),
        ("concepts", "0001_initial"),
        ("beliefs", "0001_initial"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
