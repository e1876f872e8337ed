"""The append's rule for tool messages (issue 41): each answers a tool call of its own session
that no tool message answered yet, as OpenAI's chat format requires. A failing tool message
without a call gets one recorded for it (message_append.py): an assistant message calling its
tool.

Calls are named by their "id", as the window's pairing reads them
(apps/conversations/tool_call_pairs.py), in OpenAI's shape or the flat {"id", "name"} of other
SDKs; ids may be reused across turns, so a result answers the newest call with its id.
"""

from collections.abc import Sequence

from django.db.models import Q

from apps.conversations.models import Message, Role, Session
from apps.core.errors import InvalidInput

RULE = "a tool message answers a tool call of its own session"


def _call_id(call: object) -> object:
    if not isinstance(call, dict):
        return None
    return call.get("id")


def _call_name(call: dict) -> object:
    function = call.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    return name or call.get("name")


def check_tool_calls(calls: Sequence[object] | None, loc: list[str | int]) -> None:
    """InvalidInput unless each call is an object with an id (unique in the message) and a
    function name, so that a replay can name it and its results can answer it."""
    seen: set[str] = set()
    for j, call in enumerate(calls or []):
        ident = _call_id(call)
        if not isinstance(ident, str) or not ident:
            raise InvalidInput("a tool call needs a string id", loc=[*loc, "tool_calls", j, "id"])
        if ident in seen:
            raise InvalidInput(
                f"tool call id '{ident}' is repeated in the message",
                loc=[*loc, "tool_calls", j, "id"],
            )
        seen.add(ident)
        assert isinstance(call, dict)  # _call_id read an id from it
        name = _call_name(call)
        if not isinstance(name, str) or not name:
            raise InvalidInput(
                "a tool call needs a function name", loc=[*loc, "tool_calls", j, "function"]
            )


def call_ids(calls: object) -> list[str]:
    """The ids of a message's tool calls, in order."""
    if not isinstance(calls, list):
        return []
    return [str(i) for i in (_call_id(c) for c in calls) if i]


def _open_calls(session: Session, wanted: set[str]) -> set[str]:
    """Of the call ids `wanted`, those the session's stored messages call and leave unanswered
    (its newest call of that id has no tool message after it)."""
    rows = (
        Message.objects.filter(session=session)
        .filter(
            Q(role=Role.ASSISTANT, tool_calls_json__isnull=False)
            | Q(role=Role.TOOL, tool_call_id__in=wanted)
        )
        .order_by("created_at", "id")
        .values_list("role", "tool_call_id", "tool_calls_json")
    )
    open_ids: set[str] = set()
    for role, answered, calls in rows:
        if role == Role.ASSISTANT:
            open_ids.update(i for i in call_ids(calls) if i in wanted)
        else:
            open_ids.discard(answered)
    return open_ids


def check_tool_results(session: Session, rows: Sequence[Message], positions: Sequence[int]) -> None:
    """InvalidInput unless each tool message of `rows` (new rows, in request order;
    `positions` their indexes in the request) answers an unanswered call of the session: one
    stored before, or one made earlier in the batch."""
    wanted = {str(m.tool_call_id) for m in rows if m.role == Role.TOOL and m.tool_call_id}
    open_ids = _open_calls(session, wanted) if wanted else set()
    for message, i in zip(rows, positions, strict=True):
        if message.role == Role.ASSISTANT:
            open_ids.update(call_ids(message.tool_calls_json))
        elif message.role == Role.TOOL:
            _answer(message.tool_call_id, open_ids, ["body", "messages", i, "tool_call_id"])


def _answer(call_id: str | None, open_ids: set[str], loc: list[str | int]) -> None:
    if not call_id:
        raise InvalidInput(
            f"{RULE}: tool_call_id is required (a failing tool without a call: send "
            '"is_error": true and tool_name, and its call is recorded)',
            loc=loc,
        )
    if call_id not in open_ids:
        raise InvalidInput(
            f"{RULE}: no unanswered tool call '{call_id}' in the session or before it in "
            "the request",
            loc=loc,
        )
    open_ids.discard(call_id)
