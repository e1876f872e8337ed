from django.apps import AppConfig


class SearchConfig(AppConfig):
    name = "apps.search"
    label = "search"

    def ready(self) -> None:
        from apps.conversations.models import Message
        from apps.search.corpora import Corpus, register

        register(
            Corpus(
                name="messages",
                model=Message,
                text_fields=("name", "content"),
                vector_field="embedding",
                model_field="embedding_model",
                agent_field="agent",
            )
        )
