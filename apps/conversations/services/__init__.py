"""The one write path for sessions and messages. Sub-module: pop (the newest message
removed, before the lifecycle used it). Import from this package."""

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Sum
from django.utils import timezone

from apps.agents.config import AgentConfig
from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.conversations import working_memory
from apps.conversations.models import (
    CompactMarker,
    Consolidation,
    Message,
    Role,
    Session,
    SessionMeta,
    Summary,
)
from apps.conversations.services.pop import message_pop as message_pop
from apps.core.errors import Conflict, InvalidInput, NotFound, PayloadTooLarge
from apps.core.fields import to_utc
from apps.providers.token_counts import count_tokens_batch
from apps.search.embedding_queue import schedule_embedding


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
    is_error: bool = False  # a tool message reporting its call failed


@dataclass(frozen=True)
class AppendResult:
    messages: list[Message]  # in request order; a repeated idempotency key gives the stored row
    created: int
    deduplicated: int
    created_ids: frozenset = frozenset()  # the rows this append stored (not deduplicated)


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
    metadata: dict | None = None,
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
    *, session: Session, title: str | None = None, metadata: dict | None = None
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


def message_bytes(content: str | None, tool_calls: list | None) -> int:
    """A message's size for seed 000's max_history_bytes: its content and tool calls."""
    size = len((content or "").encode("utf-8"))
    if tool_calls:
        size += len(json.dumps(tool_calls, ensure_ascii=False).encode("utf-8"))
    return size


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
        loc: list[str | int] = ["body", "messages", i]
        if msg.role not in Role.values:
            raise InvalidInput(f"unknown role '{msg.role}'", loc=[*loc, "role"])
        if msg.is_error and msg.role != Role.TOOL:
            raise InvalidInput("is_error is for tool messages", loc=[*loc, "is_error"])
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
    """Client times (as UTC; a naive one is read in TIME_ZONE), or now plus a microsecond
    per position to keep batch order."""
    now = timezone.now()
    out = []
    for i, msg in enumerate(messages):
        if msg.created_at is None:
            out.append(now + timedelta(microseconds=i))
        else:
            out.append(to_utc(msg.created_at))
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
            if not Session.objects.filter(pk=session.pk).exists():
                # Removed since the request read it (its key failed at commit): nothing
                # was written, and there is nothing to append to.
                raise NotFound("session not found", loc=["path", "session_id"]) from None
            # A concurrent request stored one of our idempotency keys first; the retry
            # finds it and returns that row instead.
            continue
    raise Conflict("could not append: idempotency keys kept colliding, retry the request")


def _row(
    session: Session,
    agent: Agent,
    config: AgentConfig,
    msg: NewMessage,
    created_at: datetime,
    token_count: int,
) -> Message:
    content = msg.content or ""
    importance = msg.importance
    return Message(
        agent=agent,
        session=session,
        role=msg.role,
        name=msg.name or "",
        content=content,
        tool_call_id=msg.tool_call_id,
        tool_name=msg.tool_name,
        tool_calls_json=msg.tool_calls,
        is_error=True if msg.is_error else None,
        created_at=created_at,
        importance=importance if importance is not None else config.importance_for_role(msg.role),
        metadata=msg.metadata or {},
        token_count=token_count,
        byte_size=message_bytes(content, msg.tool_calls),
        idempotency_key=msg.idempotency_key,
    )


@transaction.atomic
def _append_once(
    session: Session,
    agent: Agent,
    config: AgentConfig,
    messages: Sequence[NewMessage],
    times: list[datetime],
    tokens: list[int],
) -> AppendResult:
    keys = [m.idempotency_key for m in messages if m.idempotency_key]
    existing = {
        m.idempotency_key: m
        for m in Message.objects.filter(session=session, idempotency_key__in=keys).defer(
            "embedding"
        )
    }
    by_key: dict[str | None, Message] = dict(existing)  # keys: the messages' keys, never None
    to_create: list[Message] = []
    ordered: list[Message] = []
    for msg, created_at, token_count in zip(messages, times, tokens, strict=True):
        if msg.idempotency_key and msg.idempotency_key in by_key:
            ordered.append(by_key[msg.idempotency_key])
            continue
        row = _row(session, agent, config, msg, created_at, token_count)
        if msg.idempotency_key:
            by_key[msg.idempotency_key] = row
        to_create.append(row)
        ordered.append(row)
    Message.objects.bulk_create(to_create)
    if to_create:
        _count_hot_bytes(session, to_create)
        Session.objects.filter(pk=session.pk).update(updated_at=timezone.now())
        working_memory.invalidate(session.id)
        schedule_embedding(corpus="messages", agent_id=session.agent_id)
    return AppendResult(
        messages=ordered,
        created=len(to_create),
        deduplicated=len(messages) - len(to_create),
        created_ids=frozenset(m.id for m in to_create),
    )


