"""Chat models, chosen by `MEMORYHUB_PROVIDERS["llm"]`; None there means no LLM at all."""

from django.core.exceptions import ImproperlyConfigured

from apps.providers._http import Cancellation
from apps.providers.llm.base import (
    JSON_OBJECT,
    JSON_OBJECT_SCHEMA,
    JSON_SCHEMA,
    PROMPT,
    STRUCTURED_MODES,
    ChatMessage,
    ChatModel,
    LLMBadResponse,
    LLMError,
    LLMResult,
    LLMTimeout,
    LLMUnavailable,
)
from apps.providers.loading import ProviderCache, provider_spec

__all__ = [
    "JSON_OBJECT",
    "JSON_OBJECT_SCHEMA",
    "JSON_SCHEMA",
    "PROMPT",
    "STRUCTURED_MODES",
    "Cancellation",
    "ChatMessage",
    "ChatModel",
    "LLMBadResponse",
    "LLMError",
    "LLMResult",
    "LLMTimeout",
    "LLMUnavailable",
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
