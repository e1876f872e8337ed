from django import forms
from django.contrib import admin, messages
from django.db.models import Field, QuerySet
from django.http import HttpRequest

from apps.agents.scoping import USER_LIST_FILTER, TeamScopedAdmin, TeamScopedTabularInline
from apps.core.errors import ApplicationError
from apps.facts.models import Category, Fact, FactVersion
from apps.facts.services import fact_merge, fact_update, facts_approve
from apps.search.admin import embedding_status_filter


class FactVersionInline(TeamScopedTabularInline):
    """The history of a fact: read-only, it is the audit trail."""

    model = FactVersion
    extra = 0
    can_delete = False
    fields = ("number", "changed_at", "changed_by", "reason", "old_value", "new_value")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Fact | None = None) -> bool:
        return False


class CategoryFilter(admin.AllValuesFieldListFilter):
    """The category names of the facts listed, titled "category" (not the field's "name")."""

    def __init__(
        self,
        field: "Field[object, object]",
        request: HttpRequest,
        params: dict[str, list[str]],
        model: type[Fact],
        model_admin: "admin.ModelAdmin[Fact]",
        field_path: str,
    ) -> None:
        super().__init__(field, request, params, model, model_admin, field_path)
        self.title = "category"


@admin.register(Fact)
class FactAdmin(TeamScopedAdmin):
    list_display = [
        "key",
        "category",
        "agent",
        "short_value",
        "status",
        "importance",
        "salience_2dp",
        "access_count",
        "source",
        "user",  # after the rest: ?o= column numbers stay as they were
        "valid_to",
    ]
    list_filter = [
        "status",
        "source",
        ("valid_to", admin.EmptyFieldListFilter),
        "agent",
        USER_LIST_FILTER,
        ("category__name", CategoryFilter),
        embedding_status_filter("facts"),
    ]
    search_fields = ["key", "value", "category__name", "user"]
    list_select_related = ["category", "agent"]
    readonly_fields = [
        "agent",
        "user",  # whose fact it is: part of its key, so not moved between users here
        "normalized",
        "access_count",
        "last_accessed_at",
        "salience_2dp",
        "embedding_model",
        "embedding_error",
        "embedding_attempts",
        "session",
        "valid_from",
        "valid_to",
        "superseded_by",
        "created_at",
        "updated_at",
    ]
    exclude = ["embedding", "salience"]  # salience: shown rounded, read-only
    inlines = [FactVersionInline]
    date_hierarchy = "created_at"
    actions = ["approve", "merge"]

    @admin.action(description="Approve (pending facts become active)")
    def approve(self, request: HttpRequest, queryset: QuerySet[Fact]) -> None:
        who = f"admin:{request.user.get_username()}"
        done = sum(
            facts_approve(
                agent=agent, facts=[f for f in queryset if f.agent_id == agent.pk], changed_by=who
            )
            for agent in {f.agent for f in queryset}
        )
        self.message_user(request, f"{done} fact(s) approved.")

    @admin.action(description="Merge two duplicates (into the older, keeping both histories)")
    def merge(self, request: HttpRequest, queryset: QuerySet[Fact]) -> None:
        facts = sorted(queryset, key=lambda f: f.pk)
        if len(facts) != 2 or facts[0].agent_id != facts[1].agent_id:
            self.message_user(request, "Select exactly two facts of one agent.", messages.ERROR)
            return
        try:
            kept = fact_merge(
                agent=facts[0].agent,
                keep=facts[0],
                other=facts[1],
                changed_by=f"admin:{request.user.get_username()}",
            )
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return
        self.message_user(request, f"Fact #{facts[1].pk} merged into #{kept.pk}.")

    @admin.display(description="salience", ordering="salience")
    def salience_2dp(self, obj: Fact) -> str:
        return f"{obj.salience:.2f}"

    @admin.display(description="value")
    def short_value(self, obj: Fact) -> str:
        return obj.value[:80]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # facts are saved through memory_save / the API, with dedup

    def save_model(
        self, request: HttpRequest, obj: Fact, form: "forms.ModelForm[Fact]", change: bool
    ) -> None:
        # Edits go through the service so every change records a version. The admin holds a
        # transaction around the whole view, so the new value is embedded after commit.
        original = Fact.objects.get(pk=obj.pk)
        new_value, obj.value = obj.value, original.value
        fact_update(
            agent=obj.agent,
            fact=obj,
            changed_by=f"admin:{request.user.get_username()}",
            reason="edited in admin",
            value=new_value,
            key=obj.key,
            importance=obj.importance,
            embed_now=False,
        )


@admin.register(Category)
class CategoryAdmin(TeamScopedAdmin):
    list_display = ["name", "agent", "created_at"]
    search_fields = ["name"]
    exclude = ["embedding"]
    readonly_fields = ["embedding_model", "embedding_error", "embedding_attempts", "created_at"]
    list_filter = ["agent", embedding_status_filter("categories")]