def _count_hot_bytes(session: Session, rows: list[Message]) -> None:
    meta, _ = SessionMeta.objects.get_or_create(session=session)
    # A backfilled message older than the compaction cutoff lands in the archive part.
    added = sum(r.byte_size for r in rows if meta.start_at is None or r.created_at >= meta.start_at)
    if added:
        SessionMeta.objects.filter(pk=meta.pk).update(hot_bytes=F("hot_bytes") + added)


def _locked_meta(session: Session) -> SessionMeta:
    SessionMeta.objects.get_or_create(session=session)
    return SessionMeta.objects.select_for_update().get(session=session)


@dataclass(frozen=True)
class Cursor:
    """A position in a session's message order: (created_at, id)."""

    at: datetime
    id: uuid.UUID

    @classmethod
    def of(cls, message: Message) -> "Cursor":
        return cls(at=message.created_at, id=message.id)

    @classmethod
    def read(cls, meta: SessionMeta | None, name: str) -> "Cursor | None":
        """The cursor kept in `meta.<name>` and `meta.<name>_id` (None when unset)."""
        at = getattr(meta, name) if meta is not None else None
        return cls(at=at, id=getattr(meta, f"{name}_id")) if at is not None else None


def _swap_cursor(meta: SessionMeta, name: str, cursor: Cursor, expected: Cursor | None) -> bool:
    if Cursor.read(meta, name) != expected:
        return False
    setattr(meta, name, cursor.at)
    setattr(meta, f"{name}_id", cursor.id)
    meta.save(update_fields=[name, f"{name}_id", "updated_at"])
    return True


def summary_write(
    *, session: Session, content: str, cursor: Cursor, expected: Cursor | None
) -> bool:
    """Save the rolling summary and advance its cursor, only if the cursor is still
    `expected` (compare and set); False when another run moved it first. Atomic."""
    with transaction.atomic():
        if not _swap_cursor(_locked_meta(session), "summary_cursor", cursor, expected):
            return False
        Summary.objects.update_or_create(session=session, defaults={"content": content})
    return True


def flush_cursor_write(*, session: Session, cursor: Cursor, expected: Cursor | None) -> bool:
    """Advance the flush cursor if it is still `expected` (compare and set). Atomic."""
    with transaction.atomic():
        return _swap_cursor(_locked_meta(session), "flush_cursor", cursor, expected)


@dataclass(frozen=True)
class WindowCut:
    """Where a compaction cuts the hot part: `prefix` leaves it, and start_at moves to
    `cutoff_at` (the first message kept) if it is still `expected_start_at`."""

    prefix: Sequence[Message]
    cutoff_at: datetime
    expected_start_at: datetime | None


def compact_marker_add(
    *, session: Session, cut: WindowCut, archive_name: str, archived_at: datetime
) -> CompactMarker | None:
    """Move start_at to the cut and append a compact marker for its prefix, if start_at is
    still what the cut expects; None otherwise. No message is deleted. Atomic."""
    prefix, cutoff_at = cut.prefix, cut.cutoff_at
    with transaction.atomic():
        meta = _locked_meta(session)
        if meta.start_at != cut.expected_start_at:
            return None
        hot = Message.objects.filter(session=session, created_at__gte=cutoff_at)
        meta.start_at = cutoff_at
        meta.hot_bytes = hot.aggregate(n=Sum("byte_size"))["n"] or 0
        meta.save(update_fields=["start_at", "hot_bytes", "updated_at"])
        marker = CompactMarker.objects.create(
            agent_id=session.agent_id,
            session=session,
            archive_name=archive_name,
            archived_at=archived_at,
            cutoff_at=cutoff_at,
            first_message_at=prefix[0].created_at,
            last_message_at=prefix[-1].created_at,
            message_count=len(prefix),
            bytes=sum(m.byte_size for m in prefix),
        )
        working_memory.invalidate(session.id)
    return marker


def messages_mark_consolidated(*, ids: Sequence[uuid.UUID], kind: str, at: datetime) -> int:
    """Record that these messages were consolidated (seed 004), by the LLM or a fallback."""
    if kind not in Consolidation.values:
        raise ValueError(f"unknown consolidation kind {kind!r}")
    return Message.objects.filter(pk__in=list(ids)).update(consolidated_at=at, consolidation=kind)


@transaction.atomic
def sessions_erase_user(*, agent: Agent, user: str) -> dict[str, int]:
    """Delete every session of one end user of the agent with its messages (and their token
    states), summary, markers and meta; rows of other apps naming a session keep theirs
    without it. The rows deleted per model label. The caller holds the agent's lock."""
    if user == AGENT:
        raise ValueError("the agent's own sessions are not a user's")
    ids = list(Session.objects.filter(agent=agent, user=user).values_list("pk", flat=True))
    _, deleted = Session.objects.filter(pk__in=ids).delete()
    for session_id in ids:
        working_memory.forget(session_id)
    return deleted
