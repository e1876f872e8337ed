from datetime import timedelta

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from apps.agents.scoping import USER_LIST_FILTER, TeamScopedAdmin
from apps.learnings import services
from apps.learnings.models import ErrorRecord, Learning, LearningSource, LearningStatus, Outcome
from apps.search.admin import embedding_status_filter


class ResolutionForm(ActionForm):
    resolution = forms.CharField(
        required=False, label="Resolution", help_text="for “Mark resolved”"
    )


class ExpiringFilter(admin.SimpleListFilter):
    title = "expires"
    parameter_name = "expires"

    def lookups(
        self, request: HttpRequest, model_admin: "admin.ModelAdmin[ErrorRecord]"
    ) -> list[tuple[str, str]]:
        return [("7d", "within 7 days"), ("later", "later")]

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[ErrorRecord]
    ) -> QuerySet[ErrorRecord]:
        soon = timezone.now() + timedelta(days=7)
        if self.value() == "7d":
            return queryset.filter(expires_at__lte=soon)
        if self.value() == "later":
            return queryset.filter(expires_at__gt=soon)
        return queryset


@admin.register(ErrorRecord)
class ErrorRecordAdmin(TeamScopedAdmin):
    """Seed 000's error memory: curate outcomes and resolutions, extend or let expire."""

    list_display = [
        "tool_name",
        "short_error",
        "outcome",
        "strategy",
        "resolution",
        "hit_count",
        "expires_at",
        "agent",
    ]
    list_filter = [
        "outcome",
        ExpiringFilter,
        "tool_name",
        ("agent", admin.RelatedOnlyFieldListFilter),
        embedding_status_filter("errors"),
    ]
    search_fields = ["tool_name", "error", "strategy", "resolution"]
    exclude = ["embedding"]
    readonly_fields = [
        "agent",
        "session",
        "normalized",
        "hit_count",
        "last_hit_at",
        "created_at",
        "updated_at",
        "embedding_model",
        "embedding_error",
        "embedding_attempts",
    ]
    action_form = ResolutionForm
    actions = ["mark_resolved", "extend_ttl", "promote"]
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[ErrorRecord]:
        return super().get_queryset(request).defer("embedding").select_related("agent")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # records come from failing tool calls and the API

    @admin.display(description="error")
    def short_error(self, obj: ErrorRecord) -> str:
        return obj.error[:80]

    @admin.action(description="Mark resolved, with the resolution above")
    def mark_resolved(self, request: HttpRequest, queryset: QuerySet[ErrorRecord]) -> None:
        resolution = (request.POST.get("resolution") or "").strip()
        if not resolution:
            self.message_user(request, "Write the resolution first.", messages.ERROR)
            return
        for record in queryset:
            services.error_record_update(
                record=record, outcome=Outcome.RESOLVED, resolution=resolution
            )
        self.message_user(request, f"{queryset.count()} record(s) marked resolved.")

    @admin.action(description="Extend the TTL (from now)")
    def extend_ttl(self, request: HttpRequest, queryset: QuerySet[ErrorRecord]) -> None:
        done = services.errors_extend(records=list(queryset))
        self.message_user(request, f"{done} record(s) extended.")

    @admin.action(description="Promote to an error learning")
    def promote(self, request: HttpRequest, queryset: QuerySet[ErrorRecord]) -> None:
        promoted = 0
        for record in queryset:
            if record.outcome in (Outcome.RESOLVED, Outcome.FAILED):
                services.error_record_promote(record=record, source=LearningSource.ADMIN)
                promoted += 1
        self.message_user(request, f"{promoted} record(s) promoted (resolved or failed only).")

    def save_model(
        self,
        request: HttpRequest,
        obj: ErrorRecord,
        form: "forms.ModelForm[ErrorRecord]",
        change: bool,
    ) -> None:
        services.error_record_update(
            record=obj, outcome=obj.outcome, strategy=obj.strategy, resolution=obj.resolution
        )


@admin.register(Learning)
class LearningAdmin(TeamScopedAdmin):
    """Seed 001's learnings: approve what consolidation proposed, edit, archive."""

    list_display = [
        "short_content",
        "kind",
        "status",
        "source",
        "seen_count",
        "agent",
        "user",
        "created_at",
    ]
    list_filter = [
        "kind",
        "status",
        "source",
        ("agent", admin.RelatedOnlyFieldListFilter),
        USER_LIST_FILTER,
    ]
    search_fields = ["content", "user"]
    readonly_fields = [
        "user",  # a correction from a user's session is theirs; one added here is the agent's
        "source",
        "session",
        "session_key",
        "error_record",
        "dedup_key",
        "seen_count",
        "last_seen_at",
        "created_at",
        "updated_at",
    ]
    actions = ["approve", "archive"]
    date_hierarchy = "created_at"

    @admin.display(description="content")
    def short_content(self, obj: Learning) -> str:
        return obj.content[:100]

    @admin.action(description="Approve (make active)")
    def approve(self, request: HttpRequest, queryset: QuerySet[Learning]) -> None:
        done = services.learnings_set_status(learnings=list(queryset), status=LearningStatus.ACTIVE)
        self.message_user(request, f"{done} learning(s) approved.")

    @admin.action(description="Archive")
    def archive(self, request: HttpRequest, queryset: QuerySet[Learning]) -> None:
        done = services.learnings_set_status(
            learnings=list(queryset), status=LearningStatus.ARCHIVED
        )
        self.message_user(request, f"{done} learning(s) archived.")

    def save_model(
        self, request: HttpRequest, obj: Learning, form: "forms.ModelForm[Learning]", change: bool
    ) -> None:
        content, kind, status = obj.content, obj.kind, obj.status
        if change:
            services.learning_update(learning=obj, content=content, kind=kind, status=status)
            return
        created = services.learning_create(
            agent=obj.agent,
            source=LearningSource.ADMIN,
            content=content,
            kind=kind,
            status=status,
        )
        obj.pk = created.pk
