"""System check: MEMORYHUB_PROVIDERS must name importable classes that accept their CONFIG."""

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from apps.providers.embeddings import get_embedder
from apps.providers.llm import get_chat_model


def check_providers(
    app_configs: Sequence[AppConfig] | None = None,
    **kwargs: Any,  # Any: a system check's keyword arguments, as Django passes them
) -> list[checks.CheckMessage]:
    """One Error per provider entry that cannot be built; nothing is loaded or contacted."""
    errors: list[checks.CheckMessage] = []
    getters = (
        (get_embedder, "providers.E001"),
        (get_chat_model, "providers.E002"),
    )
    for getter, error_id in getters:
        try:
            getter()
        except ImproperlyConfigured as exc:
            errors.append(checks.Error(str(exc), id=error_id))
    return errors
