"""Error memory (/errors) and learnings: the server's schemas, field for field."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from memoryhub_client.models.common import Model, Page, Ranked, component


@component("ErrorOut")
class ErrorRecord(Model):
    """The server's `ErrorOut`."""

    id: int
    session_id: UUID | None
    tool_name: str
    error: str
    arguments: dict[str, Any]
    context: dict[str, Any]
    strategy: str
    outcome: str
    resolution: str
    hit_count: int
    last_hit_at: datetime | None
    expires_at: datetime
    created_at: datetime
    updated_at: datetime


@component("ErrorIn")
class ErrorIn(Model):
    """The server's `ErrorIn`."""

    user: str | None = None
    tool_name: str
    error: str
    arguments: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    strategy: str = ""
    outcome: Literal["open", "resolved", "failed", "abandoned"] = "open"
    resolution: str = ""
    session_id: str | None = None


@component("ErrorQuery")
class ErrorQuery(Model):
    """The server's `ErrorQuery`."""

    user: str | None = None
    all_users: bool = False
    tool_name: str | None = None
    outcome: Literal["open", "resolved", "failed", "abandoned"] | None = None
    cursor: str | None = None
    limit: int = 50


@component("ErrorPage")
class ErrorPage(Page[ErrorRecord]):
    """A page of `ErrorRecord`: items and next_cursor."""


@component("ErrorHitOut")
class ErrorHit(Model):
    """The server's `ErrorHitOut`."""

    record: ErrorRecord
    score: float
    legs: dict[str, float]


@component("ErrorSearchOut")
class ErrorSearchResult(Ranked[ErrorHit]):
    """The server's `ErrorSearchOut`."""


@component("ErrorSearchIn")
class ErrorSearchIn(Model):
    """The server's `ErrorSearchIn`."""

    user: str | None = None
    all_users: bool = False
    query: str
    tool_name: str | None = None
    k: int = 10
    session_id: str | None = None


@component("ErrorPatch")
class ErrorPatch(Model):
    """The server's `ErrorPatch`."""

    outcome: Literal["open", "resolved", "failed", "abandoned"] | None = None
    strategy: str | None = None
    resolution: str | None = None


@component("LearningOut")
class Learning(Model):
    """The server's `LearningOut`."""

    user: str | None = None
    id: int
    kind: str
    content: str
    source: str
    status: str
    session_id: UUID | None
    session_key: str
    error_record_id: int | None
    seen_count: int
    last_seen_at: datetime | None
    created_at: datetime
    updated_at: datetime


@component("LearningIn")
class LearningIn(Model):
    """The server's `LearningIn`."""

    user: str | None = None
    scope: Literal["agent", "user"] | None = None
    kind: Literal["error", "correction"]
    content: str
    source: Literal["agent", "user"] = "agent"
    session_id: str | None = None


@component("LearningQuery")
class LearningQuery(Model):
    """The server's `LearningQuery`."""

    user: str | None = None
    all_users: bool = False
    kind: Literal["error", "correction"] | None = None
    status: Literal["active", "pending", "archived"] | None = None
    cursor: str | None = None
    limit: int = 50


@component("LearningPage")
class LearningPage(Page[Learning]):
    """A page of `Learning`: items and next_cursor."""


@component("LearningPatch")
class LearningPatch(Model):
    """The server's `LearningPatch`."""

    kind: Literal["error", "correction"] | None = None
    content: str | None = None
    status: Literal["active", "pending", "archived"] | None = None
