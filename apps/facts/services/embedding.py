"""Embedding fact text at write time, and later for facts whose embedding failed."""

import logging
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction

from apps.facts.models import Fact
from apps.providers.embeddings import EmbeddingError, get_embedder
from apps.search.corpora import vector_label

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Embedding:
    vector: np.ndarray | None
    model: str
    error: str


def embed(value: str) -> Embedding:
    """One embedding, or the error that stopped it."""
    try:
        embedder = get_embedder()
        vector = np.asarray(embedder.embed([value])[0], dtype=np.float32)
    except EmbeddingError as exc:
        logger.warning("fact embedding failed: %s", exc)
        return Embedding(vector=None, model="", error=str(exc)[:1000] or "embedding failed")
    return Embedding(vector=vector, model=vector_label(embedder), error="")


def schedule_embedding(fact_id: int) -> None:
    """Queue `facts.embed_fact` for after the current transaction commits."""
    from apps.facts.tasks import embed_fact_task

    transaction.on_commit(lambda: embed_fact_task.delay(fact_id))


def fact_embed(*, fact_id: int) -> bool | None:
    """Embed a fact that has no vector yet. Idempotent.

    True: it has a vector now; False: the embedder failed (the error is stored); None: no
    such fact, nothing to retry.
    """
    fact = Fact.objects.filter(pk=fact_id).only("id", "value", "embedding").first()
    if fact is None:
        return None
    if fact.embedding is not None:
        return True
    emb = embed(fact.value)
    Fact.objects.filter(pk=fact_id, embedding__isnull=True, value=fact.value).update(
        embedding=emb.vector, embedding_model=emb.model, embedding_error=emb.error
    )
    return emb.vector is not None


def embed_retry_delay(*, retries: int) -> float:
    """Backoff before retry number `retries + 1`: the messages' base, doubling, at most 1 h."""
    base = float(getattr(settings, "MEMORYHUB_EMBEDDING_RETRY_SECONDS", 30.0))
    return min(base * 2**retries, 3600.0)
