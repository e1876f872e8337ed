from django.apps import AppConfig


class FactsConfig(AppConfig):
    name = "apps.facts"
    label = "facts"

    def ready(self) -> None:
        from apps.facts.models import Fact
        from apps.search.corpora import Corpus, register

        register(
            Corpus(
                name="facts",
                model=Fact,
                text_fields=("key", "value"),
                vector_field="embedding",
                model_field="embedding_model",
            )
        )
