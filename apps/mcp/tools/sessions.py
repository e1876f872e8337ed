"""Sessions: create_session, append_messages (which, as the API, creates the session for a
new key), get_window."""

from ninja import Status
from pydantic import Field

from apps.api import sessions as sessions_api
from apps.api.registry import Endpoint
from apps.conversations.schemas import SessionIn
from apps.core.schemas import Input
from apps.mcp.tools import words
from apps.mcp.tools.base import READ, About, Tool, ToolRequest, on_path, part, whole, write
from apps.memory.schemas import MessagesIn

SESSION_ID = Field(..., max_length=200, description=words.SESSION)


class SessionRef(Input):
    session_id: str = SESSION_ID


class AppendIn(MessagesIn):
    session_id: str = SESSION_ID


def on_session(name: str, endpoint: Endpoint, about: About) -> Tool:
    """A tool over POST or GET /sessions/{session_id}/...: its one argument is the path's."""
    return on_path(name, endpoint, SessionRef, about, path="session_id")


def _append(request: ToolRequest, args: AppendIn) -> Status[dict]:
    # A key not used yet starts its session, in the endpoint itself (as over the API).
    return sessions_api.append_messages(
        request, session_id=args.session_id, payload=part(args, MessagesIn)
    )


CREATE = About(
    title="Start a conversation session",
    description="""
        Start a session: one conversation whose messages memoryhub keeps. Give it a `key` of
        your own (for example the chat or thread id) and every other tool accepts that key
        as the session. Called again with a key you already used, it returns that session
        unchanged. Set `user` when you talk with one end user there: what is remembered in
        the session is then theirs. You seldom need this tool: append_messages starts the
        session for a new key by itself.

        Returns the session: its `id`, `key`, `user`, `title`, `metadata` and times.
        """,
    # Without a key every call starts another session.
    hints=write(destructive=False, idempotent=False),
    docs={
        "key": "Your own identifier for the session (letters, digits and . _ : @ -). If you "
        "already have a session with this key, that one is returned. Without a key, the "
        "session's id is its key.",
        "user": "The end user you talk with in this session (your own id for them, e.g. "
        "telegram:42), set once at the start: what is remembered in the session is theirs, "
        "and the session sees your memory and theirs.",
        "title": "A title for the session.",
        "metadata": "Any JSON object to keep with the session.",
    },
)

APPEND = About(
    title="Save conversation messages",
    brief=(
        "Save a turn's new messages to a session, all or none: after each turn. A key not used "
        "yet starts a session. Returns the stored `messages`; for a tool result marked is_error, "
        "`hints` from earlier failures."
    ),
    brief_omits=("messages.name", "messages.created_at"),
    brief_docs={
        "messages.idempotency_key": (
            "Your id for the message, unique in the session: a retry with it is stored once."
        ),
        "messages.is_error": (
            "Marks a failed tool result: it is remembered, and `hints` say what worked before."
        ),
        "messages.metadata": "A JSON object to keep with the message.",
    },
    description="""
        Save one or more messages to a session, all or none. Call it after each turn with
        the new messages (the user's, yours, your tool calls and their results) so that
        later turns, and other sessions, can remember them. A key you have not used yet
        starts a new session.

        Returns `created` (messages stored), `deduplicated` (messages skipped because their
        `idempotency_key` was already stored), the stored `messages`, `lifecycle` (upkeep
        the save started in the background: summary, consolidate, compact) and `hints`:
        for a tool result marked `is_error`, what earlier failures of that tool taught.
        """,
    hints=write(destructive=False, idempotent=False),
    docs={
        "session_id": words.SESSION + " A key you have not used yet starts a new session.",
        "messages": "The messages to save, oldest first.",
        "messages.role": "Who spoke: user, assistant, tool (a tool's result) or system.",
        "messages.content": "The text. Null only for an assistant message with tool_calls.",
        "messages.name": "The speaker's name, if any (as in OpenAI's chat format).",
        "messages.tool_call_id": "For a tool result: the id of the call it answers, a call "
        "of this session (saved before, or earlier in this save) not answered yet.",
        "messages.tool_name": "For a tool result: the tool that ran.",
        "messages.tool_calls": "For an assistant message: the tool calls it made, as in "
        "OpenAI's chat format.",
        "messages.created_at": "When it was said (ISO 8601; a time without offset is UTC). "
        "Default: now.",
        "messages.importance": "How much the message matters, from 0 to 1. Very important "
        "messages are brought back by get_context even when they are old.",
        "messages.metadata": "Any JSON object to keep with the message; search_chat_history "
        "can filter on it.",
        "messages.idempotency_key": "An id of your choosing, unique in the session: a message "
        "sent again with the same key is stored once, so retrying a save never doubles it.",
        "messages.is_error": "Mark a tool result whose call failed: the failure is "
        "remembered, and `hints` in the answer say what worked or failed before with that "
        "tool. A failure with no saved call: give tool_name and no tool_call_id, and the "
        "call is recorded for it.",
    },
)

WINDOW = About(
    title="Read a session's recent messages",
    description="""
        Read the recent part of a conversation: its latest messages (older ones were moved
        to an archive entry, where search still finds them), the rolling `summary` of what
        came before, and after a consolidation a `recap`. Use it to replay a conversation's
        recent turns; for a prompt within a token budget, with relevant memory added, use
        get_context instead.

        Returns `messages` (oldest first), `summary`, `recap`, `markers` (where the history
        was cut, and the archive entry that holds what came before) and `unsummarised` (how
        many of the messages the summary does not cover yet).
        """,
    hints=READ,
)

TOOLS = [
    whole("create_session", sessions_api.create_session, SessionIn, CREATE),
    Tool(
        name="append_messages",
        endpoint=sessions_api.append_messages,
        params=AppendIn,
        call=_append,
        about=APPEND,
    ),
    on_session("get_window", sessions_api.get_window, WINDOW),
]
