"""Removing a session's newest message: an agent taking back its last item (the OpenAI
Agents SDK's `Session.pop_item`), before the lifecycle has used it.

Once the rolling summary, a flush, a compaction or a consolidation has taken the message,
removing it would leave what they made (the summary, facts, an archive, a history entry)
describing a message that is gone, so the pop is refused (Conflict) and nothing changes. A
lifecycle run that read the message before the pop writes nothing (lifecycle/services/
step.py: its messages must all still exist under the agent's lock). Error memory a failing
tool message recorded stays: the failure happened.
"""

from datetime import datetime

from django.contrib.auth.models import AnonymousUser
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from apps.agents.locks import lock_agent
from apps.agents.services import audit_record
from apps.conversations import working_memory
from apps.conversations.models import Message, Session, SessionMeta
from apps.core.errors import Conflict, NotFound

ACTION = "message.pop"


def _cursor_covers(meta: SessionMeta, name: str, message: Message) -> bool:
    at: datetime | None = getattr(meta, name)
    ident = getattr(meta, f"{name}_id")
    if at is None or ident is None:
        return False
    return (message.created_at, message.id) <= (at, ident)


def _used_by(message: Message, meta: SessionMeta | None) -> str:
    """What of the lifecycle already holds the message ("" for nothing)."""
    if meta is not None and meta.start_at is not None and message.created_at < meta.start_at:
        return "is archived behind a compact marker"
    if meta is not None and _cursor_covers(meta, "summary_cursor", message):
        return "is covered by the rolling summary"
    if message.consolidated_at is not None:
        return "is consolidated into the agent's history"
    if meta is not None and _cursor_covers(meta, "flush_cursor", message):
        return "had its facts flushed into memory"
    return ""


def message_pop(*, session: Session, username: str) -> Message:
    """Delete the session's newest message (session order) and return it as it was stored,
    recording an audit event that names `username` (who asked) and holds no content.
    NotFound when the session has no message; Conflict when the lifecycle already used it.
    Atomic, under the agent's lock then the session meta's (an append in flight finishes
    first); the triggers take its rows out of the search side tables with it."""
    with transaction.atomic():
        lock_agent(session.agent_id)
        meta = SessionMeta.objects.select_for_update().filter(session=session).first()
        message = (
            Message.objects.filter(session=session)
            .defer("embedding")
            .order_by("-created_at", "-id")
            .first()
        )
        if message is None:
            raise NotFound("the session has no message", loc=["path", "session_id"])
        if why := _used_by(message, meta):
            raise Conflict(
                f"the newest message {why}: removing it would change what the lifecycle "
                "already made of it, so it stays",
                loc=["path", "session_id"],
            )
        Message.objects.filter(pk=message.pk).delete()  # the instance keeps its pk
        if meta is not None:  # the message is hot (not archived): its bytes leave
            SessionMeta.objects.filter(pk=meta.pk).update(
                hot_bytes=Greatest(F("hot_bytes") - message.byte_size, Value(0))
            )
        Session.objects.filter(pk=session.pk).update(updated_at=timezone.now())
        working_memory.invalidate(session.id)
        audit_record(
            user=AnonymousUser(),
            agent=session.agent,
            source="api",
            action=ACTION,
            target=message,
            before={
                "session": str(session.id),
                "user": session.user,
                "role": message.role,
                "created_at": message.created_at.isoformat(),
                "token_count": message.token_count,
            },
            after=None,
            username=username,
        )
    return message
