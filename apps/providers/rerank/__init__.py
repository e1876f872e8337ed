"""Rerankers, chosen by `MEMORYHUB_PROVIDERS["rerank"]`.

Without that entry the offline MiniLM late-interaction reranker is used (the embedder's own
pinned weights, nothing downloaded); None selects the null reranker. Whether a search is
reranked at all is the agent's `rerank` setting (apps/search/rerank.py).
"""

from django.core.exceptions import ImproperlyConfigured

from apps.providers.loading import ProviderCache, provider_spec
from apps.providers.rerank.base import Reranker, RerankError
from apps.providers.rerank.null import NullReranker

__all__ = ["RerankError", "Reranker", "get_reranker"]

DEFAULT = {"CLASS": "apps.providers.rerank.maxsim.MiniLMMaxSimReranker", "CONFIG": {}}

_cache = ProviderCache()


def get_reranker() -> Reranker:
    """The configured reranker, built once per process per settings entry."""
    spec = provider_spec("rerank", default=DEFAULT)
    if spec is None:
        return NullReranker()
    reranker = _cache.get(spec)
    if not isinstance(reranker, Reranker):
        raise ImproperlyConfigured(f"{spec.class_path} does not implement Reranker")
    return reranker
