"""Reading cost independent of map size (issue 13).

- Concept.definition_tokens: the tokens of each definition, GIN-indexed, so reading a
  file finds the older definitions that name its new concepts without scanning them all.
- No index on centrality and a fillfactor of 60: the derived numbers, rewritten for most
  of the map after every reading, become HOT updates (no new entry in any index, the
  HNSW one included) instead of a full index insert per row.
"""

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import migrations, models


def fill_tokens(apps, schema_editor):
    from concepts.lookup import definition_tokens

    Concept = apps.get_model("concepts", "Concept")
    batch = []
    for concept in Concept.objects.exclude(definition="").only("pk", "definition").iterator():
        concept.definition_tokens = definition_tokens(concept.definition)
        batch.append(concept)
        if len(batch) >= 1000:
            Concept.objects.bulk_update(batch, ["definition_tokens"])
            batch = []
    if batch:
        Concept.objects.bulk_update(batch, ["definition_tokens"])


class Migration(migrations.Migration):
    dependencies = [
        ("concepts", "0003_concept_name_language"),
    ]

    operations = [
        migrations.AddField(
            model_name="concept",
            name="definition_tokens",
            field=ArrayField(
                base_field=models.CharField(max_length=200), blank=True, default=list, size=None
            ),
        ),
        migrations.AddIndex(
            model_name="concept",
            index=GinIndex(fields=["definition_tokens"], name="concept_definition_tokens_gin"),
        ),
        migrations.RunPython(fill_tokens, migrations.RunPython.noop),
        migrations.RemoveIndex(model_name="concept", name="concept_subject_centrality_idx"),
        # Room on each page for the new version of a row: what makes an update HOT.
        # Pages written before keep their old fill until the table is rewritten.
        migrations.RunSQL(
            "ALTER TABLE concepts_concept SET (fillfactor = 60)",
            "ALTER TABLE concepts_concept RESET (fillfactor)",
        ),
    ]
