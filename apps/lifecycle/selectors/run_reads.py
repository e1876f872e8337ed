"""Reads of the lifecycle's runs, always scoped to one agent and an audience."""

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.conversations.models import Session
from apps.core.errors import NotFound
from apps.core.pagination import Page, keyset_paginate
from apps.lifecycle.models import Run


def runs_page(
    *,
    agent: Agent,
    kind: str | None = None,
    status: str | None = None,
    session: Session | None = None,
    cursor: str | None = None,
    limit: int = 50,
    audience: Audience,
) -> Page[Run]:
    """The runs `audience` sees, newest first, filtered by kind, status and session."""
    qs = Run.objects.filter(audience.q(), agent=agent)
    if kind:
        qs = qs.filter(kind=kind)
    if status:
        qs = qs.filter(status=status)
    if session is not None:
        qs = qs.filter(session=session)
    return keyset_paginate(
        qs, fields=("created_at", "id"), cursor=cursor, limit=limit, descending=True
    )


def run_get(*, agent: Agent, run_id: int, audience: Audience) -> Run:
    run = Run.objects.filter(audience.q(), agent=agent, pk=run_id).first()
    if run is None:
        raise NotFound("run not found", loc=["path", "run_id"])
    return run
