"""The working set's rows lose their concept names: the concept pool looks its matches
up by the rows' concept keys (0003), and nothing reads the names any more."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("tutorbrain_block", "0003_working_set_keys"),
    ]

    operations = [
        migrations.RemoveField(
            model_name="workingsetepisode",
            name="concepts",
        ),
    ]
