from django.apps import AppConfig


class BlockConfig(AppConfig):
    """The memory block's own tables: the working set (R-7.5). Code lives in tutorbrain.block."""

    name = "tutorbrain.block"
    label = "tutorbrain_block"
    verbose_name = "Memory block"
    default_auto_field = "django.db.models.BigAutoField"
