from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers
from django.utils.html import format_html, format_html_join

from apps.agents import services
from apps.agents.config import CEILING_KEYS, NUMERIC
from apps.agents.models import Agent, ApiKey, AuditEvent, Membership, Team
from apps.agents.scoping import ReadOnlyAdmin, TeamScopedAdmin, TeamScopedTabularInline


class AgentInline(TeamScopedTabularInline):
    model = Agent
    fields = ["slug", "name", "created_at"]
    readonly_fields = ["created_at"]
    extra = 0
    show_change_link = True


class MembershipInline(TeamScopedTabularInline):
    model = Membership
    fields = ["user", "role", "created_at"]
    readonly_fields = ["created_at"]
    autocomplete_fields = ["user"]
    extra = 0


def _ceilings_help() -> str:
    maxima = format_html_join(
        "", "<li><code>{}</code> ≤ {}</li>", ((k, f"{NUMERIC[k].high:,}") for k in CEILING_KEYS)
    )
    return format_html(
        "A JSON object of setting → ceiling, e.g. "
        '<code>{{"max_content_bytes": 65536, "recall_k": 20}}</code>. '
        "The team's agents may lower these settings but not raise them past the ceiling, and "
        "a lower ceiling applies at once to agents whose setting is higher. A setting not "
        "listed keeps its global maximum. The settings with a ceiling, and their global "
        "maxima:<ul>{}</ul>",
        maxima,
    )


class TeamForm(forms.ModelForm):
    class Meta:
        model = Team
        fields = ["name", "agents_md", "ceilings"]
        widgets = {"agents_md": forms.Textarea(attrs={"rows": 16, "cols": 100})}
        help_texts = {"ceilings": _ceilings_help()}  # Team.clean() validates


@admin.register(Team)
class TeamAdmin(TeamScopedAdmin):
    form = TeamForm
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline, AgentInline]

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> list[str]:
        # Ceilings bound what the team's agents may cost the service: superusers set them.
        readonly = list(super().get_readonly_fields(request, obj))
        return readonly if request.user.is_superuser else [*readonly, "ceilings"]


class ApiKeyInline(TeamScopedTabularInline):
    model = ApiKey
    fields = ("prefix", "name", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # keys are issued by the action below, so the raw key can be shown once


@admin.register(Agent)
class AgentAdmin(TeamScopedAdmin):
    list_display = ["slug", "name", "team", "created_at"]
    list_filter = ["team"]
    search_fields = ["slug", "name"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [ApiKeyInline]
    actions = ["issue_key"]

    @admin.action(description="Issue a new API key (shown once)")
    def issue_key(self, request: HttpRequest, queryset: QuerySet[Agent]) -> TemplateResponse | None:
        """The raw keys are on this response's page only: no message, no cookie, no cache."""
        if not queryset.exists():  # the selection held only agents of other teams
            self.message_user(request, "No agent of your teams was selected.", messages.ERROR)
            return None
        issued = []
        for agent in queryset:  # the scoped queryset: only agents of the user's teams
            key = services.api_key_issue(agent=agent, name=f"admin:{request.user}")
            services.audit_record(
                user=request.user,
                agent=agent,
                source="admin",
                action="apikey.issue",
                target=key.api_key,
                after=services.snapshot(key.api_key, ["prefix", "name", "created_at"]),
            )
            issued.append(key)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "New API keys",
            "issued": issued,
        }
        response = TemplateResponse(request, "admin/agents/issued_key.html", context)
        add_never_cache_headers(response)  # Cache-Control: no-store, among others
        return response


@admin.register(ApiKey)
class ApiKeyAdmin(TeamScopedAdmin):
    list_display = ["prefix", "agent", "name", "created_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter), "agent__team"]
    search_fields = ["prefix", "name", "agent__slug"]
    readonly_fields = ["agent", "prefix", "hashed_key", "created_at", "last_used_at", "revoked_at"]
    fields = ["agent", "name", *readonly_fields[1:]]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for api_key in queryset:
            services.api_key_revoke(api_key=api_key)
        self.message_user(request, f"Revoked {queryset.count()} key(s).")


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    """Who changed what, from a review page or here: read-only."""

    list_display = ["created_at", "username", "source", "action", "object_type", "object_id",
                    "agent"]  # fmt: skip
    list_filter = ["source", "action", "agent"]
    search_fields = ["username", "action", "object_id"]
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in AuditEvent._meta.concrete_fields]
