from datetime import datetime
from typing import Literal
from uuid import UUID

from ninja import Field, Schema

Mode = Literal["semantic", "keyword", "hybrid", "contains"]
Scalar = str | int | float | bool


class SearchIn(Schema):
    query: str
    mode: Mode = "semantic"
    k: int = Field(10, ge=1, le=100)
    session_id: str | None = None
    role: str | list[str] | None = None
    after: datetime | None = None
    before: datetime | None = None
    metadata: dict[str, Scalar] | None = None
    min_score: float | None = None


class LegOut(Schema):
    rank: int
    score: float


class MessageOut(Schema):
    id: UUID
    session_id: UUID
    role: str
    name: str
    content: str
    created_at: datetime
    metadata: dict


class HitOut(MessageOut):
    score: float
    legs: dict[str, LegOut]
    window: int  # index into `windows`


class WindowOut(Schema):
    session_id: UUID
    messages: list[MessageOut]


class SearchOut(Schema):
    query: str
    mode: Mode
    hits: list[HitOut]
    windows: list[WindowOut]


class EmbeddingStatusOut(Schema):
    model: str
    embedded: int
    stale: int
    pending: int
    failed: int
