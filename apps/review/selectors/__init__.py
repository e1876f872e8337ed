"""Reads the review pages need beyond the domain selectors: per-agent statistics, activity
per day, sessions by last activity, a keyset window of a session's timeline, entries
grouped for browsing, lists filtered by owner, and the agent's end users. Reads only; every
query is scoped to the agents it is given."""

from apps.review.selectors.entries import (
    EntryGroups,
    HistoryMonth,
    entry_by_id,
    entry_changes,
    entry_groups,
    history_month_entries,
    history_month_has_entries,
    history_months,
)
from apps.review.selectors.owners import (
    fact_counts_of,
    facts_listed,
    learnings_listed,
    owned,
    runs_listed,
    sessions_named,
    sessions_newest,
)
from apps.review.selectors.stats import (
    ACTIVITY_DAYS,
    AgentStats,
    DayCount,
    activity_days,
    agent_stats,
    message_counts,
    sessions_by_activity,
)
from apps.review.selectors.timeline import (
    TIMELINE_PAGE,
    TimelineItem,
    TimelinePage,
    archive_ids,
    parse_cursor,
    timeline_around,
    timeline_items,
    timeline_page,
)
from apps.review.selectors.users import (
    UserMemory,
    UserRow,
    agent_users,
    user_exists,
    user_memory,
    user_rows,
)

__all__ = [
    "ACTIVITY_DAYS",
    "TIMELINE_PAGE",
    "AgentStats",
    "DayCount",
    "EntryGroups",
    "HistoryMonth",
    "TimelineItem",
    "TimelinePage",
    "UserMemory",
    "UserRow",
    "activity_days",
    "agent_stats",
    "agent_users",
    "archive_ids",
    "entry_by_id",
    "entry_changes",
    "entry_groups",
    "fact_counts_of",
    "facts_listed",
    "history_month_entries",
    "history_month_has_entries",
    "history_months",
    "learnings_listed",
    "message_counts",
    "owned",
    "parse_cursor",
    "runs_listed",
    "sessions_by_activity",
    "sessions_named",
    "sessions_newest",
    "timeline_around",
    "timeline_items",
    "timeline_page",
    "user_exists",
    "user_memory",
    "user_rows",
]
