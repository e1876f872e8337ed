"""Remove session (seed 000: "directory deleted; cleared"): the session goes with its data.

In one transaction under the agent's lock: the session's archives (compaction's and
reset's `archive/<session key>/<n>` entries), then its messages, compact markers, meta and
summary. What outlives it on purpose: its runs and history entries keep their row with the
session set to null (session_key stays for the record; seed 004's HISTORY is append-only),
and so do facts, learnings and error memory, which belong to the agent.
"""

from dataclasses import dataclass

from django.db import transaction

from apps.agents.locks import lock_agent
from apps.conversations import selectors as conv
from apps.conversations import services as conv_services
from apps.conversations.models import Session
from apps.entries.models import Kind
from apps.entries.selectors import archives_under, entries_named
from apps.entries.services import entry_archives_remove
from apps.lifecycle.services.compaction import archive_prefix


@dataclass(frozen=True)
class RemoveOutcome:
    session_key: str
    deleted_messages: int
    archives: list[str]  # the names of the archives deleted with it


def _made_for(session: Session, detail: str) -> bool:
    """Whether an archive's "add" detail names this session: compaction writes
    "session <key>: <n> messages", a reset "session <key> reset"."""
    return detail.startswith(f"session {session.key}: ") or detail == f"session {session.key} reset"


def session_archives(*, session: Session) -> list[int]:
    """The ids of the session's archives: those its compact markers name (the session
    owner's: another owner may hold an entry of the same name), and those under its prefix
    that compaction or a reset made for it. Two keys can share a prefix ("a b" and "a-b"),
    so the prefix alone does not decide."""
    marked = entries_named(
        agent=session.agent,
        refs=[m.archive_name for m in conv.session_markers(session=session)],
    )
    made = [
        origin.entry_id
        for origin in archives_under(agent=session.agent, prefix=archive_prefix(session))
        if _made_for(session, origin.added_detail)
    ]
    own = {e.pk for e in marked if e.kind == Kind.ARCHIVE and e.user == session.user}
    return sorted(own | set(made))


def session_remove(*, session: Session) -> RemoveOutcome:
    """Delete the session with its messages, markers, meta, summary and archives, all or
    nothing; runs and history entries stay, without the session."""
    with transaction.atomic():
        lock_agent(session.agent_id)
        archives = entry_archives_remove(
            agent=session.agent,
            ids=session_archives(session=session),
            changed_by="remove-session",
            detail=f"session {session.key} removed",
        )
        deleted = conv_services.session_remove(session=session)
    return RemoveOutcome(session_key=session.key, deleted_messages=deleted, archives=archives)
