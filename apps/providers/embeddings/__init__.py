"""Embedders, chosen by `MEMORYHUB_PROVIDERS["embedding"]`, and the one query embedder.

Without that entry the offline MiniLM embedder is used, so a bare install embeds locally.
Documents are embedded in the background by the search layer's pipeline; queries are
embedded here, by `embed_query`, cached per embedder.
"""

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from django.core.exceptions import ImproperlyConfigured

from apps.providers.embeddings.base import Embedder, EmbeddingError
from apps.providers.embeddings.token_embedder import (
    QueryEmbedding,
    TokenEmbedder,
    TokenEmbedding,
    TokenStateError,
)
from apps.providers.loading import ProviderCache, provider_spec

__all__ = [
    "EMBEDDING_DIMENSIONS",
    "Embedder",
    "EmbeddingError",
    "QueryEmbedding",
    "TokenEmbedder",
    "TokenEmbedding",
    "TokenStateError",
    "embed_query",
    "embed_query_tokens",
    "embed_texts",
    "get_embedder",
    "vector_label",
]

# Every vector column stores this many floats (MiniLM's size); an embedder of another size
# is refused when it embeds documents (apps/search/embedding.py).
EMBEDDING_DIMENSIONS = 384

DEFAULT = {"CLASS": "apps.providers.embeddings.minilm.MiniLMEmbedder", "CONFIG": {}}
QUERY_CACHE_SIZE = 512

_cache = ProviderCache()
_queries: "weakref.WeakKeyDictionary[Embedder, OrderedDict[str, QueryEmbedding]]" = (
    weakref.WeakKeyDictionary()
)
_queries_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The configured embedder, built once per process per settings entry."""
    spec = provider_spec("embedding", default=DEFAULT)
    if spec is None:
        raise ImproperlyConfigured('MEMORYHUB_PROVIDERS["embedding"] cannot be None')
    embedder = _cache.get(spec)
    if not isinstance(embedder, Embedder):
        raise ImproperlyConfigured(f"{spec.class_path} does not implement Embedder")
    return embedder


def vector_label(embedder: Embedder | None = None) -> str:
    """What is stored beside each vector: "name@dims" of `embedder` (default: the configured).

    Vector search compares only vectors with the current embedder's label.
    """
    embedder = embedder if embedder is not None else get_embedder()
    return f"{embedder.name}@{embedder.dimensions}"


def embed_texts(texts: Sequence[str]) -> list[list[float]]:
    """Embed with the configured embedder; raises EmbeddingError."""
    return get_embedder().embed(texts)


def embed_query(text: str) -> np.ndarray:
    """The configured embedder's unit vector for a query (float32), from a per-embedder LRU
    cache of the last QUERY_CACHE_SIZE queries; raises EmbeddingError (never cached)."""
    return embed_query_tokens(text).vector


def embed_query_tokens(text: str) -> QueryEmbedding:
    """The query's vector and, from the same model run, its token states when the embedder
    keeps them (`tokens` None otherwise, with `token_error` when that capability failed).

    Cached like embed_query (one entry serves both); a result whose token part failed is not
    cached, so a repaired projection file is used by the next call. Raises EmbeddingError.
    """
    embedder = get_embedder()
    with _queries_lock:
        cached = _queries.setdefault(embedder, OrderedDict())
        found = cached.get(text)
        if found is not None:
            cached.move_to_end(text)
            return found
    if isinstance(embedder, TokenEmbedder):
        found = embedder.embed_query_with_tokens(text)
        vector = np.asarray(found.vector, dtype=np.float32)
    else:
        found = None
        vector = np.asarray(embedder.embed([text])[0], dtype=np.float32)
    vector.setflags(write=False)  # shared between callers
    tokens = found.tokens if found is not None else None
    if tokens is not None:
        tokens = np.asarray(tokens, dtype=np.float32)
        tokens.setflags(write=False)
    result = QueryEmbedding(
        vector=vector,
        tokens=tokens,
        token_space=found.token_space if found is not None else "",
        token_error=found.token_error if found is not None else "",
    )
    if not result.token_error:
        with _queries_lock:
            cached[text] = result
            while len(cached) > QUERY_CACHE_SIZE:
                cached.popitem(last=False)
    return result
