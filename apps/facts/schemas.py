"""Request and response bodies for facts."""

from datetime import datetime
from typing import Literal

from ninja import Schema
from pydantic import Field

from apps.agents.schemas import Owned, ReadFor, ScopedWrite
from apps.core.pagination import IdPageQuery
from apps.core.schemas import Input
from apps.facts.models import Fact
from apps.facts.services import SaveResult


class FactOut(Owned):
    id: int
    category: str
    key: str
    value: str
    source: str
    status: str
    importance: float
    access_count: int
    last_accessed_at: datetime | None
    salience: float
    embedded: bool
    valid_from: datetime
    valid_to: datetime | None
    superseded_by: int | None = Field(None, alias="superseded_by_id")
    session_id: str | None
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_category(obj: Fact) -> str:
        return obj.category.name

    @staticmethod
    def resolve_embedded(obj: Fact) -> bool:
        return bool(obj.embedding_model)

    @staticmethod
    def resolve_session_id(obj: Fact) -> str | None:
        return str(obj.session_id) if obj.session_id else None


class FactPage(Schema):
    items: list[FactOut]
    next_cursor: str | None


class FactFilters(Input):
    category: str | None = Field(None, max_length=100)
    include_superseded: bool = False


class FactQuery(IdPageQuery, FactFilters, ReadFor):  # GET /facts
    pass


class FactIn(ScopedWrite):
    value: str
    category: str | None = None
    key: str | None = Field(None, max_length=200)
    importance: float | None = Field(None, ge=0.0, le=1.0)
    source: Literal["agent", "user"] = "agent"
    review: bool = Field(
        False,
        description="With the agent's fact_review on, the fact waits as pending (not recalled, "
        "not in get_context) until an editor approves it. Off: ignored.",
    )


class FactPatch(Input):
    value: str | None = None
    category: str | None = None
    key: str | None = Field(None, max_length=200)
    importance: float | None = Field(None, ge=0.0, le=1.0)
    reason: str = Field("", max_length=500)
    source: Literal["agent", "user"] = "agent"


class FactSupersede(Input):
    value: str
    reason: str = Field("", max_length=500)
    source: Literal["agent", "user"] = "agent"


class FactVersionOut(Schema):
    number: int
    old_value: str
    new_value: str
    changed_by: str
    reason: str
    changed_at: datetime


class FactSaveOut(Schema):
    fact: FactOut
    action: str
    deduped: bool
    existing_id: int | None
    similarity: float | None


def save_out(result: SaveResult) -> dict[str, object]:
    """A services.SaveResult as a FactSaveOut body (facts API and memory_save share it)."""
    return {
        "fact": result.fact,
        "action": result.action,
        "deduped": result.deduped,
        "existing_id": result.fact.pk if result.deduped else None,
        "similarity": result.similarity,
    }
