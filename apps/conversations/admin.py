from django.contrib import admin
from django.http import HttpRequest

from apps.conversations.models import Message, Session, SessionMeta, Summary
from apps.search.admin import embedding_status_filter


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["key", "agent", "title", "created_at", "updated_at"]
    list_filter = ["agent__team", "agent"]
    search_fields = ["key", "title", "id"]
    readonly_fields = ["id", "agent", "created_at", "updated_at"]
    date_hierarchy = "created_at"


@admin.register(SessionMeta)
class SessionMetaAdmin(admin.ModelAdmin):
    list_display = ["session", "start_at", "summary_cursor", "updated_at"]
    search_fields = ["session__key"]
    readonly_fields = ["session", "start_at", "summary_cursor", "updated_at"]


@admin.register(Summary)
class SummaryAdmin(admin.ModelAdmin):
    list_display = ["session", "updated_at"]
    search_fields = ["session__key", "content"]
    readonly_fields = ["session", "created_at", "updated_at"]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    """History is the record of what was said: read-only except its importance."""

    list_display = ["created_at", "session", "role", "name", "short_content", "importance"]
    list_filter = [
        "role",
        "agent__team",
        "agent",
        ("embedding", admin.EmptyFieldListFilter),
        embedding_status_filter("messages"),
    ]
    search_fields = ["content", "name", "session__key", "=id"]
    list_select_related = ["session"]
    date_hierarchy = "created_at"
    fields = [
        "id", "agent", "session", "role", "name", "content", "importance", "created_at",
        "tool_call_id", "tool_name", "tool_calls_json", "metadata", "token_count", "byte_size",
        "embedding_model", "embedding_error", "embedding_attempts", "consolidated_at",
        "idempotency_key",
    ]  # fmt: skip
    readonly_fields = [f for f in fields if f != "importance"]

    def get_queryset(self, request: HttpRequest):
        return super().get_queryset(request).defer("embedding")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="content")
    def short_content(self, obj: Message) -> str:
        return obj.content[:80]
