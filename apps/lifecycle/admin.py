from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from apps.agents.scoping import USER_LIST_FILTER, ReadOnlyAdmin, TeamScopedAdmin
from apps.lifecycle.models import HistoryEntry, Lease, Run
from apps.search.admin import embedding_status_filter


@admin.register(Run)
class RunAdmin(TeamScopedAdmin):
    """The run log: every LLM call and fallback, read-only."""

    list_display = [
        "created_at",
        "agent",
        "session_key",
        "user",
        "kind",
        "trigger",
        "status",
        "reason",
        "parse_tier",
        "input_tokens",
        "output_tokens",
        "latency_ms",
    ]
    list_filter = ["kind", "status", "trigger", "parse_tier", "agent__team", "agent",
                   USER_LIST_FILTER]  # fmt: skip
    search_fields = ["session_key", "error", "=id", "user"]
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in Run._meta.concrete_fields] + ["facts"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(HistoryEntry)
class HistoryEntryAdmin(ReadOnlyAdmin):
    """Seed 004's append-only history ("never truncated"): read-only, and no one deletes an
    entry here, superusers included (ReadOnlyAdmin)."""

    list_display = ["created_at", "agent", "session_key", "user", "kind", "short_content"]
    list_filter = ["kind", "agent__team", "agent", USER_LIST_FILTER,
                   embedding_status_filter("history")]  # fmt: skip
    search_fields = ["content", "session_key", "user"]
    date_hierarchy = "created_at"
    exclude = ["embedding"]
    readonly_fields = [
        "agent",
        "session",
        "session_key",
        "user",
        "created_at",
        "content",
        "kind",
        "run",
        "first_message_at",
        "last_message_at",
        "embedding_model",
        "embedding_error",
        "embedding_attempts",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[HistoryEntry]:
        return super().get_queryset(request).defer("embedding")

    @admin.display(description="content")
    def short_content(self, obj: HistoryEntry) -> str:
        return obj.content[:100]


@admin.register(Lease)
class LeaseAdmin(TeamScopedAdmin):
    """Who holds which lifecycle lease; deleting a stuck one frees it. Leases belong to no
    team: superusers only."""

    list_display = ["name", "until"]
    readonly_fields = ["name", "token", "until"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
