from typing import TYPE_CHECKING, cast

from django.apps import AppConfig
from django.db.models import Model

if TYPE_CHECKING:
    from apps.lifecycle.models import HistoryEntry
    from apps.search.corpora import Rendered


def history_text(entry: Model) -> str:
    # A corpus hands its own model's rows: the history corpus, HistoryEntry's.
    return cast("HistoryEntry", entry).content


def render_history(entry: Model) -> "Rendered":
    from apps.search.corpora import Rendered

    history = cast("HistoryEntry", entry)
    return Rendered(
        kind="history", title=f"HISTORY {history.created_at:%Y-%m-%d %H:%M}", text=history.content
    )


class LifecycleConfig(AppConfig):
    name = "apps.lifecycle"
    label = "lifecycle"

    def ready(self) -> None:
        from apps.lifecycle.models import HistoryEntry, HistoryEntryTokens
        from apps.search.corpora import Corpus, TokenStore, register

        # Seed 004's HISTORY: grep is substring (selectors.history_page); memory_search
        # also finds entries by BM25 and by meaning.
        register(
            Corpus(
                name="history",
                model=HistoryEntry,
                text_fields=("content",),
                embed=history_text,
                embed_fields=("content",),
                session_field="session",
                kind_field="kind",
                order_fields=("created_at", "id"),
                render=render_history,
                tokens=TokenStore(model=HistoryEntryTokens, owner_field="entry"),
            )
        )
