"""The one write path for sessions and messages."""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.agents.models import Agent
from apps.conversations import working_memory
from apps.conversations.models import Message, Role, Session, SessionMeta
from apps.core.errors import Conflict, InvalidInput, PayloadTooLarge
from apps.providers.tokens import count_tokens_batch
from apps.search.embedding import schedule_embedding


@dataclass(frozen=True)
class NewMessage:
    """A message as submitted by a client, before it is stored."""

    role: str
    content: str | None
    name: str = ""
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_calls: list[Any] | None = None
    created_at: datetime | None = None
    importance: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    idempotency_key: str | None = None


@dataclass(frozen=True)
class AppendResult:
    messages: list[Message]  # in request order; a repeated idempotency key gives the stored row
    created: int
    deduplicated: int


@dataclass(frozen=True)
class ResetResult:
    session: Session
    deleted_messages: int


def session_create(
    *, agent: Agent, key: str | None = None, title: str = "", metadata: dict | None = None
) -> tuple[Session, bool]:
    """Create a session, or return the agent's existing one with that key (created=False)."""
    session_id = uuid.uuid4()
    key = key or str(session_id)
    existing = Session.objects.filter(agent=agent, key=key).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            session = Session.objects.create(
                id=session_id, agent=agent, key=key, title=title, metadata=metadata or {}
            )
    except IntegrityError:
        # A concurrent create with the same key won; the caller gets that session.
        return Session.objects.get(agent=agent, key=key), False
    return session, True


def session_update(
    *, session: Session, title: str | None = None, metadata: dict | None = None
) -> Session:
    fields = ["updated_at"]
    if title is not None:
        session.title = title
        fields.append("title")
    if metadata is not None:
        session.metadata = metadata
        fields.append("metadata")
    session.save(update_fields=fields)
    return session


@transaction.atomic
def session_reset(*, session: Session) -> ResetResult:
    """Seed 000's /reset: delete the messages and session meta; the rolling summary stays."""
    deleted, _ = Message.objects.filter(session=session).delete()
    SessionMeta.objects.filter(session=session).delete()
    Session.objects.filter(pk=session.pk).update(updated_at=timezone.now())
    working_memory.invalidate(session.id)
    return ResetResult(session=session, deleted_messages=deleted)


@transaction.atomic
def session_remove(*, session: Session) -> None:
    """Seed 000's remove-session: the session, its messages, meta and summary are deleted."""
    session_id = session.id
    Message.objects.filter(session=session).delete()
    session.delete()
    working_memory.invalidate(session_id)


def _validate_batch(agent: Agent, messages: Sequence[NewMessage], max_batch: int) -> None:
    """Reject the whole batch before anything is written."""
    if not messages:
        raise InvalidInput("at least one message is required", loc=["body", "messages"])
    if len(messages) > max_batch:
        raise PayloadTooLarge(
            f"at most {max_batch} messages per request, got {len(messages)}",
            loc=["body", "messages"],
        )
    limit = agent.config.max_content_bytes
    for i, msg in enumerate(messages):
        loc = ["body", "messages", i]
        if msg.role not in Role.values:
            raise InvalidInput(f"unknown role '{msg.role}'", loc=[*loc, "role"])
        if msg.content is None and not msg.tool_calls:
            raise InvalidInput(
                "content is required (it may be null only with tool_calls)", loc=[*loc, "content"]
            )
        size = len((msg.content or "").encode("utf-8"))
        if size > limit:
            raise PayloadTooLarge(
                f"content is {size} bytes; the limit is {limit}", loc=[*loc, "content"]
            )


def _timestamps(messages: Sequence[NewMessage]) -> list[datetime]:
    """Client times (as UTC), or now plus a microsecond per position to keep batch order."""
    now = timezone.now()
    out = []
    for i, msg in enumerate(messages):
        if msg.created_at is None:
            out.append(now + timedelta(microseconds=i))
        elif msg.created_at.tzinfo is None:
            out.append(msg.created_at.replace(tzinfo=UTC))
        else:
            out.append(msg.created_at.astimezone(UTC))
    return out


def messages_append(
    *, session: Session, messages: Sequence[NewMessage], max_batch: int = 1000
) -> AppendResult:
    """Append one or many messages atomically; a repeated idempotency key stores one row."""
    agent = session.agent
    _validate_batch(agent, messages, max_batch)
    config = agent.config
    times = _timestamps(messages)
    tokens = count_tokens_batch([m.content or "" for m in messages])
    for _attempt in range(3):
        try:
            return _append_once(session, agent, config, messages, times, tokens)
        except IntegrityError:
            # A concurrent request stored one of our idempotency keys first; the retry
            # finds it and returns that row instead.
            continue
    raise Conflict("could not append: idempotency keys kept colliding, retry the request")


@transaction.atomic
def _append_once(session, agent, config, messages, times, tokens) -> AppendResult:
    keys = [m.idempotency_key for m in messages if m.idempotency_key]
    existing = {
        m.idempotency_key: m
        for m in Message.objects.filter(session=session, idempotency_key__in=keys).defer(
            "embedding"
        )
    }
    by_key: dict[str, Message] = dict(existing)
    to_create: list[Message] = []
    ordered: list[Message] = []
    for msg, created_at, token_count in zip(messages, times, tokens, strict=True):
        if msg.idempotency_key and msg.idempotency_key in by_key:
            ordered.append(by_key[msg.idempotency_key])
            continue
        content = msg.content or ""
        row = Message(
            agent=agent,
            session=session,
            role=msg.role,
            name=msg.name or "",
            content=content,
            tool_call_id=msg.tool_call_id,
            tool_name=msg.tool_name,
            tool_calls_json=msg.tool_calls,
            created_at=created_at,
            importance=(
                msg.importance
                if msg.importance is not None
                else config.importance_for_role(msg.role)
            ),
            metadata=msg.metadata or {},
            token_count=token_count,
            byte_size=len(content.encode("utf-8")),
            idempotency_key=msg.idempotency_key,
        )
        if msg.idempotency_key:
            by_key[msg.idempotency_key] = row
        to_create.append(row)
        ordered.append(row)
    Message.objects.bulk_create(to_create)
    if to_create:
        Session.objects.filter(pk=session.pk).update(updated_at=timezone.now())
        working_memory.invalidate(session.id)
        schedule_embedding(corpus="messages", ids=[m.id for m in to_create])
    return AppendResult(
        messages=ordered, created=len(to_create), deduplicated=len(messages) - len(to_create)
    )
