from django.apps import AppConfig


class EntriesConfig(AppConfig):
    name = "apps.entries"
    label = "entries"

    def ready(self) -> None:
        from apps.entries.models import Entry
        from apps.search.corpora import Corpus, register

        # Seed 003: BM25 over name + content; no embeddings for entries.
        register(Corpus(name="entries", model=Entry, text_fields=("name", "content")))
