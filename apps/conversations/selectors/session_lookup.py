"""Sessions by id or key, pages of them, and what a session keeps beside its messages."""

import uuid
from datetime import datetime

from django.db.models import QuerySet

from apps.agents.models import Agent
from apps.conversations.models import CompactMarker, Session, SessionMeta, Summary
from apps.core.errors import NotFound
from apps.core.fields import to_utc
from apps.core.pagination import Page, keyset_paginate


def as_utc(value: datetime) -> datetime:
    """Aware UTC; a naive time is read in settings.TIME_ZONE (apps.core.fields.to_utc)."""
    return to_utc(value)


def session_get(*, agent: Agent, ref: str) -> Session:
    """The agent's session by id or by its own key; NotFound for anything else."""
    qs = Session.objects.filter(agent=agent)
    try:
        session = qs.filter(pk=uuid.UUID(ref)).first()
    except ValueError:
        session = None
    if session is None:
        session = qs.filter(key=ref).first()
    if session is None:
        raise NotFound("session not found", loc=["path", "session_id"])
    session.agent = agent  # already loaded: spare the query
    return session


def sessions_page(
    *, agent: Agent, cursor: str | None, limit: int, user: str | None
) -> Page[Session]:
    """The agent's sessions of `user` alone when given ("": those without a user), newest
    first."""
    qs = Session.objects.filter(agent=agent)
    if user is not None:
        qs = qs.filter(user=user)
    return keyset_paginate(
        qs, fields=("created_at", "id"), cursor=cursor, limit=limit, descending=True
    )


def session_meta(*, session: Session) -> SessionMeta | None:
    return SessionMeta.objects.filter(session=session).first()


def session_summary(*, session: Session) -> Summary | None:
    return Summary.objects.filter(session=session).first()


def session_markers(*, session: Session) -> list[CompactMarker]:
    """The session's compact markers, oldest first (seed 003)."""
    return list(CompactMarker.objects.filter(session=session).order_by("archived_at", "id"))


def user_sessions(*, agent: Agent, user: str) -> QuerySet[Session]:
    """The sessions of one end user of the agent, oldest first."""
    return Session.objects.filter(agent=agent, user=user).order_by("created_at", "id")
