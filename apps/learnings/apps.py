from django.apps import AppConfig


def error_text(record) -> str:
    """What is embedded: the tool with its error, so a query names both."""
    return f"{record.tool_name}: {record.error}"


def render_error(record):
    from apps.search.corpora import Rendered

    return Rendered(kind="error", title=f"{record.tool_name} ({record.outcome})", text=record.error)


def render_learning(learning):
    from apps.search.corpora import Rendered

    name = "learnings/errors.md" if learning.kind == "error" else "learnings/corrections.md"
    return Rendered(kind="learning", title=name, text=learning.content)


class LearningsConfig(AppConfig):
    name = "apps.learnings"
    label = "learnings"

    def ready(self) -> None:
        from apps.learnings.models import ErrorRecord, Learning
        from apps.search.corpora import Corpus, register

        # Seed 000's error_memory: found by substring (keyword Contains) and by vector.
        register(
            Corpus(
                name="errors",
                model=ErrorRecord,
                text_fields=("tool_name", "error", "strategy", "resolution"),
                embed=error_text,
                embed_fields=("tool_name", "error"),
                session_field="session",
                kind_field="outcome",
                order_fields=("created_at", "id"),
                render=render_error,
            )
        )
        # Seed 001's learnings files: BM25 (memory_search searches "all files"). Keyword
        # only: learnings are short rules, and the active ones are in every get_context.
        register(
            Corpus(
                name="learnings",
                model=Learning,
                text_fields=("content",),
                session_field="session",
                kind_field="kind",
                order_fields=("created_at", "id"),
                render=render_learning,
            )
        )
