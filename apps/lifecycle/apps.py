from django.apps import AppConfig


def history_text(entry) -> str:
    return entry.content


def render_history(entry):
    from apps.search.corpora import Rendered

    return Rendered(
        kind="history", title=f"HISTORY {entry.created_at:%Y-%m-%d %H:%M}", text=entry.content
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
