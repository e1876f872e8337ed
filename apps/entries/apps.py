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


def entry_text(entry: Model) -> str:
    from apps.entries.index_paths import indexed_text
    from apps.entries.models import Entry

    assert isinstance(entry, Entry)
    return indexed_text(entry.content, entry.index_fields)


class EntriesConfig(AppConfig):
    name = "apps.entries"
    label = "entries"

    def ready(self) -> None:
        from django.db.models import Q

        from apps.entries.models import Entry
        from apps.search.corpora import Corpus, register

        # Seed 003: BM25 over name + content; issue 41: indexed entries are embedded too
        # (their content, or the texts at their index fields), those written with
        # `index: false` are not.
        register(
            Corpus(
                name="entries",
                model=Entry,
                text_fields=("name", "content"),
                embed=entry_text,
                embed_fields=("content", "index_fields"),
                embed_where=Q(unindexed__isnull=True),
                kind_field="kind",
                render=render_entry,
            )
        )
