"""Automatic triggers: what an append or a get_context sets off, debounced, after commit.

A trigger enqueues a task once per session and kind until that task starts (or the
debounce window passes), so a burst of appends sends one summary task, not one per append.
"""

from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from apps.conversations import selectors as conv
from apps.conversations.models import Session
from apps.core.unavailable import send_or_defer
from apps.lifecycle import services, tasks
from apps.lifecycle.models import Trigger


def _enqueue(kind: str, session: Session, send: Callable[[], object]) -> bool:
    key = tasks.debounce_key(kind, str(session.pk))
    if not cache.add(key, 1, timeout=settings.MEMORYHUB_LIFECYCLE_DEBOUNCE_SECONDS):
        return False
    # A broker that is down leaves the work to the lifecycle's beat sweeps (*_due).
    transaction.on_commit(lambda: send_or_defer(send, what=f"{kind} of session {session.pk}"))
    return True


def after_append(*, session: Session) -> list[str]:
    """Enqueue what the session now needs (summary, consolidation, compaction); returns
    the kinds enqueued."""
    sid = str(session.pk)
    meta = conv.session_meta(session=session)
    due = []
    if services.summary_due(session=session, meta=meta) and _enqueue(
        "summary", session, lambda: tasks.summarize_task.delay(sid, Trigger.AUTO)
    ):
        due.append("summary")
    if services.consolidation_due(session=session) and _enqueue(
        "consolidate", session, lambda: tasks.consolidate_task.delay(sid, Trigger.AUTO)
    ):
        due.append("consolidate")
    hot_bytes = meta.hot_bytes if meta is not None else 0
    if services.compaction_due(session=session, hot_bytes=hot_bytes) and _enqueue(
        "compact", session, lambda: tasks.compact_task.delay(sid, Trigger.AUTO)
    ):
        due.append("compact")
    return due


def context_enqueue(*, session: Session, action: str) -> bool:
    """get_context's flush or write-then-compact, in the background; False if one is
    already on its way."""
    sid = str(session.pk)
    return _enqueue(f"context-{action}", session, lambda: tasks.context_task.delay(sid, action))
