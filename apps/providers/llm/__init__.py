"""Chat models, chosen by `MEMORYHUB_PROVIDERS["llm"]`; None there means no LLM at all. The
interface, its modes and errors are in apps/providers/llm/base.py."""

from django.core.exceptions import ImproperlyConfigured

from apps.providers._http import Cancellation
from apps.providers.llm.base import (
    STRUCTURED_MODES,
    ChatMessage,
    ChatModel,
    LLMError,
    LLMResult,
    LLMTimeout,
)
from apps.providers.loading import ProviderCache, provider_spec

__all__ = [
    "STRUCTURED_MODES",
    "Cancellation",
    "ChatMessage",
    "ChatModel",
    "LLMError",
    "LLMResult",
    "LLMTimeout",
    "get_chat_model",
]

_cache = ProviderCache()


def get_chat_model() -> ChatModel | None:
    """The configured chat model, or None: callers then use their extractive fallback."""
    spec = provider_spec("llm")
    if spec is None:
        return None
    model = _cache.get(spec)
    if not isinstance(model, ChatModel):
        raise ImproperlyConfigured(f"{spec.class_path} does not implement ChatModel")
    return model
