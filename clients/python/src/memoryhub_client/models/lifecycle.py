"""The lifecycle's answers (runs, summaries, compaction, reset) and HISTORY."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from memoryhub_client.models.common import Model, Page, component
from memoryhub_client.models.sessions import Marker, Session


@component("RunOut")
class Run(Model):
    """The server's `RunOut`."""

    user: str | None = None
    id: int
    session_id: UUID | None
    session_key: str
    kind: str
    trigger: str
    status: str
    reason: str
    parse_tier: int | None
    structured_mode: str
    truncated: bool
    model: str
    input_tokens: int
    output_tokens: int
    latency_ms: int
    error: str
    first_message_id: UUID | None
    last_message_id: UUID | None
    first_message_at: datetime | None
    last_message_at: datetime | None
    message_count: int
    details: dict[str, Any]
    created_at: datetime


@component("SummaryRunsOut")
class SummaryResult(Model):
    """The server's `SummaryRunsOut`."""

    runs: list[Run]
    summary: str | None


@component("CompactOut")
class CompactResult(Model):
    """The server's `CompactOut`."""

    runs: list[Run]
    start_at: datetime | None
    markers: list[Marker]


@component("RunsOut")
class RunsResult(Model):
    """The server's `RunsOut`."""

    runs: list[Run]


@component("ConsolidateQuery")
class ConsolidateQuery(Model):
    """The server's `ConsolidateQuery`."""

    keep: int = 0


@component("ResetOut")
class ResetResult(Model):
    """The server's `ResetOut`."""

    session: Session
    deleted_messages: int
    runs: list[Run]
    archive: str | None


@component("RunQuery")
class RunQuery(Model):
    """The server's `RunQuery`."""

    user: str | None = None
    all_users: bool = False
    kind: Literal["summary", "consolidate", "compact", "flush", "extract", "compress"] | None = None
    status: Literal["ok", "fallback", "failed", "timeout", "skipped"] | None = None
    session_id: str | None = None
    cursor: str | None = None
    limit: int = 50


@component("RunPage")
class RunPage(Page[Run]):
    """A page of `Run`: items and next_cursor."""


@component("RunDetailOut")
class RunDetail(Run):
    """The server's `RunDetailOut`: a run with the model's raw answer and the facts it stored."""

    output: str
    fact_ids: list[int]


@component("HistoryQuery")
class HistoryQuery(Model):
    """The server's `HistoryQuery`."""

    user: str | None = None
    all_users: bool = False
    q: str | None = None
    month: str | None = None
    session_id: str | None = None
    cursor: str | None = None
    limit: int = 50


@component("HistoryEntryOut")
class HistoryEntry(Model):
    """The server's `HistoryEntryOut`."""

    user: str | None = None
    id: int
    session_id: UUID | None
    session_key: str
    created_at: datetime
    kind: str
    content: str
    run_id: int | None
    first_message_at: datetime | None
    last_message_at: datetime | None


@component("HistoryPage")
class HistoryPage(Page[HistoryEntry]):
    """A page of `HistoryEntry`: items and next_cursor."""


@component("HistoryFileOut")
class HistoryFile(Model):
    """The server's `HistoryFileOut`."""

    name: str
    content: str
    bytes: int
