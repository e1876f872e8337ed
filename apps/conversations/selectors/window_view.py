"""The window a session shows (seed 000): its messages, summary, markers and recap."""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from apps.conversations.models import CompactMarker, Message, Session
from apps.conversations.recap import Recap, recap_text
from apps.conversations.selectors.message_order import (
    after,
    before,
    hot_part,
    session_messages,
    session_recent_messages,
)
from apps.conversations.selectors.session_lookup import (
    session_markers,
    session_meta,
    session_summary,
)
from apps.conversations.tool_call_pairs import open_results, widen_to_calls

# Hot messages read back, past working memory, for the call of a result the window opens on.
TURN_LOOKBACK = 64


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
    qs = hot_part(session_messages(session=session), meta).filter(
        before(start.created_at, start.pk)
    )
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
    call of any tool result it would start with (tool_call_pairs.py), so it never opens on
    an orphan."""
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
    hot = hot_part(session_messages(session=session), session_meta(session=session))
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
    hot = hot_part(session_messages(session=session), session_meta(session=session))
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
    remaining = hot_part(session_messages(session=session), session_meta(session=session)).filter(
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
