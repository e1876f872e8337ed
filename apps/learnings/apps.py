from typing import TYPE_CHECKING

from django.apps import AppConfig
from django.db.models import Model

if TYPE_CHECKING:
    from apps.search.corpora import Rendered


def error_text(record: Model) -> str:
    """What is embedded: the tool with its error, so a query names both."""
    from apps.learnings.models import ErrorRecord

    assert isinstance(record, ErrorRecord)  # the errors corpus reads ErrorRecord rows
    return f"{record.tool_name}: {record.error}"


def render_error(record: Model) -> "Rendered":
    from apps.learnings.models import ErrorRecord
    from apps.search.corpora import Rendered

    assert isinstance(record, ErrorRecord)

    return Rendered(kind="error", title=f"{record.tool_name} ({record.outcome})", text=record.error)


def render_learning(learning: Model) -> "Rendered":
    from apps.learnings.models import Learning
    from apps.search.corpora import Rendered

    assert isinstance(learning, Learning)

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
