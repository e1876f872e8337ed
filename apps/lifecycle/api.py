"""Lifecycle endpoints: on-demand summary, compaction, flush, consolidation and reset; the
run log; seed 004's history grep and files."""

import time

from ninja import Query, Router, Schema
from pydantic import Field

from apps.conversations import selectors as conv
from apps.lifecycle import selectors, services
from apps.lifecycle.models import Trigger
from apps.lifecycle.schemas import (
    CompactOut,
    ConsolidateQuery,
    HistoryFileOut,
    HistoryPage,
    ResetOut,
    RunDetailOut,
    RunKindName,
    RunPage,
    RunsOut,
    RunStatusName,
    SummaryRunsOut,
)

router = Router(tags=["lifecycle"])


class RunQuery(Schema):
    kind: RunKindName | None = None
    status: RunStatusName | None = None
    session_id: str | None = Field(None, max_length=200)
    cursor: str | None = Field(None, max_length=500)
    limit: int = Field(50, ge=1, le=500)


class HistoryQuery(Schema):
    q: str | None = Field(None, max_length=4000)
    month: str | None = Field(None, max_length=7, description="YYYY-MM")
    session_id: str | None = Field(None, max_length=200)
    cursor: str | None = Field(None, max_length=500)
    limit: int = Field(50, ge=1, le=500)


@router.get("/runs", response=RunPage)
def list_runs(request, query: Query[RunQuery]):
    """Every LLM call and fallback of the lifecycle, newest first."""
    session = (
        conv.session_get(agent=request.auth, ref=query.session_id) if query.session_id else None
    )
    page = selectors.runs_page(
        agent=request.auth,
        kind=query.kind,
        status=query.status,
        session=session,
        cursor=query.cursor,
        limit=query.limit,
    )
    return {"items": page.items, "next_cursor": page.next_cursor}


@router.get("/runs/{run_id}", response=RunDetailOut)
def get_run(request, run_id: int):
    """One run with the model's raw answer and the facts it stored."""
    return selectors.run_get(agent=request.auth, run_id=run_id)


@router.post("/sessions/{session_id}/summarize", response=SummaryRunsOut)
def summarize(request, session_id: str):
    """Fold what left the window into the rolling summary now (seed 000)."""
    session = conv.session_get(agent=request.auth, ref=session_id)
    runs = services.session_summarize(session=session, trigger=Trigger.API)
    summary = conv.session_summary(session=session)
    return {"runs": runs, "summary": summary.content if summary else None}


@router.post("/sessions/{session_id}/compact", response=CompactOut)
def compact(request, session_id: str):
    """Compact now: the oldest messages go to an Archive entry behind a marker (seeds 000,
    003); no message is deleted."""
    session = conv.session_get(agent=request.auth, ref=session_id)
    runs = services.session_compact(session=session, trigger=Trigger.API)
    meta = conv.session_meta(session=session)
    return {
        "runs": runs,
        "start_at": meta.start_at if meta else None,
        "markers": conv.session_markers(session=session),
    }


@router.post("/sessions/{session_id}/flush", response=RunsOut)
def flush(request, session_id: str):
    """Store the facts of the oldest window messages now (seed 001's proactive flush)."""
    session = conv.session_get(agent=request.auth, ref=session_id)
    return {"runs": services.session_flush(session=session, trigger=Trigger.API)}


@router.post("/sessions/{session_id}/consolidate", response=RunsOut)
def consolidate(request, session_id: str, query: Query[ConsolidateQuery]):
    """Consolidate now (seed 004): history entry, MEMORY.md; waits its turn behind the
    agent's other consolidations, up to consolidation_timeout_seconds. `keep` leaves the
    newest messages for later (default 0: everything)."""
    session = conv.session_get(agent=request.auth, ref=session_id)
    keep = query.keep
    wait_until = time.monotonic() + session.agent.config.consolidation_timeout_seconds
    runs = services.session_consolidate(
        session=session, trigger=Trigger.API, keep=keep, wait_until=wait_until
    )
    return {"runs": runs}


@router.post("/sessions/{session_id}/reset", response=ResetOut)
def reset_session(request, session_id: str):
    """Consolidate (at most consolidation_timeout_seconds), keep what that did not cover in an
    Archive entry, then delete the messages and meta; the rolling summary survives."""
    session = conv.session_get(agent=request.auth, ref=session_id)
    outcome = services.session_reset(session=session)
    return {
        "session": outcome.session,
        "deleted_messages": outcome.deleted_messages,
        "runs": outcome.runs,
        "archive": outcome.archive_name,
    }


@router.get("/memory/history", response=HistoryPage)
def history(request, query: Query[HistoryQuery]):
    """Seed 004's grep over HISTORY: case-insensitive substring, newest first."""
    session = (
        conv.session_get(agent=request.auth, ref=query.session_id) if query.session_id else None
    )
    page = selectors.history_page(
        agent=request.auth,
        q=query.q,
        month=query.month,
        session=session,
        cursor=query.cursor,
        limit=query.limit,
    )
    return {"items": page.items, "next_cursor": page.next_cursor}


@router.get("/memory/history/files/{path:name}", response=HistoryFileOut)
def history_file(request, name: str):
    """memory/HISTORY.md or memory/HISTORY-YYYY-MM.md, rendered (read-only)."""
    content = selectors.history_document(agent=request.auth, name=name)
    return {"name": name, "content": content, "bytes": len(content.encode("utf-8"))}
