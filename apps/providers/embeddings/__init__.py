"""Embedders, chosen by `MEMORYHUB_PROVIDERS["embedding"]`.

Without that entry the offline MiniLM embedder is used, so a bare install embeds locally.
"""

from collections.abc import Sequence

from django.core.exceptions import ImproperlyConfigured

from apps.providers.embeddings.base import Embedder, EmbeddingError
from apps.providers.loading import ProviderCache, provider_spec

__all__ = ["Embedder", "EmbeddingError", "embed_texts", "get_embedder"]

DEFAULT = {"CLASS": "apps.providers.embeddings.minilm.MiniLMEmbedder", "CONFIG": {}}

_cache = ProviderCache()


def get_embedder() -> Embedder:
    """The configured embedder, built once per process per settings entry."""
    spec = provider_spec("embedding", default=DEFAULT)
    if spec is None:
        raise ImproperlyConfigured('MEMORYHUB_PROVIDERS["embedding"] cannot be None')
    embedder = _cache.get(spec)
    if not isinstance(embedder, Embedder):
        raise ImproperlyConfigured(f"{spec.class_path} does not implement Embedder")
    return embedder


def embed_texts(texts: Sequence[str]) -> list[list[float]]:
    """Embed with the configured embedder; raises EmbeddingError."""
    return get_embedder().embed(texts)
