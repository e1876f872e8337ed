"""Sessions: create_session, append_messages (creating the session for a new key, as an
agent expects), get_window."""

import uuid
from collections.abc import Callable
from typing import Any

import pydantic
from ninja import Schema
from pydantic import Field

from apps.api import sessions as sessions_api
from apps.conversations.schemas import SessionIn
from apps.conversations.selectors import session_get
from apps.core.errors import NotFound
from apps.mcp.tools.base import Tool, ToolRequest, part, whole
from apps.memory.schemas import MessagesIn

SESSION_ID = Field(..., max_length=200, description="The session's id or the agent's own key.")


class SessionRef(Schema):
    session_id: str = SESSION_ID


class AppendIn(MessagesIn):
    session_id: str = SESSION_ID


def on_session(name: str, endpoint: Callable[..., Any]) -> Tool:
    """A tool over POST or GET /sessions/{session_id}/...: its one argument is the path's."""
    return Tool(
        name=name,
        endpoint=endpoint,
        params=SessionRef,
        call=lambda request, args: endpoint(request, session_id=args.session_id),
    )


def _new_key(ref: str) -> SessionIn | None:
    """POST /sessions's payload for `ref` when it can name a new session: not an id, and a
    valid key; None otherwise."""
    try:
        uuid.UUID(ref)
        return None
    except ValueError:
        pass
    try:
        return SessionIn.model_validate({"key": ref})
    except pydantic.ValidationError:
        return None


def _ensure_session(request: ToolRequest, ref: str) -> None:
    """A key the agent has not used yet becomes a session (POST /sessions with that key)."""
    try:
        session_get(agent=request.auth, ref=ref)
    except NotFound:
        payload = _new_key(ref)
        if payload is None:
            raise
        sessions_api.create_session(request, payload=payload)


def _append(request: ToolRequest, args: AppendIn):
    _ensure_session(request, args.session_id)
    return sessions_api.append_messages(
        request, session_id=args.session_id, payload=part(args, MessagesIn)
    )


TOOLS = [
    whole("create_session", sessions_api.create_session, SessionIn),
    Tool(
        name="append_messages",
        endpoint=sessions_api.append_messages,
        params=AppendIn,
        call=_append,
        description=(
            "Append one or many messages to a session atomically: all are stored, or none. "
            "`session_id` is the session's id or the agent's own key; a key not used yet "
            "creates the session. `lifecycle` names what the append set off in the "
            "background (summary, consolidate, compact)."
        ),
    ),
    on_session("get_window", sessions_api.get_window),
]
