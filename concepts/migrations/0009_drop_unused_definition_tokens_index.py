"""Drop the GIN index on Concept.definition_tokens: no query uses it.

The reading finds older definitions that may name a new concept by a hashed probe of
each of the subject's rows (docs/concept-map.md): the index spans every subject, the
planner never chose it, and every concept written paid its upkeep.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("concepts", "0008_no_concept_vector_index"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="concept",
            name="concept_definition_tokens_gin",
        ),
    ]
