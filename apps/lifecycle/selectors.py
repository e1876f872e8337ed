"""Reads for runs and history, and about the agent's end users (who they are, what an
erasure would delete), always scoped to one agent."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q, QuerySet

from apps.agents.models import Agent, AuditEvent
from apps.agents.users import AGENT, Audience
from apps.conversations.models import Message, Session, Summary
from apps.core.errors import InvalidInput, NotFound
from apps.core.pagination import Page, decode_cursor, encode_cursor, keyset_paginate
from apps.entries import names
from apps.entries.models import Action, Entry, EntryAlias, EntryChange, Kind
from apps.facts.models import Fact, FactVersion
from apps.learnings.models import ErrorDetail, Learning
from apps.lifecycle.models import HistoryEntry, Run
from apps.lifecycle.services.compaction import is_compaction_detail
from apps.lifecycle.services.erasure import UserErased, erased_user, from_session, user_archives
from apps.lifecycle.services.erasure_audit import ACTION, user_hmacs
from apps.lifecycle.services.history import history_files, month_range
from apps.lifecycle.services.reset import reset_detail


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


@dataclass(frozen=True)
class ArchiveMade:
    """An archive a compaction or a reset made for a session, as the entries' change log
    (which outlives the entry) recorded it."""

    entry_id: int | None  # None: removed since
    name: str  # its name when made (a renamed archive keeps it as an alias)
    made_by: str  # "compaction" or "reset"
    made_at: datetime


# Who writes a session's archives (EntryChange.changed_by), and the detail naming it.
_ARCHIVE_WRITERS: dict[str, Callable[[Session, str], bool]] = {
    "compaction": is_compaction_detail,
    "reset": lambda session, detail: detail == reset_detail(session),
}


def session_archives_made(*, session: Session) -> list[ArchiveMade]:
    """The archives compaction and resets made for the session, oldest first: the "add"
    changes by those writers, of the session's owner, whose detail names the session and
    which came after its creation (an earlier session of the same key, removed since, made
    the older ones)."""
    changes = EntryChange.objects.filter(
        agent_id=session.agent_id,
        user=session.user,
        action=Action.ADD,
        kind=Kind.ARCHIVE,
        changed_by__in=list(_ARCHIVE_WRITERS),
        changed_at__gte=session.created_at,
        detail__startswith=f"session {session.key}",
    )
    changes = changes.only("entry_id", "entry_name", "changed_by", "changed_at", "detail")
    changes = changes.order_by("changed_at", "id")
    return [
        ArchiveMade(
            entry_id=c.entry_id, name=c.entry_name, made_by=c.changed_by, made_at=c.changed_at
        )
        for c in changes
        # The exact check: startswith is case-insensitive on SQLite, and "a: b" starts as "a".
        if _ARCHIVE_WRITERS[c.changed_by](session, c.detail)
    ]


def user_erasure_counts(*, agent: Agent, user: str) -> UserErased:
    """What user_erase would delete now, counted without deleting anything (the review
    page's confirmation); a 422, as user_erase's, for the agent or a user that is not one."""
    user = erased_user(user)
    sessions = list(Session.objects.filter(agent=agent, user=user).order_by("pk"))
    entries = Entry.objects.filter(agent=agent).filter(
        Q(user=user) | Q(pk__in=user_archives(sessions))
    )
    of_entries = Q(agent=agent) & (Q(user=user) | Q(entry__in=entries))
    facts = Fact.objects.filter(agent=agent, user=user)
    mine = from_session(agent, user, sessions)
    return UserErased(
        sessions=len(sessions),
        messages=Message.objects.filter(session__in=sessions).count(),
        summaries=Summary.objects.filter(session__in=sessions).count(),
        facts=facts.count(),
        fact_versions=FactVersion.objects.filter(fact__in=facts).count(),
        entries=entries.count(),
        entry_aliases=EntryAlias.objects.filter(of_entries).count(),
        entry_changes=EntryChange.objects.filter(of_entries).count(),
        learnings=Learning.objects.filter(agent=agent, user=user).count(),
        history=HistoryEntry.objects.filter(mine).count(),
        runs=Run.objects.filter(mine).count(),
        error_details=ErrorDetail.objects.filter(agent=agent, user=user).count(),
    )


def user_erasures(*, agent: Agent, user: str) -> list[AuditEvent]:
    """The erasures of `user` the agent's audit log records, newest first: their events hold
    the user's HMAC (under SECRET_KEY or a fallback key), never the name, so only whoever
    knows the name can ask. [] when the user was never erased."""
    user = erased_user(user)
    hashes = user_hmacs(agent_id=agent.pk, user=user)
    events = AuditEvent.objects.filter(agent=agent, action=ACTION, before__user_hmac__in=hashes)
    return list(events.order_by("-created_at", "-id"))


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
