"""Reads for sessions and messages, always scoped to one agent."""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet

from apps.agents.models import Agent
from apps.conversations import working_memory
from apps.conversations.models import CompactMarker, Message, Session, SessionMeta, Summary
from apps.conversations.recap import Recap, recap_text
from apps.conversations.turns import open_results, widen_to_calls
from apps.core.errors import NotFound
from apps.core.fields import to_utc
from apps.core.pagination import Page, keyset_paginate

# Hot messages read back, past working memory, for the call of a result the window opens on.
TURN_LOOKBACK = 64


def as_utc(value: datetime) -> datetime:
    """Aware UTC; a naive time is read in settings.TIME_ZONE (apps.core.fields.to_utc)."""
    return to_utc(value)


def session_get(*, agent: Agent, ref: str) -> Session:
    """The agent's session by id or by its own key; NotFound for anything else."""
    qs = Session.objects.filter(agent=agent)
    try:
        session = qs.filter(pk=uuid.UUID(ref)).first()
    except ValueError:
        session = None
    if session is None:
        session = qs.filter(key=ref).first()
    if session is None:
        raise NotFound("session not found", loc=["path", "session_id"])
    session.agent = agent  # already loaded: spare the query
    return session


def sessions_page(
    *, agent: Agent, cursor: str | None, limit: int, user: str | None
) -> Page[Session]:
    """The agent's sessions of `user` alone when given ("": those without a user), newest
    first."""
    qs = Session.objects.filter(agent=agent)
    if user is not None:
        qs = qs.filter(user=user)
    return keyset_paginate(
        qs, fields=("created_at", "id"), cursor=cursor, limit=limit, descending=True
    )


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


def session_meta(*, session: Session) -> SessionMeta | None:
    return SessionMeta.objects.filter(session=session).first()


def session_summary(*, session: Session) -> Summary | None:
    return Summary.objects.filter(session=session).first()


def _hot(qs: QuerySet[Message], meta: SessionMeta | None) -> QuerySet[Message]:
    if meta is not None and meta.start_at is not None:
        return qs.filter(created_at__gte=meta.start_at)
    return qs


def hot_messages(*, session: Session) -> QuerySet[Message]:
    """Messages at or after the latest compaction cutoff (the hot window's pool)."""
    qs = Message.objects.filter(session=session).defer("embedding")
    return _hot(qs, session_meta(session=session))


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


def session_markers(*, session: Session) -> list[CompactMarker]:
    """The session's compact markers, oldest first (seed 003)."""
    return list(CompactMarker.objects.filter(session=session).order_by("archived_at", "id"))


@dataclass(frozen=True)
class Window:
    session: Session
    start_at: datetime | None
    summary: str | None
    messages: list[Message]
    markers: list[CompactMarker]
    unsummarised: int = 0  # messages carried past max_history_messages: not summarised yet
    recap: Recap | None = None


def _key(m: Message) -> tuple[datetime, uuid.UUID]:
    return (m.created_at, m.pk)


def _unsummarised(session: Session, pool: list[Message], size: int, full: bool) -> list[Message]:
    """The hot messages older than the window (the newest `size` of `pool`) after the summary
    cursor, oldest first: the newest window_unsummarised_max of them. `pool`: the newest hot
    messages, all of them when `full`; read from it when it reaches back to the cursor."""
    config = session.agent.config
    meta = session_meta(session=session)
    cursor = (meta.summary_cursor, meta.summary_cursor_id) if meta else (None, None)
    start = pool[-size]
    if full or (cursor[0] is not None and _key(pool[0]) <= cursor):
        found = [m for m in pool[:-size] if cursor[0] is None or _key(m) > cursor]
        return found[-config.window_unsummarised_max :]
    qs = _hot(session_messages(session=session), meta).filter(before(start.created_at, start.pk))
    at, pk = cursor
    if at is not None and pk is not None:  # set together
        qs = qs.filter(after(at, pk))
    rows = list(qs.order_by("-created_at", "-id")[: config.window_unsummarised_max])
    rows.reverse()
    return rows


def window_messages(*, session: Session, limit: int) -> list[Message]:
    """The newest `limit` hot messages, oldest first; with window_includes_unsummarised,
    reaching back without a gap over the messages that left seed 000's window and that the
    summary does not cover yet (docs/lifecycle.md, "Window and summary"); and back to the
    call of any tool result it would start with (turns.py), so it never opens on an orphan."""
    messages, pool, full = _window(session, limit)
    return _with_calls(session, messages, pool, full)


