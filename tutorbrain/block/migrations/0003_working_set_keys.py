"""Working-set keys: the lexical and concept pools look matches up by pair (issue 11)."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.contrib.postgres.search
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0004_search_documents_stemmed'),
        ('tutorbrain_block', '0002_working_set_max_seq'),
    ]

    operations = [
        migrations.AddField(
            model_name='workingsetepisode',
            name='keys',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.TextField(), blank=True, default=list, size=None),
        ),
        migrations.AddField(
            model_name='workingsetepisode',
            name='search',
            field=django.contrib.postgres.search.SearchVectorField(null=True),
        ),
        # Existing working sets get their keys here (derived data; the next nightly
        # rebuild only appends): the block reads a set without keys as matching nothing.
        migrations.RunSQL(
            sql="""
                UPDATE tutorbrain_block_workingsetepisode w
                SET search = ix.search,
                    keys = ARRAY(SELECT e.pair_id::text || ':' || t
                                 FROM unnest(tsvector_to_array(ix.search)) t)
                           || ARRAY(SELECT e.pair_id::text || '!' || c FROM unnest(e.concepts) c)
                FROM memory_episode e
                LEFT JOIN memory_episodeindex ix ON ix.episode_id = e.id
                WHERE e.id = w.episode_id
            """,
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AddIndex(
            model_name='workingsetepisode',
            index=django.contrib.postgres.indexes.GinIndex(fields=['keys'], name='wsepisode_keys_gin'),
        ),
    ]
