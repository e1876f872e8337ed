"""Keyword mode's hot-window leg: the whole query as a substring of the messages at or after
their session's compaction cutoff (`SessionMeta.start_at`; the whole session when it never
compacted), newest first.

The leg reads the hot rows only, session by session from each cutoff, through the
(session, created_at, id) index: its cost is the hot rows', never the archive's. Compaction
bounds a session's hot part (max_history_bytes, 5 MiB by default: a session over it is
compacted), so a session that never compacted is small too. The contains path
(apps/search/backends) would instead read the agent's rows newest first and test each one's
cutoff: at 1M archived messages, seconds per query (docs/benchmarks.md, issue 29).

The match is Django's `icontains` on each backend, as the contains leg's is.
"""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from django.db import connection
from django.db.models import DateTimeField, Expression, F, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from apps.conversations.models import Message, Session, SessionMeta

# Stands in for "no cutoff": every message of a session that never compacted is hot.
EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
# PostgreSQL estimates `created_at >= <the session's cutoff>` at a third of the rows, so it
# would hash-join a scan of every message, or (memoized per cutoff) range-scan the times of
# every agent; only the nested loop over the agent's sessions, each read from its cutoff by
# (session, created_at), reads the hot rows alone.
_SESSION_DRIVEN = (
    "enable_hashjoin",
    "enable_mergejoin",
    "enable_memoize",
    "enable_seqscan",
    "enable_bitmapscan",
)


def hot_rows(*, agent_id: int, queryset: QuerySet[Message] | None = None) -> QuerySet[Message]:
    """The agent's messages (in `queryset`) at or after their session's compaction cutoff."""
    qs = queryset if queryset is not None else Message.objects.all()
    # The agent is the session's, so the plan starts from the agent's sessions; the cutoff
    # is read per session before the session's messages, and bounds their index range.
    return qs.alias(hot_from=_cutoff()).filter(
        session__agent_id=agent_id, created_at__gte=F("hot_from")
    )


def _cutoff() -> Expression:
    """The session's start_at, EARLIEST without one (no meta row, or never compacted).

    PostgreSQL: an outer join to the meta row (an alias keeps it outer), which its nested
    loop reads before the messages; a subquery would only filter them. SQLite: a subquery on
    the session's id, since it reads an outer join's table after the messages."""
    earliest = Value(EARLIEST, output_field=DateTimeField())
    if connection.vendor == "postgresql":
        return Coalesce(F("session__meta__start_at"), earliest)
    quote = connection.ops.quote_name
    meta, session = quote(SessionMeta._meta.db_table), quote(Session._meta.db_table)
    # Table names from model metadata; the time is a parameter.
    return RawSQL(  # noqa: S611
        f"COALESCE((SELECT start_at FROM {meta} WHERE session_id = {session}.id), %s)",  # noqa: S608
        [connection.ops.adapt_datetimefield_value(EARLIEST)],
        output_field=DateTimeField(),
    )


def hot_matches(
    *, agent_id: int, text: str, limit: int, queryset: QuerySet[Message] | None = None
) -> list[uuid.UUID]:
    """The ids of the hot messages whose content contains `text` (case-insensitive), newest
    first, at most `limit`."""
    with session_driven():
        return list(hot_matches_query(agent_id=agent_id, text=text, limit=limit, queryset=queryset))


def hot_matches_query(
    *, agent_id: int, text: str, limit: int, queryset: QuerySet[Message] | None = None
) -> QuerySet:
    """hot_matches' query (run it inside `session_driven()`)."""
    qs = hot_rows(agent_id=agent_id, queryset=queryset).filter(content__icontains=text)
    return qs.order_by("-created_at", "-id").values_list("pk", flat=True)[:limit]


@contextmanager
def session_driven() -> Iterator[None]:
    """PostgreSQL: the plan that starts from the agent's sessions. SQLite drives the join
    from the sessions by itself."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        for name in _SESSION_DRIVEN:
            cursor.execute(f"SET {name} = off")
        try:
            yield
        finally:
            for name in _SESSION_DRIVEN:
                cursor.execute(f"RESET {name}")
