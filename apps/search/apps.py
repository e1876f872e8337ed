from django.apps import AppConfig


class SearchConfig(AppConfig):
    """The search layer: corpora register with it from their own apps (apps/search/corpora)."""

    name = "apps.search"
    label = "search"
