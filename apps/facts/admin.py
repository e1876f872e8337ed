from django.contrib import admin

from apps.facts.models import Category, Fact, FactVersion
from apps.facts.services import fact_update
from apps.search.admin import embedding_status_filter


class FactVersionInline(admin.TabularInline):
    """The history of a fact: read-only, it is the audit trail."""

    model = FactVersion
    extra = 0
    can_delete = False
    fields = ["number", "changed_at", "changed_by", "reason", "old_value", "new_value"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Fact)
class FactAdmin(admin.ModelAdmin):
    list_display = ["key", "category", "agent", "short_value", "importance", "salience",
                    "access_count", "source", "valid_to"]  # fmt: skip
    list_filter = ["source", ("valid_to", admin.EmptyFieldListFilter), "agent", "category__name",
                   embedding_status_filter("facts")]  # fmt: skip
    search_fields = ["key", "value", "category__name"]
    list_select_related = ["category", "agent"]
    readonly_fields = ["agent", "normalized", "access_count", "last_accessed_at", "salience",
                       "embedding_model", "embedding_error", "embedding_attempts", "session",
                       "valid_from", "valid_to", "superseded_by", "created_at",
                       "updated_at"]  # fmt: skip
    exclude = ["embedding"]
    inlines = [FactVersionInline]
    date_hierarchy = "created_at"

    @admin.display(description="value")
    def short_value(self, obj: Fact) -> str:
        return obj.value[:80]

    def has_add_permission(self, request) -> bool:
        return False  # facts are saved through memory_save / the API, with dedup

    def save_model(self, request, obj, form, change):
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
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "agent", "created_at"]
    search_fields = ["name"]
    exclude = ["embedding"]
    readonly_fields = ["embedding_model", "embedding_error", "embedding_attempts", "created_at"]
    list_filter = ["agent", embedding_status_filter("categories")]
