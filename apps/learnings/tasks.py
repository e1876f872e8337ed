"""Error memory's TTL (seed 000): the beat deletes what is past its expiry."""

import logging

from celery import shared_task

from apps.learnings.services import errors_expire

logger = logging.getLogger(__name__)


@shared_task(name="learnings.expire_errors", acks_late=True, soft_time_limit=50, time_limit=60)
def expire_errors_task() -> int:
    """Delete every error record past its expires_at; logs and returns how many."""
    deleted = errors_expire()
    logger.info("error memory: %d expired record(s) deleted", deleted)
    return deleted
