"""Sessions, their messages and hot window: the server's schemas, field for field."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import Field

from memoryhub_client.models.common import Model, Page, QuotedMessage, component


@component("SessionOut")
class Session(Model):
    """The server's `SessionOut`."""

    user: str | None = None
    id: UUID
    key: str
    title: str
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime


@component("SessionIn")
class SessionIn(Model):
    """The server's `SessionIn`."""

    key: str | None = None
    user: str | None = None
    title: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


@component("SessionQuery")
class SessionQuery(Model):
    """The server's `SessionQuery`."""

    cursor: str | None = None
    limit: int = 50
    user: str | None = None
    all_users: bool = False


@component("SessionPage")
class SessionPage(Page[Session]):
    """A page of `Session`: items and next_cursor."""


@component("SessionPatch")
class SessionPatch(Model):
    """The server's `SessionPatch`."""

    title: str | None = None
    metadata: dict[str, Any] | None = None


@component("MessageQuery")
class MessageQuery(Model):
    """The server's `MessageQuery`."""

    cursor: str | None = None
    limit: int = 50
    after: datetime | None = None
    before: datetime | None = None
    role: list[Literal["user", "assistant", "tool", "system"]] | None = None
    order: str = "asc"


@component("MessageOut")
class Message(QuotedMessage):
    """The server's `MessageOut`."""

    tool_calls: list[dict[str, Any]] | None = None
    importance: float
    metadata: dict[str, Any]
    token_count: int
    embedded: bool = False
    is_error: bool = False


@component("MessagePage")
class MessagePage(Page[Message]):
    """A page of `Message`: items and next_cursor."""


@component("HintOut")
class Hint(Model):
    """The server's `HintOut`."""

    tool_name: str
    error_id: int
    outcome: str
    rule: Literal["apply", "avoid", "seen before"]
    text: str
    error: str
    strategy: str
    resolution: str
    similarity: float


@component("AppendOut")
class AppendResult(Model):
    """The server's `AppendOut`."""

    created: int
    deduplicated: int
    messages: list[Message]
    lifecycle: list[str]
    hints: list[Hint]


@component("MessageIn")
class NewMessage(Model):
    """The server's `MessageIn`."""

    role: Literal["user", "assistant", "tool", "system"]
    content: str | None
    name: str = ""
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    created_at: datetime | None = None
    importance: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    idempotency_key: str | None = None
    is_error: bool = False


@component("MessagesIn")
class MessagesIn(Model):
    """The server's `MessagesIn`."""

    messages: list[NewMessage]


@component("MarkerOut")
class Marker(Model):
    """The server's `MarkerOut`."""

    archive_name: str
    archived_at: datetime
    cutoff_at: datetime
    first_message_at: datetime
    last_message_at: datetime
    message_count: int
    bytes: int


@component("WindowOut")
class Window(Model):
    """The server's `WindowOut`."""

    session_id: UUID
    start_at: datetime | None
    summary: str | None
    markers: list[Marker]
    messages: list[Message]
    unsummarised: int = 0
    recap: str | None = None


@component("PopQuery")
class PopQuery(Model):
    """The server's `PopQuery`."""

    user: str | None = None
