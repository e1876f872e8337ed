"""Request and response bodies for runs, history and the lifecycle endpoints."""

import uuid
from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import Field

from apps.agents.schemas import Owned, ReadFor
from apps.conversations.schemas import MarkerOut, SessionOut
from apps.core.pagination import PageQuery
from apps.core.schemas import Input
from apps.lifecycle.models import Run
from apps.lifecycle.services.reset import ResetOutcome

RunKindName = Literal["summary", "consolidate", "compact", "flush", "extract", "compress"]
RunStatusName = Literal["ok", "fallback", "failed", "timeout", "skipped"]


class RunFilters(Input):
    kind: RunKindName | None = None
    status: RunStatusName | None = None
    session_id: str | None = Field(None, max_length=200)


class HistoryFilters(Input):
    q: str | None = Field(None, max_length=4000)
    month: str | None = Field(None, max_length=7, description="YYYY-MM")
    session_id: str | None = Field(None, max_length=200)


class RunQuery(PageQuery, RunFilters, ReadFor):  # GET /runs
    pass


class HistoryQuery(PageQuery, HistoryFilters, ReadFor):  # GET /memory/history
    pass


class RunOut(Owned):
    id: int
    session_id: uuid.UUID | None
    session_key: str
    kind: str
    trigger: str
    status: str
    reason: str
    parse_tier: int | None
    # How the answer's shape was asked for ("" when no model was called); issue 23.
    structured_mode: str
    truncated: bool
    model: str
    input_tokens: int
    output_tokens: int
    latency_ms: int
    error: str
    first_message_id: uuid.UUID | None
    last_message_id: uuid.UUID | None
    first_message_at: datetime | None
    last_message_at: datetime | None
    message_count: int
    details: dict[str, Any]  # Any: Run.details, a JSONField's value
    created_at: datetime


class RunDetailOut(RunOut):
    output: str
    fact_ids: list[int]

    @staticmethod
    def resolve_fact_ids(obj: Run) -> list[int]:
        return sorted(obj.facts.values_list("pk", flat=True))


class RunPage(Schema):
    items: list[RunOut]
    next_cursor: str | None


class RunsOut(Schema):
    runs: list[RunOut]


class SummaryRunsOut(RunsOut):
    summary: str | None


class CompactOut(RunsOut):
    start_at: datetime | None
    markers: list[MarkerOut]


class ConsolidateQuery(Input):
    keep: int = Field(0, ge=0, le=100_000, description="Newest messages to leave alone.")


class ResetOut(Schema):
    session: SessionOut
    deleted_messages: int
    runs: list[RunOut]
    archive: str | None = Field(
        description="The Archive entry keeping, whole, what no consolidation covered."
    )

    @staticmethod
    def resolve_archive(obj: ResetOutcome) -> str | None:
        return obj.archive_name


class HistoryEntryOut(Owned):
    id: int
    session_id: uuid.UUID | None
    session_key: str
    created_at: datetime
    kind: str
    content: str
    run_id: int | None
    first_message_at: datetime | None
    last_message_at: datetime | None


class HistoryPage(Schema):
    items: list[HistoryEntryOut]
    next_cursor: str | None


class HistoryFileOut(Schema):
    name: str
    content: str
    bytes: int
