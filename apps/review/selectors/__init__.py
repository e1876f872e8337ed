"""Reads the review pages need beyond the domain selectors: per-agent statistics, activity
per day, sessions by last activity, a keyset window of a session's timeline, and entries
grouped for browsing. Reads only; every query is scoped to the agents it is given."""

from apps.review.selectors.entries import (
    EntryGroups,
    HistoryMonth,
    entry_by_id,
    entry_changes,
    entry_groups,
    history_month_entries,
    history_months,
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

__all__ = [
    "ACTIVITY_DAYS",
    "TIMELINE_PAGE",
    "AgentStats",
    "DayCount",
    "EntryGroups",
    "HistoryMonth",
    "TimelineItem",
    "TimelinePage",
    "activity_days",
    "agent_stats",
    "archive_ids",
    "entry_by_id",
    "entry_changes",
    "entry_groups",
    "history_month_entries",
    "history_months",
    "message_counts",
    "parse_cursor",
    "sessions_by_activity",
    "timeline_around",
    "timeline_items",
    "timeline_page",
]
