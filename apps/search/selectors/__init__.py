"""Reads the search layer offers (re-exported from their modules)."""

from apps.search.selectors.embedding_backlogs import (
    Backlog,
    Pending,
    PendingWork,
    backlog,
    backlogs,
    backlogs_by_agent,
    pending_work,
    stale_filter,
    stale_ids,
)

__all__ = [
    "Backlog",
    "Pending",
    "PendingWork",
    "backlog",
    "backlogs",
    "backlogs_by_agent",
    "pending_work",
    "stale_filter",
    "stale_ids",
]
