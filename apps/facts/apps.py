from typing import TYPE_CHECKING

from django.apps import AppConfig
from django.db.models import Model

if TYPE_CHECKING:
    from apps.search.corpora import Rendered


def render_fact(fact: Model) -> "Rendered":
    from apps.facts.models import Fact
    from apps.search.corpora import Rendered

    assert isinstance(fact, Fact)  # the facts corpus reads Fact rows

    return Rendered(kind="fact", title=f"{fact.category.name}/{fact.key}", text=fact.value)


def fact_text(fact: Model) -> str:
    from apps.facts.models import Fact

    assert isinstance(fact, Fact)
    return fact.value


def category_text(category: Model) -> str:
    from apps.facts.models import Category

    assert isinstance(category, Category)  # the categories corpus reads Category rows
    return category.name


class FactsConfig(AppConfig):
    name = "apps.facts"
    label = "facts"

    def ready(self) -> None:
        from apps.facts.models import Category, Fact, FactTokens
        from apps.search.corpora import Corpus, TokenStore, register

        register(
            Corpus(
                name="facts",
                model=Fact,
                text_fields=("key", "value"),
                embed=fact_text,
                embed_fields=("value",),
                kind_field="category",
                select_related=("category",),
                render=render_fact,
                tokens=TokenStore(model=FactTokens, owner_field="fact"),
            )
        )
        # Category names are embedded for auto-categorisation and recall tier 1 and compared
        # in numpy (an agent has tens of them): vectors, no keyword or ANN index.
        register(
            Corpus(
                name="categories",
                model=Category,
                embed=category_text,
                embed_fields=("name",),
                vector_index=False,
            )
        )
