"""Sessions: create, update, clear (seed 000's /reset) and remove."""

import uuid
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone
from pydantic import JsonValue

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.conversations import working_memory
from apps.conversations.models import CompactMarker, Message, Session, SessionMeta, Summary
from apps.core.errors import Conflict, NotFound


@dataclass(frozen=True)
class ResetResult:
    session: Session
    deleted_messages: int


def session_create(
    *,
    agent: Agent,
    key: str | None = None,
    user: str | None = None,
    title: str = "",
    metadata: dict[str, JsonValue] | None = None,
) -> tuple[Session, bool]:
    """Create a session, or return the agent's existing one with that key (created=False);
    Conflict when that session belongs to another user than `user`."""
    session_id = uuid.uuid4()
    key = key or str(session_id)
    existing = Session.objects.filter(agent=agent, key=key).first()
    if existing is None:
        try:
            with transaction.atomic():
                session = Session.objects.create(
                    id=session_id,
                    agent=agent,
                    key=key,
                    user=user or AGENT,
                    title=title,
                    metadata=metadata or {},
                )
            return session, True
        except IntegrityError:
            # A concurrent create with the same key won; the caller gets that session.
            existing = Session.objects.get(agent=agent, key=key)
    if user is not None and existing.user != user:
        # A key names one conversation: it never moves from one user to another.
        raise Conflict("this key names a session of another user", loc=["body", "user"])
    return existing, False


def session_update(
    *, session: Session, title: str | None = None, metadata: dict[str, JsonValue] | None = None
) -> Session:
    """Set the title and/or metadata (None keeps one) in one UPDATE, and on `session`.
    NotFound when the session was removed since it was read (a concurrent delete or
    erasure): a 404, not a failed save."""
    changes: dict[str, object] = {"updated_at": timezone.now()}  # update() skips auto_now
    if title is not None:
        changes["title"] = title
    if metadata is not None:
        changes["metadata"] = metadata
    if not Session.objects.filter(pk=session.pk).update(**changes):
        raise NotFound("session not found", loc=["path", "session_id"])
    for name, value in changes.items():
        setattr(session, name, value)
    return session


@transaction.atomic
def session_clear(*, session: Session) -> ResetResult:
    """Seed 000's /reset: delete the messages, markers and session meta; the rolling summary
    stays. apps.lifecycle consolidates (and archives what it must) before calling this."""
    deleted = _delete_messages(session)
    CompactMarker.objects.filter(session=session).delete()
    SessionMeta.objects.filter(session=session).delete()
    Session.objects.filter(pk=session.pk).update(updated_at=timezone.now())
    working_memory.invalidate(session.id)
    return ResetResult(session=session, deleted_messages=deleted)


@transaction.atomic
def session_remove(*, session: Session) -> int:
    """Seed 000's remove-session: the session, its messages, markers, meta and summary are
    deleted; rows of other apps that name it keep their row without it (SET_NULL). Under
    the agent's lock, so a lifecycle run finishing meanwhile sees the session gone.
    apps.lifecycle deletes the session's archives in the same transaction. Returns the
    number of messages deleted."""
    lock_agent(session.agent_id)
    session_id = session.id
    deleted = _delete_messages(session)
    CompactMarker.objects.filter(session=session).delete()
    SessionMeta.objects.filter(session=session).delete()
    Summary.objects.filter(session=session).delete()
    session.delete()
    working_memory.invalidate(session_id)
    return deleted


def _delete_messages(session: Session) -> int:
    """Delete the session's messages (their token states cascade); the number of messages."""
    _, per_model = Message.objects.filter(session=session).delete()
    return per_model.get(Message._meta.label, 0)
