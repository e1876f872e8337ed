"""An agent's end users (issue 26) for the users index and a user's page: who they are
(every non-empty `user` of the agent's sessions and memory rows), their counts, and what one
user owns. Reads only, scoped to the agent they are given."""

from dataclasses import dataclass, field

from django.db.models import Count, QuerySet

from apps.agents.models import Agent
from apps.agents.users import AGENT, EVERYONE
from apps.conversations.models import Session
from apps.entries.models import Entry
from apps.facts.models import Fact
from apps.facts.selectors import facts_current
from apps.learnings.models import Learning
from apps.lifecycle.models import HistoryEntry, Run
from apps.people.selectors import agent_user_names
from apps.review.selectors.entries import EntryGroups, HistoryMonth, entry_groups, history_months
from apps.review.selectors.owners import facts_listed
from apps.review.selectors.stats import sessions_by_activity

# The tables whose rows name their user; messages, versions and aliases follow their parent.
OWNED_MODELS = (Session, Fact, Entry, Learning, HistoryEntry, Run)
SHOWN = 50  # the user's page lists this many of each kind of row; the counts are all of them


def agent_users(*, agent: Agent, limit: int | None = None) -> list[str]:
    """The agent's users by name (the first `limit`): every non-empty user of its sessions
    and memory rows (the users /users lists)."""
    users = agent_user_names(agent=agent)
    return list(users if limit is None else users[:limit])


def user_exists(*, agent: Agent, user: str) -> bool:
    """Whether any session or memory row of the agent belongs to `user`."""
    if user == AGENT:
        return False
    return any(m._default_manager.filter(agent=agent, user=user).exists() for m in OWNED_MODELS)


@dataclass(frozen=True)
class UserRow:
    user: str
    sessions: int  # every session of the user
    facts: int  # current facts (approved and pending)


def _by_user(qs: QuerySet, users: list[str]) -> dict[str, int]:
    rows = qs.filter(user__in=users).values("user").annotate(n=Count("pk"))
    return {r["user"]: r["n"] for r in rows}


def user_rows(*, agent: Agent, users: list[str]) -> list[UserRow]:
    """These users of the agent, in the given order, with their counts (two queries)."""
    if not users:
        return []
    sessions = _by_user(Session.objects.filter(agent=agent), users)
    facts = _by_user(facts_current(agent=agent, audience=EVERYONE), users)
    return [UserRow(u, sessions.get(u, 0), facts.get(u, 0)) for u in users]


@dataclass
class UserMemory:
    """What a user's page shows: the newest SHOWN of each kind of row and the counts of all."""

    sessions: list[Session] = field(default_factory=list)  # most recently active first
    facts: list[Fact] = field(default_factory=list)  # current, by category then salience
    entries: EntryGroups = field(default_factory=EntryGroups)  # all of them
    learnings: list[Learning] = field(default_factory=list)  # newest first
    history: list[HistoryEntry] = field(default_factory=list)  # newest first
    months: list[HistoryMonth] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def user_memory(*, agent: Agent, user: str) -> UserMemory:
    """The sessions and memory of one user of the agent (none of the agent's own rows)."""
    sessions = sessions_by_activity(agent=agent, user=user)
    facts = facts_listed(agent=agent, user=user)
    learnings = Learning.objects.filter(agent=agent, user=user).order_by("-created_at", "-id")
    history = (
        HistoryEntry.objects.filter(agent=agent, user=user)
        .defer("embedding")
        .order_by("-created_at", "-id")
    )
    entries = entry_groups(agent=agent, user=user)
    return UserMemory(
        sessions=list(sessions[:SHOWN]),
        facts=list(facts[:SHOWN]),
        entries=entries,
        learnings=list(learnings[:SHOWN]),
        history=list(history[:SHOWN]),
        months=history_months(agent=agent, user=user),
        counts={
            "sessions": sessions.count(),
            "facts": facts.count(),
            "entries": sum(len(g) for g in entries.all()),
            "learnings": learnings.count(),
            "history": history.count(),
            "runs": Run.objects.filter(agent=agent, user=user).count(),
        },
    )
