"""Request and response bodies for the conversation endpoints."""

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import AfterValidator, Field

from apps.agents.schemas import AllUsers, Owned, ReadFor, UserRef
from apps.conversations.models import Message
from apps.conversations.selectors import Window
from apps.core.fields import FiniteFloat, JsonObject, JsonObjectList, UtcDatetime, bounded_json
from apps.core.pagination import PageQuery
from apps.core.schemas import Input

# Any: a JSONField's value (django-stubs types it Any); published as any JSON object.
JsonOut = dict[str, Any]
RoleName = Literal["user", "assistant", "tool", "system"]
SessionKey = str


class MessageQuery(PageQuery):
    after: UtcDatetime | None = None
    before: UtcDatetime | None = None
    role: list[RoleName] | None = None
    order: str = Field("asc", pattern="^(asc|desc)$")


class SessionIn(Input):
    key: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        pattern=r"^[A-Za-z0-9._:@\-]+$",
        description="The agent's own identifier for the session; a session with it is reused.",
    )
    user: UserRef | None = Field(
        None,
        description="The end user the agent talks to here, set at creation: what is "
        "remembered in this session is theirs, and it reads the agent's memory and theirs.",
    )
    title: str = Field("", max_length=500)
    metadata: JsonObject = Field(default_factory=dict)


class SessionQuery(PageQuery):
    user: UserRef | None = Field(
        None,
        description="Only this end user's sessions. Without it (and without all_users): "
        "the agent's own sessions, those without a user.",
    )
    all_users: AllUsers = False


class PopQuery(Input):
    user: UserRef | None = Field(
        None, description="The end user the call acts for: a 422 unless the session's."
    )


class SessionPatch(Input):
    title: str | None = Field(None, max_length=500)
    metadata: JsonObject | None = None


class SessionOut(Owned):
    id: uuid.UUID
    key: str
    title: str
    metadata: JsonOut
    created_at: datetime
    updated_at: datetime


class SessionPage(Schema):
    items: list[SessionOut]
    next_cursor: str | None


class MessageIn(Input):
    role: RoleName
    content: str | None = Field(..., description="Required; null only with tool_calls.")
    name: str = Field("", max_length=200, description="The participant, as in OpenAI's format.")
    tool_call_id: str | None = Field(
        None,
        max_length=200,
        description="A tool message's: the id of a call of this session (stored before, or "
        "earlier in the batch) that no tool message answered yet; required, except on a "
        "failure (is_error) with tool_name, whose call is then recorded for it.",
    )
    tool_name: str | None = Field(None, max_length=200)
    tool_calls: JsonObjectList | None = Field(
        None,
        description="An assistant's: each call with an id (unique in the message) and "
        "a function name, as in OpenAI's format.",
    )
    created_at: UtcDatetime | None = Field(
        None, description="ISO 8601; a time without offset is taken as UTC."
    )
    importance: float | None = Field(None, ge=0.0, le=1.0)
    metadata: JsonObject = Field(default_factory=dict)
    idempotency_key: str | None = Field(None, min_length=1, max_length=200)
    is_error: bool = Field(
        False,
        description="A tool message whose call failed: recorded in error memory, and the "
        "append's response carries hints from earlier failures of the tool.",
    )


class MessageOut(Schema):
    id: uuid.UUID
    session_id: uuid.UUID
    role: str
    name: str
    content: str
    tool_call_id: str | None
    tool_name: str | None
    tool_calls: list[JsonOut] | None = Field(None, alias="tool_calls_json")
    created_at: datetime
    importance: float
    metadata: JsonOut
    token_count: int
    embedded: bool = False
    is_error: bool = False

    @staticmethod
    def resolve_embedded(obj: Message) -> bool:
        return bool(obj.embedding_model)

    @staticmethod
    def resolve_is_error(obj: Message) -> bool:
        return bool(obj.is_error)


class MessagePage(Schema):
    items: list[MessageOut]
    next_cursor: str | None


class MarkerOut(Schema):
    """A compact marker: where the history was compacted, and into which archive entry."""

    archive_name: str
    archived_at: datetime
    cutoff_at: datetime
    first_message_at: datetime
    last_message_at: datetime
    message_count: int
    bytes: int


class WindowOut(Schema):
    session_id: uuid.UUID
    start_at: datetime | None
    summary: str | None
    markers: list[MarkerOut]
    messages: list[MessageOut]
    unsummarised: int = Field(
        0,
        description="How many of `messages` are past max_history_messages: they left the "
        "window and the summary does not cover them yet (window_includes_unsummarised).",
    )
    recap: str | None = Field(
        None,
        description="A recap of the messages a consolidation left that `messages` "
        "does not carry: one `[YYYY-MM-DD HH:MM] role: content` line each, cut to "
        "recap_message_chars. None before any consolidation.",
    )

    # Read from a selectors.Window.
    @staticmethod
    def resolve_session_id(obj: Window) -> uuid.UUID:
        return obj.session.id

    @staticmethod
    def resolve_recap(obj: Window) -> str | None:
        return obj.recap.text if obj.recap else None


# --- search_chat_history (POST /search) ---------------------------------------------------
SearchMode = Literal["semantic", "keyword", "hybrid", "contains"]
Scalar = str | int | float | bool


class ChatSearchIn(ReadFor):
    query: str
    mode: SearchMode = "semantic"
    k: int = Field(10, ge=1, le=100)
    session_id: str | None = None
    role: str | list[str] | None = None
    after: UtcDatetime | None = None
    before: UtcDatetime | None = None
    metadata: Annotated[dict[str, Scalar], AfterValidator(bounded_json)] | None = None
    min_score: FiniteFloat | None = None


class LegOut(Schema):
    rank: int
    score: float


class QuotedMessage(Schema):
    # What a search hit or a context shows of a message first (a base, not published):
    # enough to replay it, tool calls and results included.
    id: uuid.UUID
    session_id: uuid.UUID
    role: str
    name: str
    content: str
    tool_call_id: str | None = Field(description="A tool message's: the call it answers.")
    tool_name: str | None = Field(description="A tool message's: the tool that answered.")
    tool_calls: list[JsonOut] | None = Field(
        description="An assistant message's tool calls, as appended (OpenAI's shape: "
        '{"id", "type": "function", "function": {"name", "arguments"}}).'
    )
    created_at: datetime


def quoted(message: Message, *, content: str | None = None) -> QuotedMessage:
    """The QuotedMessage of a stored message (which keeps tool_calls as tool_calls_json);
    `content` in place of its own (cut to a budget, dates resolved)."""
    names = [name for name in QuotedMessage.model_fields if name != "tool_calls"]
    fields = {name: getattr(message, name) for name in names}
    if content is not None:
        fields["content"] = content
    return QuotedMessage(**fields, tool_calls=message.tool_calls_json)


class ChatSearchMessageOut(QuotedMessage):
    metadata: JsonOut


class ChatSearchHitOut(ChatSearchMessageOut):
    score: float
    legs: dict[str, LegOut]
    window: int  # index into `windows`


class ChatSearchWindowOut(Schema):
    session_id: uuid.UUID
    messages: list[ChatSearchMessageOut]


class ChatSearchOut(Schema):
    query: str
    mode: SearchMode
    degraded: list[str] = Field(
        default_factory=list,
        description='Legs that could not run: ["semantic"] when the query could not be '
        'embedded and keyword (BM25) results stand in; "rerank" when hybrid reranking could '
        "not run (the token projection was refused) and the fused order stands. Empty when "
        "healthy.",
    )
    hits: list[ChatSearchHitOut]
    windows: list[ChatSearchWindowOut]
