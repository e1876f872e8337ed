"""A session's messages in order: pages, the hot part, and the cursors' ranges."""

import uuid
from collections.abc import Sequence
from datetime import datetime

from django.db.models import Q, QuerySet

from apps.conversations import working_memory
from apps.conversations.models import Message, Session, SessionMeta
from apps.conversations.selectors.session_lookup import as_utc, session_meta
from apps.core.pagination import Page, keyset_paginate


def messages_page(
    *,
    session: Session,
    after: datetime | None = None,
    before: datetime | None = None,
    roles: Sequence[str] | None = None,
    cursor: str | None = None,
    limit: int = 100,
    descending: bool = False,
) -> Page[Message]:
    """Messages of a session in time order, filtered by time range (a time without offset
    is UTC) and role."""
    qs = Message.objects.filter(session=session).defer("embedding")
    if after is not None:
        qs = qs.filter(created_at__gt=as_utc(after))
    if before is not None:
        qs = qs.filter(created_at__lt=as_utc(before))
    if roles:
        qs = qs.filter(role__in=roles)
    return keyset_paginate(
        qs, fields=("created_at", "id"), cursor=cursor, limit=limit, descending=descending
    )


def hot_part(qs: QuerySet[Message], meta: SessionMeta | None) -> QuerySet[Message]:
    if meta is not None and meta.start_at is not None:
        return qs.filter(created_at__gte=meta.start_at)
    return qs


def hot_messages(*, session: Session) -> QuerySet[Message]:
    """Messages at or after the latest compaction cutoff (the hot window's pool)."""
    qs = Message.objects.filter(session=session).defer("embedding")
    return hot_part(qs, session_meta(session=session))


def session_recent_messages(*, session: Session, limit: int) -> list[Message]:
    """The last `limit` hot messages, oldest first; served from working memory when it fits."""
    cap = session.agent.config.working_memory_cap

    def load(n: int) -> list[Message]:
        rows = list(hot_messages(session=session).order_by("-created_at", "-id")[:n])
        rows.reverse()
        return rows

    if limit > cap:
        return load(limit)
    cached = working_memory.read_through(session.id, lambda: load(cap))
    return cached[-limit:] if limit else []


def after(at: datetime, pk: uuid.UUID) -> Q:
    """Messages strictly after (at, pk) in session order."""
    return Q(created_at__gt=at) | Q(created_at=at, id__gt=pk)


def before(at: datetime, pk: uuid.UUID) -> Q:
    """Messages strictly before (at, pk) in session order."""
    return Q(created_at__lt=at) | Q(created_at=at, id__lt=pk)


def session_messages(*, session: Session) -> QuerySet[Message]:
    """All of a session's messages in order, without vectors."""
    return Message.objects.filter(session=session).defer("embedding").order_by("created_at", "id")


def window_first(*, session: Session, meta: SessionMeta | None) -> Message | None:
    """The oldest message of the hot window, only its id and time (None: it is empty)."""
    size = session.agent.config.max_history_messages
    qs = hot_part(Message.objects.filter(session=session), meta)
    rows = list(qs.order_by("-created_at", "-id").only("id", "created_at")[:size])
    return rows[-1] if rows else None


def messages_left_window(*, session: Session, meta: SessionMeta | None) -> QuerySet[Message]:
    """Messages that have left the hot window and are not in the rolling summary yet
    (seed 000: after summary_cursor, older than the last max_history_messages)."""
    qs = session_messages(session=session)
    # The cursor's time and id are set together.
    if meta is not None and meta.summary_cursor is not None and meta.summary_cursor_id is not None:
        qs = qs.filter(after(meta.summary_cursor, meta.summary_cursor_id))
    first = window_first(session=session, meta=meta)
    if first is None:
        return qs.none()
    return qs.filter(before(first.created_at, first.id))


def unconsolidated_messages(*, session: Session) -> QuerySet[Message]:
    """The session's messages no consolidation has covered yet, oldest first."""
    return session_messages(session=session).filter(consolidated_at__isnull=True)
