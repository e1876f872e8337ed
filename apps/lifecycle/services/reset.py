"""Reset (seed 000's /reset, seed 004's /new): consolidate, then delete; nothing is lost.

Seed 004 awaits consolidation before the session is destroyed, bounded by
consolidation_timeout_seconds. Whatever no LLM consolidation covered (a fallback, a
timeout, or messages that arrived meanwhile) is first kept whole in an Archive entry, in the
same transaction that deletes the messages. The rolling summary survives (seed 000).
"""

import time
from dataclasses import dataclass

from django.db import transaction

from apps.agents.locks import lock_agent
from apps.conversations import selectors as conv
from apps.conversations import services as conv_services
from apps.conversations.models import Consolidation, Session
from apps.entries.services import archive_name_free, entry_archive_add
from apps.lifecycle.models import Run, Trigger
from apps.lifecycle.services.compaction import archive_prefix
from apps.lifecycle.services.consolidation import session_consolidate
from apps.lifecycle.services.extractive import whole_transcript


@dataclass(frozen=True)
class ResetOutcome:
    session: Session
    deleted_messages: int
    runs: list[Run]
    archive_name: str | None  # the archive that keeps what no consolidation covered


def reset_detail(session: Session) -> str:
    """The detail of the "add" change of a reset's archive (it names the session)."""
    return f"session {session.key} reset"


def _archive_kept(session: Session) -> str | None:
    """Archive, whole, the messages a reset would lose; the archive's name, or None."""
    qs = conv.session_messages(session=session)
    if session.agent.config.reset_archive == "fallback":
        qs = qs.exclude(consolidation=Consolidation.OK)
    messages = list(qs)
    if not messages:
        return None
    name = archive_name_free(
        agent=session.agent, prefix=archive_prefix(session), owner=session.user
    )
    title = f"Session {session.key} before its reset: {len(messages)} messages kept whole"
    entry_archive_add(
        agent=session.agent,
        name=name,
        content=whole_transcript(messages=messages, title=title),
        changed_by="reset",
        detail=reset_detail(session),
        owner=session.user,
    )
    return name


def session_reset(*, session: Session, trigger: str = Trigger.RESET) -> ResetOutcome:
    """Consolidate the unconsolidated messages (waiting at most the timeout), archive what
    that did not cover, then delete messages, markers and meta; the summary stays."""
    deadline = time.monotonic() + session.agent.config.consolidation_timeout_seconds
    runs = session_consolidate(
        session=session, trigger=trigger, deadline=deadline, wait_until=deadline
    )
    with transaction.atomic():
        lock_agent(session.agent)
        archive = _archive_kept(session)
        result = conv_services.session_clear(session=session)
    return ResetOutcome(session, result.deleted_messages, runs, archive)
