from django.apps import AppConfig


class TutorbrainConfig(AppConfig):
    name = "tutorbrain"
    verbose_name = "Tutor brain"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # memory cannot import tutorbrain (dependency order), so the embedder and the
        # language data are handed to it here. Nothing is loaded until first use.
        from memory import indexing
        from tutorbrain import embedder, language

        indexing.register(
            embed=embedder.embed,
            model_name=embedder.model_name(),
            search_terms=language.document_terms,
        )
        self._register_reembed_targets()
        from django.db.models.signals import post_migrate

        from tutorbrain.groups import staff_groups_ensure

        # After every migrate (and a test's flush): both staff groups hold their whole
        # permission table. tutorbrain comes after the apps whose permissions it names.
        post_migrate.connect(staff_groups_ensure, sender=self, dispatch_uid="staff_groups")

    def _register_reembed_targets(self) -> None:
        from memory.derived import EPISODE_INDEX_SQL, episode_index_texts
        from memory.models import EpisodeIndex
        from tutorbrain.reembed import ReembedTarget, register_target

        register_target(
            ReembedTarget(
                label="episodes",
                model=EpisodeIndex,
                vector_field="embedding",
                model_field="embedding_model",
                index_name="episodeindex_embedding_hnsw",
                index_sql=EPISODE_INDEX_SQL,
                text_of=episode_index_texts,
                select_related=("episode",),
            )
        )
        from concepts.derived import concept_texts
        from concepts.models import Concept

        register_target(
            ReembedTarget(
                label="concepts",
                model=Concept,
                vector_field="embedding",
                model_field="embedding_model",
                index_name="",  # no vector index (concepts migration 0008)
                index_sql="",
                text_of=concept_texts,
            )
        )
