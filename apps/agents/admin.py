from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.agents import services
from apps.agents.models import Agent, ApiKey, Membership, Team


class AgentInline(admin.TabularInline):
    model = Agent
    fields = ["slug", "name", "created_at"]
    readonly_fields = ["created_at"]
    extra = 0
    show_change_link = True


class MembershipInline(admin.TabularInline):
    model = Membership
    fields = ["user", "role", "created_at"]
    readonly_fields = ["created_at"]
    autocomplete_fields = ["user"]
    extra = 0


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline, AgentInline]


class ApiKeyInline(admin.TabularInline):
    model = ApiKey
    fields = ["prefix", "name", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # keys are issued by the action below, so the raw key can be shown once


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "team", "created_at"]
    list_filter = ["team"]
    search_fields = ["slug", "name"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [ApiKeyInline]
    actions = ["issue_key"]

    @admin.action(description="Issue a new API key (shown once)")
    def issue_key(self, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
        for agent in queryset:
            issued = services.api_key_issue(agent=agent, name=f"admin:{request.user}")
            self.message_user(
                request,
                f"New key for {agent.slug} (copy it now, it is not shown again): {issued.raw}",
                messages.WARNING,
            )


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
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
