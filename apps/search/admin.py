"""Admin pieces every corpus shares: the embedding status filter (the backlog per corpus is
on the admin index, templates/admin/index.html via the search_admin template tags)."""

from django.contrib import admin
from django.contrib.admin import ModelAdmin
from django.db.models import Count, Field, Model, Q, QuerySet
from django.http import HttpRequest

from apps.search.corpora import get_corpus


class HasVectorFilter(admin.EmptyFieldListFilter):
    """("embedding", HasVectorFilter): whether a row has its vector, titled apart from the
    embedding status filter (both would read "By embedding")."""

    def __init__(
        self,
        field: Field,
        request: HttpRequest,
        params: dict[str, list[str]],
        model: type[Model],
        model_admin: ModelAdmin,
        field_path: str,
    ) -> None:
        super().__init__(field, request, params, model, model_admin, field_path)
        self.title = "has vector"


def embedding_status_filter(corpus_name: str) -> type[admin.SimpleListFilter]:
    """A list filter embedded / pending / failed, each with its count, for a corpus's admin."""

    class EmbeddingStatusFilter(admin.SimpleListFilter):
        title = "embedding status"
        parameter_name = "embedding_status"

        def _queries(self) -> dict[str, Q]:
            c = get_corpus(corpus_name)
            no_vector = Q(**{f"{c.vector_field}__isnull": True})
            return {
                "embedded": Q(**{f"{c.vector_field}__isnull": False}),
                "pending": no_vector & Q(**{c.error_field: ""}),
                "failed": no_vector & ~Q(**{c.error_field: ""}),
            }

        def lookups(
            self,
            request: HttpRequest,
            model_admin: ModelAdmin,
        ) -> list[tuple[str, str]]:
            queries = self._queries()
            counts = model_admin.get_queryset(request).aggregate(
                **{name: Count("pk", filter=q) for name, q in queries.items()}
            )
            return [(name, f"{name} ({counts[name]})") for name in queries]

        def queryset(
            self,
            request: HttpRequest,
            queryset: QuerySet,
        ) -> QuerySet:
            q = self._queries().get(self.value() or "")
            return queryset.filter(q) if q is not None else queryset

    return EmbeddingStatusFilter
