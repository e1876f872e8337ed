"""Seed 000's error memory at the moment a tool fails: the failing tool message is recorded,
and the append answers with hints from the tool's earlier failures. Seed 001's
learnings/errors.md gets it too: an error learning with the call's arguments and the user's
request before it, one per tool and normalised error.

The tool is the message's tool_name, or the name of the call it answers (its tool_call_id,
in the same batch or among the session's recent assistant messages).
"""

import json
from collections.abc import Collection, Sequence
from dataclasses import replace

from django.db import transaction

from apps.agents.users import Audience
from apps.conversations.models import Message, Role, Session
from apps.conversations.selectors import before
from apps.conversations.services import NewMessage
from apps.core.errors import InvalidInput
from apps.learnings.selectors import Hint, error_hints
from apps.learnings.services import (
    Failure,
    error_capture,
    errors_touch,
    learning_capture,
)
from apps.people.selectors import failure_origin

RECENT_CALLS = 50  # assistant messages searched for the call a failing tool message answers

# A call's function as OpenAI's format has it: {"name": ..., "arguments": ...}.
Call = dict[str, object]


def _calls(tool_calls: object) -> dict[str, Call]:
    """tool_call_id -> the call's function ({"name", "arguments"}) in OpenAI's format."""
    found: dict[str, Call] = {}
    if not isinstance(tool_calls, list):  # none, or not a list of calls: no call
        return found
    for call in tool_calls:
        if isinstance(call, dict) and call.get("id") is not None:
            function = call.get("function")
            if not isinstance(function, dict):
                function = {}
            found[str(call["id"])] = {
                "name": function.get("name") or call.get("name"),
                "arguments": function.get("arguments"),
            }
    return found


def _known_calls(session: Session, messages: Sequence[NewMessage]) -> dict[str, Call]:
    calls: dict[str, Call] = {}
    for message in messages:
        calls.update(_calls(message.tool_calls))
    wanted = {m.tool_call_id for m in messages if m.is_error and m.tool_call_id} - set(calls)
    if wanted:
        earlier = (
            Message.objects.filter(session=session, role="assistant", tool_calls_json__isnull=False)
            .order_by("-created_at", "-id")
            .values_list("tool_calls_json", flat=True)[:RECENT_CALLS]
        )
        for tool_calls in reversed(list(earlier)):
            calls.update(_calls(tool_calls))
    return calls


def named_failures(
    session: Session, messages: Sequence[NewMessage]
) -> tuple[list[NewMessage], dict[str, Call]]:
    """The messages with each failing tool message's tool_name filled in, and the known
    calls; InvalidInput (nothing stored) when a failure names no tool."""
    calls = _known_calls(session, messages)
    named = []
    for i, message in enumerate(messages):
        if message.is_error and message.role == "tool" and not message.tool_name:
            name = (calls.get(str(message.tool_call_id)) or {}).get("name")
            if not name:
                raise InvalidInput(
                    "a failing tool message needs tool_name, or the tool_call_id of a known call",
                    loc=["body", "messages", i, "tool_name"],
                )
            message = replace(message, tool_name=str(name)[:200])
        named.append(message)
    return named, calls


def _arguments(call: Call | None) -> object:
    raw = (call or {}).get("arguments")
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return {"raw": raw}
    return raw if isinstance(raw, dict) else {}


def _request_before(message: Message) -> str:
    """The user's message the failing call answered: the latest one before it."""
    found = (
        Message.objects.filter(session_id=message.session_id, role=Role.USER)
        .filter(before(message.created_at, message.id))
        .order_by("-created_at", "-id")
        .values_list("content", flat=True)
        .first()
    )
    return found or ""


def capture_and_hint(
    *,
    session: Session,
    stored: Sequence[Message],
    created_ids: Collection[object],
    calls: dict[str, Call],
) -> list[Hint]:
    """Record each failing tool message this append stored, then the hints for each failing
    tool: its other records, best first, as the session's user reads them (their own raw,
    the others' de-identified); the hints' TTLs are refreshed. Each failure also becomes (or
    touches) an error learning, in the record's transaction. Both are shared de-identified
    (issue 39): the session user's raw text is theirs alone."""
    latest: dict[str, Message] = {}
    new_records: set[int] = set()
    origin = failure_origin(agent=session.agent, user=session.user, session=session)
    for message in stored:
        if not (message.is_error and message.id in created_ids):
            continue
        tool_name = message.tool_name
        assert tool_name is not None  # named_failures named every failing tool message
        arguments = _arguments(calls.get(str(message.tool_call_id)))
        request = _request_before(message)
        failure = Failure(tool_name, message.content, arguments, request)
        # A user's session key is theirs: their raw text keeps it, the shared row does not.
        context = {"tool_call_id": message.tool_call_id}
        if not session.user:
            context = {"session": session.key, **context}
        with transaction.atomic():
            record, created = error_capture(
                agent=session.agent,
                tool_name=tool_name,
                error=message.content,
                arguments=arguments,
                context=context,
                request=request,
                origin=origin,
            )
            learning_capture(
                agent=session.agent, failure=failure, error_record=record, origin=origin
            )
        if created:
            new_records.add(record.pk)
        latest[tool_name] = message
    hints: list[Hint] = []
    audience = Audience(session.user)
    for tool, message in latest.items():
        hints += error_hints(
            agent=session.agent,
            tool_name=tool,
            error=origin.scrubber.text(message.content),
            audience=audience,
            exclude=new_records,
        )
    errors_touch(agent=session.agent, ids=[h.record.pk for h in hints])
    return hints
