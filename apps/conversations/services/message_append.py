"""Appending messages (one or a batch, idempotent by key) and marking them consolidated."""

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from django.db import IntegrityError, OperationalError, transaction
from django.db.models import F
from django.utils import timezone
from pydantic import JsonValue

from apps.agents.config import AgentConfig
from apps.agents.models import Agent
from apps.conversations import working_memory
from apps.conversations.models import Consolidation, Message, Role, Session, SessionMeta
from apps.conversations.services.tool_results import check_tool_calls, check_tool_results
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
    tool_calls: list[JsonValue] | None = None
    created_at: datetime | None = None
    importance: float | None = None
    metadata: dict[str, JsonValue] = field(default_factory=dict)
    idempotency_key: str | None = None
    is_error: bool = False  # a tool message reporting its call failed
    # Set on the call the API records for a failing tool message appended without one.
    recorded: bool = False


@dataclass(frozen=True)
class AppendResult:
    messages: list[Message]  # in request order; a repeated idempotency key gives the stored row
    created: int  # of the request's messages (a call recorded for a failure is not counted)
    deduplicated: int
    # The rows this append stored (not deduplicated).
    created_ids: frozenset[uuid.UUID] = frozenset()


def message_bytes(content: str | None, tool_calls: list[JsonValue] | None) -> int:
    """A message's size for seed 000's max_history_bytes: its content and tool calls."""
    size = len((content or "").encode("utf-8"))
    if tool_calls:
        size += len(json.dumps(tool_calls, ensure_ascii=False).encode("utf-8"))
    return size


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
        if msg.tool_calls and msg.role != Role.ASSISTANT:
            raise InvalidInput("tool_calls are an assistant's", loc=[*loc, "tool_calls"])
        check_tool_calls(msg.tool_calls, loc)
        if msg.content is None and not msg.tool_calls:
            raise InvalidInput(
                "content is required (it may be null only with tool_calls)", loc=[*loc, "content"]
            )
        size = len((msg.content or "").encode("utf-8"))
        if size > limit:
            raise PayloadTooLarge(
                f"content is {size} bytes; the limit is {limit}", loc=[*loc, "content"]
            )


# The metadata of the call the API records for a failing tool message appended without one.
RECORDED = {"recorded_call": "a failing tool message was appended without the call it answers"}


def _with_recorded_calls(messages: Sequence[NewMessage]) -> list[NewMessage]:
    """`messages` with an assistant message calling its tool just before each failing tool
    message that names no call, which then answers it. InvalidInput when such a failure
    names no tool either."""
    out: list[NewMessage] = []
    for i, msg in enumerate(messages):
        if msg.role == Role.TOOL and msg.is_error and not msg.tool_call_id:
            if not msg.tool_name:
                raise InvalidInput(
                    "a failing tool message without tool_call_id needs tool_name",
                    loc=["body", "messages", i, "tool_name"],
                )
            ident = f"call_{uuid.uuid4().hex[:24]}"
            at, key = msg.created_at, msg.idempotency_key
            function: dict[str, JsonValue] = {"name": msg.tool_name, "arguments": "{}"}
            call: dict[str, JsonValue] = {"id": ident, "type": "function", "function": function}
            out.append(
                NewMessage(
                    role=Role.ASSISTANT,
                    content=None,
                    tool_calls=[call],
                    metadata=dict(RECORDED),
                    recorded=True,
                    # Just before the failure; a retried keyed failure finds its call by key.
                    created_at=at - timedelta(microseconds=1) if at is not None else None,
                    idempotency_key=f"{key[:190]}/call" if key else None,
                )
            )
            msg = replace(msg, tool_call_id=ident)
        out.append(msg)
    return out


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


DEADLOCK = "40P01"  # PostgreSQL's SQLSTATE for deadlock_detected


def messages_append(
    *, session: Session, messages: Sequence[NewMessage], max_batch: int = 1000
) -> AppendResult:
    """Append one or many messages atomically; a repeated idempotency key stores one row.
    Each tool message answers an unanswered tool call of the session (tool_results.py); a
    failing one without a call gets the call recorded just before it."""
    agent = session.agent
    _validate_batch(agent, messages, max_batch)
    messages = _with_recorded_calls(messages)
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
        except OperationalError as exc:
            # PostgreSQL chose this transaction as a deadlock's victim (seen beside the
            # embedding task's writes): it was rolled back whole, so running it again is safe.
            if getattr(exc.__cause__, "sqlstate", None) != DEADLOCK:
                raise
            continue
    raise Conflict("could not append: concurrent writes kept colliding, retry the request")


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
    positions: list[int] = []  # each new row's index in the request
    ordered: list[Message] = []
    request_index = -1
    for i, (msg, created_at, token_count) in enumerate(zip(messages, times, tokens, strict=True)):
        if not msg.recorded:
            request_index += 1
        if msg.idempotency_key and msg.idempotency_key in by_key:
            if not msg.recorded:
                ordered.append(by_key[msg.idempotency_key])
            continue
        failure_key = messages[i + 1].idempotency_key if msg.recorded else None
        if failure_key and failure_key in by_key:
            continue  # its failure is stored already: it answers the call stored with it
        row = _row(session, agent, config, msg, created_at, token_count)
        if msg.idempotency_key:
            by_key[msg.idempotency_key] = row
        to_create.append(row)
        positions.append(request_index + 1 if msg.recorded else request_index)
        if not msg.recorded:
            ordered.append(row)
    check_tool_results(session, to_create, positions)
    created_request = {m.id for m in ordered} & {m.id for m in to_create}
    Message.objects.bulk_create(to_create)
    if to_create:
        _count_hot_bytes(session, to_create)
        Session.objects.filter(pk=session.pk).update(updated_at=timezone.now())
        working_memory.invalidate(session.id)
        schedule_embedding(corpus="messages", agent_id=session.agent_id)
    return AppendResult(
        messages=ordered,
        created=len(created_request),
        deduplicated=len(ordered) - len(created_request),
        created_ids=frozenset(m.id for m in to_create),
    )


def _count_hot_bytes(session: Session, rows: list[Message]) -> None:
    meta, _ = SessionMeta.objects.get_or_create(session=session)
    # A backfilled message older than the compaction cutoff lands in the archive part.
    added = sum(r.byte_size for r in rows if meta.start_at is None or r.created_at >= meta.start_at)
    if added:
        SessionMeta.objects.filter(pk=meta.pk).update(hot_bytes=F("hot_bytes") + added)


def messages_mark_consolidated(*, ids: Sequence[uuid.UUID], kind: str, at: datetime) -> int:
    """Record that these messages were consolidated (seed 004), by the LLM or a fallback."""
    if kind not in Consolidation.values:
        raise ValueError(f"unknown consolidation kind {kind!r}")
    return Message.objects.filter(pk__in=list(ids)).update(consolidated_at=at, consolidation=kind)
