"""Celery tasks for conversations: thin wrappers taking ids; the work is in embedding.py."""

import uuid

from celery import shared_task

from apps.conversations import embedding


@shared_task(
    bind=True,
    name="conversations.embed_messages",
    max_retries=None,  # bounded by MEMORYHUB_EMBEDDING_MAX_ATTEMPTS on the messages instead
    soft_time_limit=240,
    time_limit=300,
)
def embed_messages_task(self, message_ids: list[str]) -> int:
    """Embed these messages (idempotent); on failure retry with backoff up to max attempts."""
    result = embedding.messages_embed(message_ids=[uuid.UUID(i) for i in message_ids])
    if result.failed and result.attempts < embedding.max_attempts() and not self.request.is_eager:
        # Eager runs (tests, CELERY_TASK_ALWAYS_EAGER) leave retries to the beat sweep.
        raise self.retry(countdown=embedding.retry_delay(result.attempts))
    return result.embedded


@shared_task(name="conversations.embed_pending", soft_time_limit=50, time_limit=60)
def embed_pending_task(limit: int = 2000) -> int:
    """Beat sweep: enqueue every message still without a vector (under max attempts)."""
    ids = embedding.messages_pending_ids(limit=limit)
    embedding.enqueue_embedding(message_ids=ids)
    return len(ids)
