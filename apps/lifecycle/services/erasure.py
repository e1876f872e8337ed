"""Erasing one end user of an agent (issue 26): every session (with its messages, summary,
markers and archives), fact (with its versions), entry (with its aliases and changes),
learning, HISTORY entry and run of that user, in one transaction under the agent's lock,
leaving nothing of them in the search side tables. The agent's own rows and the other
users' stay, and so does error memory, which is the agent's.

Issue 39: nothing else keeps them either. The agent's rows written in their sessions keep
no link to those sessions (provenance), audit events about their rows keep who, what and
when but lose the content (apps/lifecycle/services/erasure_audit.py), and `erasure_vacuum`,
after the commit, makes the deleted bytes unreadable on disk (docs/memory.md).

A row is the user's when its `user` column names them; runs and history entries also when
they came from one of the user's sessions (they hold its words), and archives when they
were made for one (compaction and reset name the session). A fact or learning written in the
user's session with scope "agent" is the agent's, and stays, without the session.

It lives here, not in apps.memory, because the runs and history are the lifecycle's and
because the review pages (which may not import apps.memory) erase too. Each memory app
deletes its own rows (`<app>_erase_user`). One audit event holds the counts and a keyed
hash of the user (`user_hmac`), not their name, and nothing of what was erased.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace

from django.apps import apps
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import Model, Q

from apps.agents.locks import lock_agent
from apps.agents.models import Agent, AuditEvent
from apps.agents.services import audit_record
from apps.agents.users import clean_user
from apps.conversations.models import Message, Session, Summary
from apps.conversations.services import sessions_erase_user
from apps.core.errors import InvalidInput
from apps.core.scrub import person_terms
from apps.core.services.vacuum import secure_delete, vacuum_tables
from apps.entries.models import Entry, EntryAlias, EntryChange
from apps.entries.services import entries_erase_user
from apps.facts.models import Fact, FactVersion
from apps.facts.selectors import facts_values
from apps.facts.services import facts_erase_user, facts_unlink_sessions
from apps.learnings.models import ErrorDetail, Learning
from apps.learnings.services import learnings_erase_user
from apps.lifecycle.models import HistoryEntry, Run
from apps.lifecycle.services.erasure_audit import (
    ACTION,
    ERASING_APPS,
    audit_events_clear,
    audited_rows,
    rows_gone,
    user_hmac,
)
from apps.lifecycle.services.remove import session_archives
from apps.search.services import search_index_purge, search_indexes_rebuild


@dataclass(frozen=True)
class Actor:
    """Who asks for an erasure, as its audit event names them: a person on the review pages,
    or, with no person, `name` (the agent's API key, an operator's command)."""

    source: str  # "review", "api" or "cli"
    name: str = ""
    person: User | AnonymousUser | None = None


@dataclass(frozen=True)
class UserErased:
    """The rows of one user an erasure deleted (user_erasure_counts: would delete)."""

    sessions: int = 0
    messages: int = 0
    summaries: int = 0
    facts: int = 0
    fact_versions: int = 0
    entries: int = 0
    entry_aliases: int = 0
    entry_changes: int = 0
    learnings: int = 0
    history: int = 0
    runs: int = 0
    error_details: int = 0  # their raw texts of failures (issue 39)
    # Not deleted but cleared (the erasure's answer only; its preview counts deletions):
    # the agent's rows and audit snapshots that named one of the user's sessions, and the
    # audit events about the user's rows whose content was erased.
    provenance_cleared: int = 0
    audit_events_cleared: int = 0

    def counts(self) -> dict[str, int]:
        return asdict(self)

    def deletions(self) -> dict[str, int]:
        """The counts of rows deleted, without those cleared."""
        return {k: n for k, n in self.counts().items() if k not in CLEARED}


CLEARED = ("provenance_cleared", "audit_events_cleared")


# The models counted, by the field of UserErased that counts them. Token states, session
# meta and compact markers go with their rows and are not counted.
COUNTED: dict[type[Model], str] = {
    Session: "sessions",
    Message: "messages",
    Summary: "summaries",
    Fact: "facts",
    FactVersion: "fact_versions",
    Entry: "entries",
    EntryAlias: "entry_aliases",
    EntryChange: "entry_changes",
    Learning: "learnings",
    HistoryEntry: "history",
    Run: "runs",
    ErrorDetail: "error_details",
}
# The corpora whose side tables an erasure purges.
SEARCHED = (Message, Fact, Entry, Learning, HistoryEntry)


def erased_user(user: str) -> str:
    """`user` as an erasure takes it: stripped; a 422 for the agent (""), blank or control
    characters, or more than USER_MAX characters."""
    cleaned = clean_user(user, loc=["path", "user"])
    if cleaned is None:  # pragma: no cover - clean_user answers None only for None
        raise InvalidInput("user is required", loc=["path", "user"])
    return cleaned


def from_session(agent: Agent, user: str, sessions: list[Session]) -> Q:
    """The runs or history entries of `user`: theirs by column, or made in their sessions."""
    return Q(agent=agent) & (Q(user=user) | Q(session__in=[s.pk for s in sessions]))


def user_archives(sessions: list[Session]) -> list[int]:
    """The ids of the archives made for these sessions (compaction's and reset's)."""
    return sorted({pk for session in sessions for pk in session_archives(session=session)})


def _counted(deleted: Mapping[str, int]) -> UserErased:
    """The counts by model label (or by UserErased's own field name: provenance_cleared)."""
    labels = {model._meta.label: field for model, field in COUNTED.items()}
    known = {f.name for f in fields(UserErased)}
    named = ((labels.get(k, k), n) for k, n in deleted.items())
    return UserErased(**{k: n for k, n in named if k in known})


def _erase_rows(agent: Agent, user: str, sessions: list[Session]) -> Counter[str]:
    """Delete the user's rows, those naming a session before the sessions, and unlink the
    agent's rows from the sessions; the rows deleted per model label."""
    mine = from_session(agent, user, sessions)
    deleted: Counter[str] = Counter()
    deleted.update(Run.objects.filter(mine).delete()[1])
    deleted.update(HistoryEntry.objects.filter(mine).delete()[1])
    # Issue 39: their facts' terms, read before the facts go, scrub their error memory again.
    terms = person_terms(user=user, values=facts_values(agent=agent, user=user))
    deleted.update(facts_erase_user(agent=agent, user=user))
    deleted.update(
        learnings_erase_user(agent=agent, user=user, sessions=[s.pk for s in sessions], terms=terms)
    )
    deleted.update(entries_erase_user(agent=agent, user=user, also=user_archives(sessions)))
    ids = [s.pk for s in sessions]
    deleted["provenance_cleared"] += facts_unlink_sessions(agent=agent, sessions=ids)
    deleted.update(sessions_erase_user(agent=agent, user=user))
    return deleted


def user_erase(*, agent: Agent, user: str, actor: Actor) -> UserErased:
    """Delete every row of one end user of `agent`, all or nothing, clear what the agent
    keeps of them (provenance, audit content), and record one audit event with the counts
    and `user_hmac`. A 422 for the agent itself ("") or a user that is not one; a second
    call finds nothing and answers zeros. SQLite zeroes what it frees (secure_delete); the
    WAL keeps the old pages until `erasure_vacuum`."""
    user = erased_user(user)
    with secure_delete(), transaction.atomic():
        lock_agent(agent)
        watched = audited_rows(agent)
        sessions = list(Session.objects.filter(agent=agent, user=user).order_by("pk"))
        deleted = _erase_rows(agent, user, sessions)
        emptied = [m for m in SEARCHED if deleted.get(m._meta.label)]
        if emptied:
            search_index_purge(agent_id=agent.pk, models=emptied)
        audit = audit_events_clear(
            agent=agent,
            user=user,
            gone=rows_gone(watched),
            sessions={str(s.pk): s.key for s in sessions},
        )
        erased = _counted(deleted)
        erased = replace(
            erased,
            provenance_cleared=erased.provenance_cleared + audit.unlinked,
            audit_events_cleared=audit.cleared,
        )
        audit_record(
            user=actor.person or AnonymousUser(),
            agent=agent,
            source=actor.source,
            action=ACTION,
            target="user",
            before={"user_hmac": user_hmac(agent_id=agent.pk, user=user), **erased.counts()},
            after=None,
            username=actor.name,
        )
    return erased


def erasure_vacuum() -> bool:
    """After an erasure has committed: make what it deleted unreadable on disk (SQLite: the
    whole file, its FTS5 segments and its WAL; PostgreSQL: VACUUM of the tables it may
    touch, every table of the erasing apps and the audit log, with their side tables).
    False inside a transaction, where it cannot run."""
    tables = [m._meta.db_table for m in apps.get_models() if m._meta.app_label in ERASING_APPS]
    tables.append(AuditEvent._meta.db_table)
    return vacuum_tables(tables, rewritten=search_indexes_rebuild)
