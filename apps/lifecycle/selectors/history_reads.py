"""Reads of seed 004's HISTORY: grep, the rendered history files, what an audience sees."""

from django.db.models import QuerySet

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.conversations.models import Session
from apps.core.errors import InvalidInput, NotFound
from apps.core.pagination import Page, keyset_paginate
from apps.entries import names
from apps.lifecycle.models import HistoryEntry
from apps.lifecycle.services.history import history_files, month_range


def history_page(
    *,
    agent: Agent,
    q: str | None = None,
    month: str | None = None,
    session: Session | None = None,
    cursor: str | None = None,
    limit: int = 50,
    audience: Audience,
) -> Page[HistoryEntry]:
    """Seed 004's grep: case-insensitive substring over the history `audience` sees, newest
    first."""
    qs = history_visible(agent=agent, audience=audience).defer("embedding")
    if q:
        if "\x00" in q:
            raise InvalidInput("q must not contain NUL characters", loc=["query", "q"])
        qs = qs.filter(content__icontains=q)
    if month:
        start, end = month_range(month)
        qs = qs.filter(created_at__gte=start, created_at__lt=end)
    if session is not None:
        qs = qs.filter(session=session)
    return keyset_paginate(
        qs, fields=("created_at", "id"), cursor=cursor, limit=limit, descending=True
    )


def history_visible(*, agent: Agent, audience: Audience) -> QuerySet[HistoryEntry]:
    """The history entries `audience` sees."""
    return HistoryEntry.objects.filter(audience.q(), agent=agent)


def history_document(*, agent: Agent, name: str, audience: Audience) -> str:
    """One rendered history file (memory/HISTORY.md or memory/HISTORY-YYYY-MM.md)."""
    if not names.is_history(name):
        # The files live under memory/: name the path a caller most likely meant.
        meant = f"memory/{name}" if names.is_history(f"memory/{name}") else names.HISTORY
        raise NotFound(
            f"'{name}' is not a history file: history files are {names.HISTORY} and "
            f"memory/HISTORY-YYYY-MM.md (did you mean '{meant}'?)",
            loc=["path", "name"],
        )
    month = None if name == names.HISTORY else name.removeprefix("memory/HISTORY-")[:7]
    if month is not None:
        month_range(month)  # 422 for a month that does not exist (HISTORY-2026-13.md)
    files = history_files(agent=agent, month=month, audience=audience)
    if name not in files:
        raise NotFound(f"no history in '{name}'", loc=["path", "name"])
    return files[name]
