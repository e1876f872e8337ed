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

# ruff: noqa: S608 - identifiers come from model metadata; user values are parameters.
import uuid
from datetime import UTC, datetime

from django.db import connection
from django.db.models import DateTimeField, QuerySet
from django.db.models.expressions import RawSQL

from apps.conversations.models import Message, Session, SessionMeta
from apps.search.backends.base import restrict_sql

# Stands in for "no cutoff": every message of a session that never compacted is hot.
EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
SqlParam = datetime | str | int  # what hot_matches passes to the database


def hot_matches(
    *, agent_id: int, text: str, limit: int, queryset: QuerySet[Message] | None = None
) -> list[uuid.UUID]:
    """The ids of the hot messages (in `queryset`) whose content contains `text` (Django's
    `icontains`), newest first, at most `limit`."""
    if connection.vendor == "postgresql":
        sql, params = postgres_hot_matches_sql(
            agent_id=agent_id, text=text, limit=limit, queryset=queryset
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [row[0] for row in cursor.fetchall()]
    return list(hot_matches_query(agent_id=agent_id, text=text, limit=limit, queryset=queryset))


def hot_matches_query(
    *, agent_id: int, text: str, limit: int, queryset: QuerySet[Message] | None = None
) -> QuerySet[Message, uuid.UUID]:
    """SQLite: hot_matches' query. Its planner starts from the agent's sessions and reads
    each one's messages from the cutoff (a subquery on the session's id) by itself."""
    qs = queryset if queryset is not None else Message.objects.all()
    qs = qs.filter(session__agent_id=agent_id, created_at__gte=_sqlite_cutoff())
    qs = qs.filter(content__icontains=text)
    return qs.order_by("-created_at", "-id").values_list("pk", flat=True)[:limit]


def _sqlite_cutoff() -> RawSQL:
    """The session's start_at, EARLIEST without one (no meta row, or never compacted): a
    subquery on the session's id, read before the session's messages (an outer join's
    table SQLite reads after them, too late to bound their index range)."""
    quote = connection.ops.quote_name
    meta, session = quote(SessionMeta._meta.db_table), quote(Session._meta.db_table)
    return RawSQL(  # noqa: S611
        f"COALESCE((SELECT start_at FROM {meta} WHERE session_id = {session}.id), %s)",
        [connection.ops.adapt_datetimefield_value(EARLIEST)],
        output_field=DateTimeField(),
    )


def postgres_hot_matches_sql(
    *, agent_id: int, text: str, limit: int, queryset: QuerySet[Message] | None = None
) -> tuple[str, list[SqlParam]]:
    """PostgreSQL: hot_matches' SQL. A LATERAL read per session of the agent, from its
    cutoff by (session, created_at, id), newest first, until `limit` match. The planner
    estimates `created_at >= <a cutoff>` at a third of the rows whatever the cutoff, and
    as a plain join it preferred range-scanning every agent's times after the cutoff."""
    restrict, restrict_params = restrict_sql(queryset, "m", "id")
    table = connection.ops.quote_name
    sql = (
        f"SELECT h.id FROM {table(Session._meta.db_table)} s "
        f"LEFT JOIN {table(SessionMeta._meta.db_table)} sm ON sm.session_id = s.id "
        f"CROSS JOIN LATERAL (SELECT m.id, m.created_at FROM {table(Message._meta.db_table)} m "
        "WHERE m.session_id = s.id AND m.created_at >= COALESCE(sm.start_at, %s) "
        # Django's icontains on PostgreSQL, to the character.
        f"AND UPPER(m.content::text) LIKE UPPER(%s){restrict} "
        "ORDER BY m.created_at DESC, m.id DESC LIMIT %s) h "
        "WHERE s.agent_id = %s ORDER BY h.created_at DESC, h.id DESC LIMIT %s"
    )
    pattern = f"%{connection.ops.prep_for_like_query(text)}%"
    return sql, [EARLIEST, pattern, *restrict_params, limit, agent_id, limit]
