"""Drop the HNSW index on concept name vectors: no query uses it.

Reading a file compares its names with the subject's vectors by an exact scan of that
subject (`services._MapPool.nearest`), and the memory block's routing computes every
concept's distance for the subject; the index only cost an HNSW insertion for each
concept a reading created (~2 ms each, docs/concept-map.md).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("concepts", "0007_layer_words_apart_from_readiness"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="concept", name="concept_embedding_hnsw"),
    ]
