"""get_context's answer (/context): the server's schemas, field for field."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal
from uuid import UUID

from pydantic import Field

from memoryhub_client.chat import to_openai_messages
from memoryhub_client.models.common import Model, QuotedMessage, component
from memoryhub_client.models.lifecycle import Run


@component("LegOut")
class Leg(Model):
    """The server's `LegOut`."""

    rank: int
    score: float


@component("ContextFactOut")
class ContextFact(Model):
    """The server's `ContextFactOut`."""

    id: int
    category: str
    key: str
    value: str
    importance: float
    salience: float
    tokens: int


@component("ContextMessageOut")
class ContextMessage(QuotedMessage):
    """The server's `ContextMessageOut`."""

    importance: float
    metadata: dict[str, Any]
    tokens: int
    legs: list[str]
    similarity: float | None
    truncated: bool


@component("DroppedOut")
class Dropped(Model):
    """The server's `DroppedOut`."""

    kind: str
    name: str
    tokens: int


@component("MemoryMessageOut")
class MemoryMessage(ContextMessage):
    """The server's `MemoryMessageOut`: a context message, and how search ranked it."""

    hit: bool
    rank: int | None
    score: float | None
    search_legs: dict[str, Leg] | None


@component("MemoryWindowOut")
class MemoryWindow(Model):
    """The server's `MemoryWindowOut`."""

    session_id: UUID
    session_key: str
    session_title: str
    date: dt.date
    header: str
    rank: int
    tokens: int
    messages: list[MemoryMessage]


@component("PartOut")
class Part(Model):
    """The server's `PartOut`."""

    kind: str
    name: str
    title: str = ""  # the plain heading for a prompt ("" from an older server)
    content: str
    tokens: int
    truncated: bool = False


@component("SystemOut")
class System(Model):
    """The server's `SystemOut`."""

    parts: list[Part]
    facts: list[ContextFact]
    tokens: int


@component("TokensOut")
class Tokens(Model):
    """The server's `TokensOut`."""

    system: int
    facts: int
    messages: int
    memory: int = 0
    total: int


@component("UsageCountedOut")
class UsageCounted(Model):
    """The server's `UsageCountedOut`."""

    system: int
    summary: int
    messages: int
    message_count: int
    estimate: int
    observed: int | None


@component("UsageOut")
class Usage(Model):
    """The server's `UsageOut`."""

    max_tokens: int
    used_tokens: int
    required_tokens: int
    ratio: float
    flush_ratio: float
    compact_ratio: float
    flush_recommended: bool
    compact_required: bool
    context_window_tokens: int
    usage_ratio: float
    usage_tokens: int
    measured_by: Literal["observed", "estimate"]
    counted: UsageCounted
    action: Literal["none", "flush", "compact"]
    action_status: Literal["none", "queued", "already_queued", "done", "off"]
    runs: list[Run]


@component("ContextOut")
class Context(Model):
    """The server's `ContextOut`: get_context's answer (system part, messages, memory
    windows, token figures and usage)."""

    session_id: UUID
    query: str | None
    system: System
    messages: list[ContextMessage]
    memory: list[MemoryWindow] = Field(default_factory=list)
    tokens: Tokens
    usage: Usage
    dropped: list[Dropped]
    warnings: list[str]
    degraded: list[str] = Field(default_factory=list)
    token_counter: str

    def openai_messages(self) -> list[dict[str, Any]]:
        """The context as an OpenAI chat `messages` list: the system part first, every tool
        result right after the assistant turn that called it (memoryhub_client.chat)."""
        return to_openai_messages(self)


@component("ContextIn")
class ContextIn(Model):
    """The server's `ContextIn`."""

    user: str | None = None
    session_id: str
    query: str | None = None
    max_tokens: int | None = None
    lifecycle: Literal["background", "wait", "off"] = "background"
    observed_tokens: int | None = None
