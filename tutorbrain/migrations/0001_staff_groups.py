from django.db import migrations

from tutorbrain.groups import MEMORY_STAFF, TEACHERS, grant, revoke_group

MEMORY_STAFF_PERMISSIONS = [
    "memory.view_organization",
    "memory.view_student",
    "memory.view_subject",
    "memory.view_subjectfile",
    "memory.view_pair",
    "memory.view_episode",
    "memory.view_answerstance",
    "memory.view_citationcheck",
    "memory.view_chainverification",
    "memory.view_chaincheckpoint",
    "memory.verify_chain",
]
TEACHER_PERMISSIONS = [
    "memory.view_subject",
    "memory.view_subjectfile",
]


def forwards(apps, schema_editor):
    grant(apps, MEMORY_STAFF, MEMORY_STAFF_PERMISSIONS)
    grant(apps, TEACHERS, TEACHER_PERMISSIONS)


def backwards(apps, schema_editor):
    revoke_group(apps, MEMORY_STAFF)
    revoke_group(apps, TEACHERS)


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("memory", "0001_initial"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
