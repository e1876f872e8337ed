from django.apps import AppConfig


def render_entry(entry):
    from apps.entries import names
    from apps.search.corpora import Rendered

    kind = "document" if names.is_document(entry.name) else "entry"
    return Rendered(kind=kind, title=entry.name, text=entry.content)


class EntriesConfig(AppConfig):
    name = "apps.entries"
    label = "entries"

    def ready(self) -> None:
        from apps.entries.models import Entry
        from apps.search.corpora import Corpus, register

        # Seed 003: BM25 over name + content; no embeddings for entries.
        register(
            Corpus(
                name="entries",
                model=Entry,
                text_fields=("name", "content"),
                kind_field="kind",
                render=render_entry,
            )
        )
