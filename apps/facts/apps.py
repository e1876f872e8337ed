from django.apps import AppConfig


def render_fact(fact):
    from apps.search.corpora import Rendered

    return Rendered(kind="fact", title=f"{fact.category.name}/{fact.key}", text=fact.value)


def fact_text(fact) -> str:
    return fact.value


def category_text(category) -> str:
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
