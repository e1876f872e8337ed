"""The reads of error memory (seed 000) and learnings (seed 001), always scoped to one agent.
Modules: record_lookup (by id and in pages, as shown to the reader), hint_ranking (hints for
a failing call), error_search (errors by meaning and text). Import from this package."""

from apps.learnings.selectors.error_search import ErrorHit, ErrorSearch, errors_search
from apps.learnings.selectors.hint_ranking import Hint, error_hints, hint_rule
from apps.learnings.selectors.record_lookup import (
    error_details_of_user,
    error_get,
    errors_first_seen_in,
    errors_page,
    learning_get,
    learnings_active,
    learnings_page,
    learnings_searchable,
    learnings_shown,
    records_shown,
)

__all__ = [
    "ErrorHit",
    "ErrorSearch",
    "Hint",
    "error_details_of_user",
    "error_get",
    "error_hints",
    "errors_first_seen_in",
    "errors_page",
    "errors_search",
    "hint_rule",
    "learning_get",
    "learnings_active",
    "learnings_page",
    "learnings_searchable",
    "learnings_shown",
    "records_shown",
]
