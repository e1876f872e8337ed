from django.apps import AppConfig


class ReviewConfig(AppConfig):
    """Server-rendered pages where teams browse, search and curate their agents' memory.
    No models: every change goes through the domain apps' services."""

    name = "apps.review"
    label = "review"
