from typing import TYPE_CHECKING

from django.apps import AppConfig
from django.db.models import Model

if TYPE_CHECKING:
    from apps.search.corpora import Rendered


def render_entry(entry: Model) -> "Rendered":
    from apps.entries import names
    from apps.entries.models import Entry
    from apps.search.corpora import Rendered

    assert isinstance(entry, Entry)  # the entries corpus reads Entry rows

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
