"""The review pages' lists filtered by owner (issue 26): every row of the agent (`user`
None), the agent's own rows (""), or exactly one user's. Unlike a session's audience
(apps/agents/users.py: the agent's rows plus the user's), a filter shows one owner only, so
a reviewer sees what belongs to whom. Reads only, scoped to the agent they are given."""

import uuid
from collections.abc import Iterable
from typing import TypeVar

from django.db.models import Count, Model, QuerySet

from apps.agents.models import Agent
from apps.agents.users import EVERYONE
from apps.conversations.models import Session
from apps.core.pagination import Page, keyset_paginate
from apps.facts.models import Fact, FactStatus
from apps.facts.selectors import facts_by_category, facts_current
from apps.learnings.models import Learning
from apps.lifecycle.models import Run

M = TypeVar("M", bound=Model)


def owned(qs: QuerySet[M], user: str | None, field: str = "user") -> QuerySet[M]:
    """`qs` kept to one owner's rows (`field` naming the owner column); None keeps all."""
    return qs if user is None else qs.filter(**{field: user})


def facts_listed(*, agent: Agent, user: str | None) -> QuerySet[Fact]:
    """Current facts (approved and pending) of the owner, by category, most salient first."""
    return owned(facts_by_category(agent=agent), user)


def fact_counts_of(*, agent: Agent, user: str | None) -> dict[str, int]:
    """The owner's current facts by status: {"active": n, "pending": m}."""
    rows = (
        owned(facts_current(agent=agent, audience=EVERYONE), user)
        .values("status")
        .annotate(n=Count("pk"))
    )
    counts = dict.fromkeys(FactStatus.values, 0)
    counts.update({r["status"]: r["n"] for r in rows})
    return counts


def learnings_listed(
    *, agent: Agent, user: str | None, kind: str, status: str, q: str, limit: int
) -> list[Learning]:
    """The owner's newest `limit` learnings; blank kind/status do not filter, `q` is a
    substring of the content."""
    qs = owned(Learning.objects.filter(agent=agent), user)
    if kind:
        qs = qs.filter(kind=kind)
    if status:
        qs = qs.filter(status=status)
    if q:
        qs = qs.filter(content__icontains=q)
    return list(qs.order_by("-created_at", "-id")[:limit])


def runs_listed(
    *,
    agent: Agent,
    user: str | None,
    kind: str = "",
    status: str = "",
    cursor: str | None = None,
    limit: int = 50,
) -> Page[Run]:
    """The owner's runs, newest first, by kind and status (blank: any); BadRequest for a
    cursor that is not one."""
    qs = owned(Run.objects.filter(agent=agent), user)
    if kind:
        qs = qs.filter(kind=kind)
    if status:
        qs = qs.filter(status=status)
    return keyset_paginate(
        qs, fields=("created_at", "id"), cursor=cursor, limit=limit, descending=True
    )


def sessions_newest(*, agent: Agent, user: str | None, limit: int) -> list[Session]:
    """The owner's newest `limit` sessions (by creation)."""
    qs = owned(Session.objects.filter(agent=agent), user)
    return list(qs.order_by("-created_at", "-id")[:limit])


def sessions_named(*, agent: Agent, session_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Session]:
    """These sessions of the agent by id, with what names them: key, title and user."""
    ids = list(set(session_ids))
    if not ids:
        return {}
    qs = Session.objects.filter(agent=agent, pk__in=ids).only("pk", "key", "title", "user")
    return {s.pk: s for s in qs}