def _window(session: Session, limit: int) -> tuple[list[Message], list[Message], bool]:
    """window_messages before it reaches back to calls; the working-memory pool it read
    (oldest first), and whether that pool holds every hot message."""
    config = session.agent.config
    size = config.max_history_messages
    # Working memory holds the newest working_memory_cap: usually all that is needed.
    n = max(limit, size, config.working_memory_cap)
    pool = session_recent_messages(session=session, limit=n)
    full = len(pool) < n
    recent = pool[-limit:]
    off = not config.window_includes_unsummarised or config.window_unsummarised_max == 0
    if off or len(pool) <= size:
        return recent, pool, full  # off, or no message has left the window
    left = _unsummarised(session, pool, size, full=full)
    if not left or _key(left[0]) >= _key(recent[0]):
        return recent, pool, full
    if _key(left[0]) >= _key(pool[0]):
        return [m for m in pool if _key(m) >= _key(left[0])], pool, full
    hot = _hot(session_messages(session=session), session_meta(session=session))
    return list(hot.exclude(before(left[0].created_at, left[0].pk))), pool, full


def _with_calls(
    session: Session, messages: list[Message], pool: list[Message], full: bool
) -> list[Message]:
    """`messages` widened back to the calls its first tool results answer: from the pool
    when it reaches back to them, else from the TURN_LOOKBACK hot messages before it."""
    if not messages or not open_results(messages):
        return messages
    older = [m for m in pool if _key(m) < _key(messages[0])]
    widened = widen_to_calls(messages, older)
    if full or len(older) >= TURN_LOOKBACK or not open_results(widened):
        return widened
    first = messages[0]
    hot = _hot(session_messages(session=session), session_meta(session=session))
    rows = list(
        hot.filter(before(first.created_at, first.pk)).order_by("-created_at", "-id")[
            :TURN_LOOKBACK
        ]
    )
    rows.reverse()
    return widen_to_calls(messages, rows)


def session_recap(*, session: Session, shown: Sequence[Message]) -> Recap | None:
    """Seed 004's recap: the hot messages after the newest consolidated one and older than
    every `shown` message (what the agent gets in full), the newest recap_messages of them.
    None before any consolidation, or when no such message is left."""
    config = session.agent.config
    if config.recap_messages == 0 or not shown:
        return None
    consolidated = Message.objects.filter(session=session, consolidated_at__isnull=False)
    cutoff = consolidated.order_by("-created_at", "-id").only("id", "created_at").first()
    if cutoff is None:
        return None
    oldest = min(shown, key=_key)
    remaining = _hot(session_messages(session=session), session_meta(session=session)).filter(
        after(cutoff.created_at, cutoff.pk), before(oldest.created_at, oldest.pk)
    )
    rows = list(remaining.order_by("-created_at", "-id")[: config.recap_messages])
    if not rows:
        return None
    rows.reverse()
    count = len(rows) if len(rows) < config.recap_messages else remaining.count()
    return recap_text(rows, remaining=count, chars=config.recap_message_chars)


def session_window(*, session: Session) -> Window:
    """Seed 000's context window: the rolling summary plus the last N messages after the
    latest compact marker (seed 003: the window replays from it), with those not yet
    summarised and the calls of the results it opens on (window_messages), and seed 004's
    recap of what a consolidation left."""
    meta = session_meta(session=session)
    summary = session_summary(session=session)
    size = session.agent.config.max_history_messages
    plain, pool, full = _window(session, size)
    messages = _with_calls(session, plain, pool, full)
    return Window(
        session=session,
        start_at=meta.start_at if meta else None,
        summary=summary.content if summary and summary.content else None,
        messages=messages,
        markers=session_markers(session=session),
        # Past the window and unsummarised; not the calls it reached back to.
        unsummarised=max(0, len(plain) - size),
        recap=session_recap(session=session, shown=messages),
    )


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
    qs = _hot(Message.objects.filter(session=session), meta)
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


def user_sessions(*, agent: Agent, user: str) -> QuerySet[Session]:
    """The sessions of one end user of the agent, oldest first."""
    return Session.objects.filter(agent=agent, user=user).order_by("created_at", "id")
