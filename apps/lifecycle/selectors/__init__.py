"""Reads for runs, history and the archives a session's lifecycle made, always scoped to
one agent. (Reads about end users: apps.people.selectors.)"""

from apps.lifecycle.selectors.archives_made import ArchiveMade, session_archives_made
from apps.lifecycle.selectors.history_reads import (
    history_document,
    history_page,
    history_visible,
)
from apps.lifecycle.selectors.run_reads import run_get, runs_page

__all__ = [
    "ArchiveMade",
    "history_document",
    "history_page",
    "history_visible",
    "run_get",
    "runs_page",
    "session_archives_made",
]
