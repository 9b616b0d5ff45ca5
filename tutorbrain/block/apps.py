from django.apps import AppConfig


class BlockConfig(AppConfig):
    """The memory block's own tables: the working set (R-7.5). Code lives in tutorbrain.block."""

    name = "tutorbrain.block"
    label = "tutorbrain_block"
    verbose_name = "Memory block"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from memory.signals import episodes_appended
        from tutorbrain.block.working_set import on_episodes_appended

        episodes_appended.connect(on_episodes_appended, dispatch_uid="tutorbrain.block.working_set")
