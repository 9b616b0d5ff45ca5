"""Give every current belief a `p_right` by re-deriving its student-subject (R-4.5).

Rows are never updated (R-4.2), so existing rows keep `p_right` empty; each pair with a
current belief is re-derived under today's rules instead: the old rows are retired (kept,
readable) and the new ones carry `p_right`. No episode is read for writing, none changes.

This runs the live service (beliefs.services.beliefs_rederive), so it must run with the
code of this release: a later migration that adds a Belief column runs after this one on
a fresh database (no rows here) and the live model matches the schema; on an existing
database upgrade release by release. Reverse is a no-op: the re-derived rows are history.
"""

from __future__ import annotations

from django.db import migrations


def rederive_current(apps, schema_editor):
    from beliefs.models import Belief, Rederivation
    from beliefs.services import beliefs_rederive
    from memory.models import Pair

    pair_ids = sorted(set(Belief.objects.current().values_list("pair_id", flat=True)))
    pairs = list(Pair.objects.filter(pk__in=pair_ids).select_related("subject").order_by("pk"))
    # Twice: a pair's prior comes from the other pairs' new rows, which the first pass
    # is still writing; the second pass (all but the last pair, which already saw every
    # other) gives every pair a prior from everyone.
    for pair in pairs + pairs[:-1]:
        beliefs_rederive(pair=pair, source=Rederivation.Source.SERVICE)


class Migration(migrations.Migration):
    dependencies = [("beliefs", "0005_belief_p_right")]

    operations = [migrations.RunPython(rederive_current, migrations.RunPython.noop)]
