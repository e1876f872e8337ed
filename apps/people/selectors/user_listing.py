"""The agent's end users: everyone a session or a row of memory names, in name order."""

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.conversations.models import Session
from apps.core.pagination import decode_cursor, encode_cursor
from apps.entries.models import Entry, EntryChange
from apps.facts.models import Fact
from apps.learnings.models import Learning
from apps.lifecycle.models import HistoryEntry, Run


@dataclass(frozen=True)
class AgentUser:
    user: str
    sessions: int  # the user's sessions (0: only memory rows are left of them)


@dataclass(frozen=True)
class UsersPage:
    items: list[AgentUser]
    next_cursor: str | None


# Every table with a `user` column a user's rows may be left in (aliases go with entries).
_USER_TABLES = (Session, Fact, Entry, EntryChange, Learning, HistoryEntry, Run)


def agent_user_names(*, agent: Agent, after: str | None = None) -> QuerySet:
    """The agent's end users by name (after `after`), in one UNION query: everyone named by
    a session or by a row of memory (whom an erasure would find)."""
    parts = []
    for model in _USER_TABLES:
        qs = model._default_manager.filter(agent=agent).exclude(user=AGENT)
        if after is not None:
            qs = qs.filter(user__gt=after)
        parts.append(qs.order_by().values_list("user", flat=True))  # no ORDER BY in a member
    first, *rest = parts
    return first.union(*rest).order_by("user")


def agent_users_page(*, agent: Agent, cursor: str | None = None, limit: int = 50) -> UsersPage:
    """The agent's end users in name order, each with the number of their sessions."""
    after = decode_cursor(cursor, size=1, purpose="users")[0] if cursor else None
    users = list(agent_user_names(agent=agent, after=after)[: limit + 1])
    next_cursor = None
    if len(users) > limit:
        users = users[:limit]
        next_cursor = encode_cursor([users[-1]], purpose="users")
    sessions = dict(
        Session.objects.filter(agent=agent, user__in=users)
        .order_by()
        .values_list("user")
        .annotate(n=Count("pk"))
    )
    return UsersPage(
        items=[AgentUser(user=u, sessions=sessions.get(u, 0)) for u in users],
        next_cursor=next_cursor,
    )
