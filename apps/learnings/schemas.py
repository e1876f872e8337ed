"""Request and response bodies for error memory and learnings."""

import uuid
from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import Field

from apps.agents.schemas import ForUser, Owned, ReadFor, ScopedWrite
from apps.core.fields import JsonObject
from apps.core.pagination import PageQuery
from apps.core.schemas import Input
from apps.learnings.selectors import Hint

# Any: a JSONField's value (django-stubs types it Any); published as any JSON object.
JsonOut = dict[str, Any]
OutcomeName = Literal["open", "resolved", "failed", "abandoned"]
KindName = Literal["error", "correction"]
StatusName = Literal["active", "pending", "archived"]


class ErrorFilters(Input):
    tool_name: str | None = Field(None, max_length=200)
    outcome: OutcomeName | None = None


class LearningFilters(Input):
    kind: KindName | None = None
    status: StatusName | None = None


class ErrorQuery(PageQuery, ErrorFilters, ReadFor):  # GET /errors
    pass


class LearningQuery(PageQuery, LearningFilters, ReadFor):  # GET /learnings
    pass


class ErrorIn(ForUser):
    tool_name: str = Field(..., max_length=200)
    error: str
    arguments: JsonObject | None = None
    context: JsonObject | None = None
    strategy: str = Field("", description="What was tried.")
    outcome: OutcomeName = "open"
    resolution: str = ""
    session_id: str | None = Field(None, max_length=200)


class ErrorPatch(Input):
    outcome: OutcomeName | None = None
    strategy: str | None = None
    resolution: str | None = None


class ErrorOut(Schema):
    id: int
    session_id: uuid.UUID | None
    tool_name: str
    error: str
    arguments: JsonOut
    context: JsonOut
    strategy: str
    outcome: str
    resolution: str
    hit_count: int
    last_hit_at: datetime | None
    expires_at: datetime
    created_at: datetime
    updated_at: datetime


class ErrorPage(Schema):
    items: list[ErrorOut]
    next_cursor: str | None


class ErrorSearchIn(ReadFor):
    query: str = Field(..., max_length=4000)
    tool_name: str | None = Field(None, max_length=200)
    k: int = Field(10, ge=1, le=100)
    session_id: str | None = Field(None, max_length=200)


class ErrorHitOut(Schema):
    record: ErrorOut
    score: float
    legs: dict[str, float]


class ErrorSearchOut(Schema):
    items: list[ErrorHitOut]
    degraded: list[str] = Field(
        default_factory=list,
        description='["semantic"] when the query could not be embedded and the substring leg '
        "answered alone. Empty when healthy.",
    )


class HintOut(Schema):
    """An earlier failure's lesson: "apply: <resolution>", "avoid: <strategy>" or "seen before"."""

    tool_name: str
    error_id: int
    outcome: str
    rule: Literal["apply", "avoid", "seen before"]
    text: str
    error: str
    strategy: str
    resolution: str
    similarity: float


class LearningIn(ScopedWrite):
    kind: KindName
    content: str
    source: Literal["agent", "user"] = "agent"
    session_id: str | None = Field(None, max_length=200)


class LearningPatch(Input):
    kind: KindName | None = None
    content: str | None = None
    status: StatusName | None = None


class LearningOut(Owned):
    id: int
    kind: str
    content: str
    source: str
    status: str
    session_id: uuid.UUID | None
    session_key: str
    error_record_id: int | None
    seen_count: int = Field(
        description="A captured failure (source capture): how often it happened; else 1."
    )
    last_seen_at: datetime | None
    created_at: datetime
    updated_at: datetime


class LearningPage(Schema):
    items: list[LearningOut]
    next_cursor: str | None


def hint_out(hint: Hint) -> dict[str, object]:
    """A selectors.Hint as a HintOut body."""
    record = hint.record
    return {
        "tool_name": record.tool_name,
        "error_id": record.pk,
        "outcome": record.outcome,
        "rule": hint.rule,
        "text": hint.text,
        "error": record.error,
        "strategy": record.strategy,
        "resolution": record.resolution,
        "similarity": hint.similarity,
    }
