"""Search documents become Snowball stems of the episode's language (issue #11).

The documents are derived data: this rewrites the existing ones with the current
language data. `manage.py reindex_search` does the same later (after a change to the
stop lists or stemmers) and can be interrupted and rerun.
"""

from django.db import migrations


def rebuild(apps, schema_editor):
    from memory.services import episode_index_search_rebuild

    episode_index_search_rebuild()


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_no_truncate")]

    operations = [migrations.RunPython(rebuild, migrations.RunPython.noop, elidable=True)]
