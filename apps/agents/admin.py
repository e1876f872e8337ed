from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers
from django.utils.html import format_html, format_html_join

from apps.agents import services
from apps.agents.config import CEILING_KEYS, NUMERIC
from apps.agents.models import Agent, ApiKey, AuditEvent, Membership, Team
from apps.agents.scoping import ReadOnlyAdmin, TeamScopedAdmin, TeamScopedTabularInline
from apps.agents.users import user_problem

if TYPE_CHECKING:
    # The stubs' name for a ModelAdmin's `fields` (no runtime name).
    from django.contrib.admin.options import _FieldGroups


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

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        # Ceilings bound what the team's agents may cost the service: superusers set them.
        readonly = list(super().get_readonly_fields(request, obj))
        return readonly if request.user.is_superuser else [*readonly, "ceilings"]


class ApiKeyInline(TeamScopedTabularInline):
    model = ApiKey
    fields = ("prefix", "name", "user", "read_only", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        # Keys are issued by the action below or the API keys' add page, so the raw key can
        # be shown once.
        return False


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
        return _issued_page(self, request, issued)


def _issued_page(
    model_admin: admin.ModelAdmin, request: HttpRequest, issued: list[services.IssuedKey]
) -> TemplateResponse:
    """The page that shows newly issued raw keys, once (never cached)."""
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": "New API keys",
        "issued": issued,
    }
    response = TemplateResponse(request, "admin/agents/issued_key.html", context)
    add_never_cache_headers(response)  # Cache-Control: no-store, among others
    return response


class ApiKeyAddForm(forms.ModelForm):
    """A new key: its agent, a name, and its scope (issue 39): one end user, read-only."""

    class Meta:
        model = ApiKey
        fields = ["agent", "name", "user", "read_only"]
        help_texts = {
            "user": "Bind the key to this end user (your id for them): every call acts as them "
            "and may name no other. Empty: the key acts for every user of the agent.",
            "read_only": "The key may only read: every write is refused (403).",
        }

    def clean_user(self) -> str:
        value = self.cleaned_data.get("user") or ""
        if value and (problem := user_problem(value)):
            raise forms.ValidationError(problem)
        return value.strip()


@admin.register(ApiKey)
class ApiKeyAdmin(TeamScopedAdmin):
    list_display = ["prefix", "agent", "name", "scope", "created_at", "last_used_at",
                    "revoked_at"]  # fmt: skip
    list_filter = [("revoked_at", admin.EmptyFieldListFilter), "read_only", "agent__team"]
    search_fields = ["prefix", "name", "user", "agent__slug"]
    readonly_fields = ["agent", "prefix", "hashed_key", "user", "read_only", "created_at",
                       "last_used_at", "revoked_at"]  # fmt: skip
    fields = ["agent", "name", *readonly_fields[1:]]
    actions = ["revoke"]

    @admin.display(description="scope")
    def scope(self, obj: ApiKey) -> str:
        return obj.scope.describe()

    # Any: ModelAdmin.get_form passes its keyword arguments on to modelform_factory (Any).
    def get_form(
        self, request: HttpRequest, obj: Model | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        if obj is None:  # a new key: the form of its agent, name and scope
            kwargs["form"] = ApiKeyAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Model | None = None) -> "_FieldGroups":
        return tuple(ApiKeyAddForm.Meta.fields if obj is None else self.fields or ())

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        return [] if obj is None else self.readonly_fields

    def save_model(
        self, request: HttpRequest, obj: ApiKey, form: forms.ModelForm, change: bool
    ) -> None:
        """A new key is issued by the service (its secret drawn there); the raw key goes to
        response_add's page alone."""
        if change:
            super().save_model(request, obj, form, change)
            return
        issued = services.api_key_issue(
            agent=obj.agent, name=obj.name, user=obj.user or None, read_only=obj.read_only
        )
        for field in ("id", "prefix", "hashed_key", "user", "created_at"):
            setattr(obj, field, getattr(issued.api_key, field))
        obj._state.adding = False
        request.issued_key = issued  # type: ignore[attr-defined]

    def response_add(
        self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None
    ) -> HttpResponse:
        """The raw key on this response's page only: no message, no cookie, no cache."""
        return _issued_page(self, request, [request.issued_key])  # type: ignore[attr-defined]

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
