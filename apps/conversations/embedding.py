"""Background embedding of messages: scheduled after commit, run by Celery, never in a request.

A message's vector is labelled with the embedder (`embedding_model` = "name@dims"). Failures
are stored in `embedding_error` with an attempt counter; the task retries with backoff and a
beat sweep picks up whatever is still unembedded.
"""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q

from apps.conversations.models import EMBEDDING_DIMENSIONS, Message
from apps.providers.embeddings import EmbeddingError, get_embedder
from apps.search.corpora import vector_label


@dataclass(frozen=True)
class EmbedResult:
    embedded: int
    failed: int
    skipped: int  # already embedded with the current model, or gone
    attempts: int  # highest attempt count among the failed messages (0 when none failed)
    error: str = ""


@dataclass(frozen=True)
class EmbeddingCounts:
    embedded: int  # with the current model
    stale: int  # with another model: `manage.py reembed` replaces them
    pending: int  # no vector yet, no failure recorded
    failed: int  # no vector, last attempt failed: retried with backoff and by the beat sweep
    # until MEMORYHUB_EMBEDDING_MAX_ATTEMPTS, then left to `manage.py reembed` (a message that
    # fails for its own content would otherwise fail every batch it is swept into)


def embedding_text(message: Message) -> str:
    """The text embedded for a message: the participant name with the content, so questions
    naming a person ("what did Caroline say") match that person's first-person messages."""
    return f"{message.name}: {message.content}" if message.name else message.content


def batch_size() -> int:
    return int(getattr(settings, "MEMORYHUB_EMBEDDING_BATCH_SIZE", 64))


def max_attempts() -> int:
    return int(getattr(settings, "MEMORYHUB_EMBEDDING_MAX_ATTEMPTS", 5))


def retry_delay(attempts: int) -> float:
    """Exponential backoff: base * 2^(attempts-1), capped at an hour."""
    base = float(getattr(settings, "MEMORYHUB_EMBEDDING_RETRY_SECONDS", 30.0))
    return min(base * 2 ** max(attempts - 1, 0), 3600.0)


def enqueue_embedding(*, message_ids: Sequence[uuid.UUID]) -> None:
    """Send embedding tasks for the messages now, `batch_size()` ids per task."""
    from apps.conversations.tasks import embed_messages_task  # tasks import this module

    ids = [str(i) for i in message_ids]
    size = batch_size()
    for start in range(0, len(ids), size):
        embed_messages_task.delay(ids[start : start + size])


def schedule_embedding(*, message_ids: Sequence[uuid.UUID]) -> None:
    """Enqueue embedding of the given messages once the current transaction commits."""
    ids = list(message_ids)
    transaction.on_commit(lambda: enqueue_embedding(message_ids=ids))


def messages_embed(*, message_ids: Sequence[uuid.UUID], force: bool = False) -> EmbedResult:
    """Embed the messages lacking a vector of the current model (all of them with `force`).

    Idempotent. On an EmbeddingError the error is stored on each message and its attempt
    counter increases; the caller decides about retrying.
    """
    embedder = get_embedder()
    label = vector_label(embedder)
    qs = Message.objects.filter(pk__in=list(message_ids))
    if not force:
        qs = qs.filter(Q(embedding__isnull=True) | ~Q(embedding_model=label))
    messages = list(qs.only("id", "name", "content").order_by("created_at", "id"))
    skipped = len(set(message_ids)) - len(messages)
    if not messages:
        return EmbedResult(embedded=0, failed=0, skipped=skipped, attempts=0)
    try:
        if embedder.dimensions != EMBEDDING_DIMENSIONS:
            raise EmbeddingError(
                f"{label} makes {embedder.dimensions}-d vectors; messages store "
                f"{EMBEDDING_DIMENSIONS}-d"
            )
        vectors = embedder.embed([embedding_text(m) for m in messages])
    except EmbeddingError as exc:
        error = str(exc)[:2000] or type(exc).__name__
        ids = [m.id for m in messages]
        Message.objects.filter(pk__in=ids).update(
            embedding_error=error, embedding_attempts=F("embedding_attempts") + 1
        )
        attempts = max(
            Message.objects.filter(pk__in=ids).values_list("embedding_attempts", flat=True)
        )
        return EmbedResult(
            embedded=0, failed=len(ids), skipped=skipped, attempts=attempts, error=error
        )
    with transaction.atomic():
        for message, vector in zip(messages, vectors, strict=True):
            # One UPDATE per row: bulk_update's CASE over 384-d literals is slower on both DBs.
            Message.objects.filter(pk=message.pk).update(
                embedding=vector, embedding_model=label, embedding_error=""
            )
    return EmbedResult(embedded=len(messages), failed=0, skipped=skipped, attempts=0)


def messages_pending_ids(*, limit: int) -> list[uuid.UUID]:
    """Messages still without a vector and under the attempt limit, oldest attempts first."""
    qs = Message.objects.filter(embedding__isnull=True, embedding_attempts__lt=max_attempts())
    qs = qs.order_by("embedding_attempts", "created_at")
    return list(qs.values_list("pk", flat=True)[:limit])


def messages_stale_ids(*, label: str, agent_id: int | None = None) -> list[uuid.UUID]:
    """Messages whose vector is missing or was made by another model than `label`."""
    qs = Message.objects.filter(Q(embedding__isnull=True) | ~Q(embedding_model=label))
    if agent_id is not None:
        qs = qs.filter(agent_id=agent_id)
    return list(qs.order_by("created_at", "id").values_list("pk", flat=True))


def embedding_counts(*, agent_id: int | None = None) -> EmbeddingCounts:
    """How many messages are embedded, stale, pending or failed (for one agent, or all)."""
    qs = Message.objects.all()
    if agent_id is not None:
        qs = qs.filter(agent_id=agent_id)
    label = vector_label(get_embedder())
    counts = qs.aggregate(
        embedded=Count("pk", filter=Q(embedding__isnull=False, embedding_model=label)),
        stale=Count("pk", filter=Q(embedding__isnull=False) & ~Q(embedding_model=label)),
        pending=Count("pk", filter=Q(embedding__isnull=True, embedding_error="")),
        failed=Count("pk", filter=Q(embedding__isnull=True) & ~Q(embedding_error="")),
    )
    return EmbeddingCounts(**counts)
