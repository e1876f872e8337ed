from django import forms
from django.contrib import admin
from django.http import HttpRequest

from apps.agents.scoping import USER_LIST_FILTER, TeamScopedAdmin, TeamScopedTabularInline
from apps.entries.models import Entry, EntryAlias
from apps.entries.services import entry_set_content
from apps.search.admin import embedding_status_filter


class EntryAliasInline(TeamScopedTabularInline):
    model = EntryAlias
    extra = 0
    fields = ["name", "created_at"]
    readonly_fields = ["name", "created_at"]

    def has_add_permission(self, request: HttpRequest, obj: Entry | None = None) -> bool:
        return False  # aliases are added through the API so collisions are checked


@admin.register(Entry)
class EntryAdmin(TeamScopedAdmin):
    list_display = ["name", "agent", "user", "kind", "needs_compression", "created_at",
                    "updated_at"]  # fmt: skip
    list_filter = ["kind", "needs_compression", "agent", USER_LIST_FILTER,
                   embedding_status_filter("entries")]  # fmt: skip
    search_fields = ["name", "content", "aliases__name", "user"]
    # `user` with `name`: the entry's identity (unique per agent and owner).
    readonly_fields = ["agent", "user", "name", "kind", "token_count", "needs_compression",
                       "unindexed", "index_fields", "embedding_model", "embedding_error",
                       "embedding_attempts", "created_at", "updated_at"]  # fmt: skip
    exclude = ["embedding"]
    inlines = [EntryAliasInline]
    date_hierarchy = "created_at"

    def save_model(
        self, request: HttpRequest, obj: Entry, form: "forms.ModelForm[Entry]", change: bool
    ) -> None:
        # Content edited here keeps its derived fields (token count, MEMORY.md flag, vector)
        # in step: entry_set_content compares it with the content before the edit.
        edited = obj.content
        if change:
            obj.content = form.initial.get("content", edited)
        entry_set_content(entry=obj, agent=obj.agent, content=edited)
        super().save_model(request, obj, form, change)
