from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from apps.agents.scoping import USER_LIST_FILTER, TeamScopedAdmin
from apps.conversations.models import Message, Session, SessionMeta, Summary
from apps.search.admin import HasVectorFilter, embedding_status_filter


@admin.register(Session)
class SessionAdmin(TeamScopedAdmin):
    list_display = ["key", "agent", "user", "title", "created_at", "updated_at"]
    list_filter = ["agent__team", "agent", USER_LIST_FILTER]
    search_fields = ["key", "title", "id", "user"]
    readonly_fields = ["id", "agent", "created_at", "updated_at", "message_list", "rolling_summary",
                       "fact_list"]  # fmt: skip
    date_hierarchy = "created_at"

    def get_readonly_fields(self, request: HttpRequest, obj: Session | None = None) -> list[str]:
        # A session's user is set at creation (issue 26): what it wrote is theirs.
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "user"] if obj is not None else fields

    @admin.display(description="messages")
    def message_list(self, obj: Session) -> str:
        # A link, not an inline: a session can hold many thousands of messages.
        url = reverse("admin:conversations_message_changelist")
        count = obj.messages.count()
        return format_html(
            '<a href="{}?session__id__exact={}">{} message(s)</a>', url, obj.pk, count
        )

    @admin.display(description="rolling summary")
    def rolling_summary(self, obj: Session) -> str:
        text = Summary.objects.filter(session=obj).values_list("content", flat=True).first()
        return text or "(none yet)"

    @admin.display(description="facts")
    def fact_list(self, obj: Session) -> str:
        # A link only: conversations may not import facts (the domain apps are one layer).
        url = reverse("admin:facts_fact_changelist")
        return format_html(
            '<a href="{}?session__id__exact={}">facts from this session</a>', url, obj.pk
        )


@admin.register(SessionMeta)
class SessionMetaAdmin(TeamScopedAdmin):
    list_display = ["session", "start_at", "summary_cursor", "updated_at"]
    search_fields = ["session__key"]
    readonly_fields = ["session", "start_at", "summary_cursor", "updated_at"]


@admin.register(Summary)
class SummaryAdmin(TeamScopedAdmin):
    list_display = ["session", "updated_at"]
    search_fields = ["session__key", "content"]
    readonly_fields = ["session", "created_at", "updated_at"]


@admin.register(Message)
class MessageAdmin(TeamScopedAdmin):
    """History is the record of what was said: read-only except its importance."""

    list_display = ["created_at", "session", "role", "name", "short_content", "importance"]
    list_filter = [
        "role",
        "agent__team",
        "agent",
        ("embedding", HasVectorFilter),
        embedding_status_filter("messages"),
    ]
    search_fields = ["content", "name", "session__key", "=id"]
    list_select_related = ["session"]
    date_hierarchy = "created_at"
    fields = (
        "id", "agent", "session", "role", "name", "content", "importance", "created_at",
        "tool_call_id", "tool_name", "tool_calls_json", "metadata", "token_count", "byte_size",
        "embedding_model", "embedding_error", "embedding_attempts", "consolidated_at",
        "idempotency_key",
    )  # fmt: skip
    readonly_fields = [f for f in fields if f != "importance"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Message]:
        return super().get_queryset(request).defer("embedding")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="content")
    def short_content(self, obj: Message) -> str:
        return obj.content[:80]
