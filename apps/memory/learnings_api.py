"""Error memory (seed 000) and learnings (seed 001) endpoints. They live in the composition
layer because a record or a learning may name one of the agent's sessions, and only this
layer resolves a session reference (the learnings app imports no other domain app)."""

from ninja import Query, Router, Schema, Status
from pydantic import Field

from apps.conversations.selectors import session_get
from apps.learnings import selectors, services
from apps.learnings.schemas import (
    ErrorIn,
    ErrorOut,
    ErrorPage,
    ErrorPatch,
    ErrorSearchIn,
    ErrorSearchOut,
    KindName,
    LearningIn,
    LearningOut,
    LearningPage,
    LearningPatch,
    OutcomeName,
    StatusName,
)

router = Router(tags=["learnings"])


class ErrorQuery(Schema):
    tool_name: str | None = Field(None, max_length=200)
    outcome: OutcomeName | None = None
    cursor: str | None = Field(None, max_length=500)
    limit: int = Field(50, ge=1, le=500)


class LearningQuery(Schema):
    kind: KindName | None = None
    status: StatusName | None = None
    cursor: str | None = Field(None, max_length=500)
    limit: int = Field(50, ge=1, le=500)


def _session(request, ref: str | None):
    return session_get(agent=request.auth, ref=ref) if ref else None


@router.post("/errors", response={200: ErrorOut, 201: ErrorOut})
def remember_error(request, payload: ErrorIn):
    """Record a tool failure with what was tried and how it ended (seed 000's
    remember_error); the same tool, error and strategy again updates that record (200)."""
    session = _session(request, payload.session_id)
    record, created = services.error_record_create(
        agent=request.auth,
        tool_name=payload.tool_name,
        error=payload.error,
        arguments=payload.arguments,
        context=payload.context,
        strategy=payload.strategy,
        outcome=payload.outcome,
        resolution=payload.resolution,
        session_id=session.pk if session else None,
    )
    return Status(201 if created else 200, record)


@router.get("/errors", response=ErrorPage)
def list_errors(request, query: Query[ErrorQuery]):
    """Live error records, newest first."""
    page = selectors.errors_page(
        agent=request.auth,
        tool_name=query.tool_name,
        outcome=query.outcome,
        cursor=query.cursor,
        limit=query.limit,
    )
    return {"items": page.items, "next_cursor": page.next_cursor}


@router.post("/errors/search", response=ErrorSearchOut)
def search_errors(request, payload: ErrorSearchIn):
    """Seed 000's search_error_memory: substring and vector matches; every hit's TTL is
    refreshed."""
    found = selectors.errors_search(
        agent=request.auth, query=payload.query, tool_name=payload.tool_name, k=payload.k
    )
    hits = found.items
    services.errors_touch(agent=request.auth, ids=[h.record.pk for h in hits])
    for hit in hits:
        hit.record.refresh_from_db(fields=["hit_count", "last_hit_at", "expires_at"])
    return {
        "items": [{"record": h.record, "score": h.score, "legs": h.legs} for h in hits],
        "degraded": found.degraded,
    }


@router.get("/errors/{error_id}", response=ErrorOut)
def get_error(request, error_id: int):
    """One record (seed 000's read_error_memory); reading it is not a hit."""
    return selectors.error_get(agent=request.auth, error_id=error_id)


@router.patch("/errors/{error_id}", response=ErrorOut)
def update_error(request, error_id: int, payload: ErrorPatch):
    """Record the outcome: resolved (with its resolution), failed or abandoned."""
    record = selectors.error_get(agent=request.auth, error_id=error_id)
    return services.error_record_update(
        record=record,
        outcome=payload.outcome,
        strategy=payload.strategy,
        resolution=payload.resolution,
    )


@router.delete("/errors/{error_id}", response={204: None})
def delete_error(request, error_id: int):
    record = selectors.error_get(agent=request.auth, error_id=error_id)
    services.error_record_delete(record=record)
    return Status(204, None)


@router.post("/errors/{error_id}/promote", response={201: LearningOut})
def promote_error(request, error_id: int):
    """A resolved or failed record becomes an active error learning (409 otherwise)."""
    record = selectors.error_get(agent=request.auth, error_id=error_id)
    return Status(201, services.error_record_promote(record=record))


@router.post("/learnings", response={201: LearningOut})
def add_learning(request, payload: LearningIn):
    """An error or a correction to keep; active learnings are in every get_context."""
    session = _session(request, payload.session_id)
    learning = services.learning_create(
        agent=request.auth,
        kind=payload.kind,
        content=payload.content,
        source=payload.source,
        session_id=session.pk if session else None,
        session_key=session.key if session else "",
    )
    return Status(201, learning)


@router.get("/learnings", response=LearningPage)
def list_learnings(request, query: Query[LearningQuery]):
    page = selectors.learnings_page(
        agent=request.auth,
        kind=query.kind,
        status=query.status,
        cursor=query.cursor,
        limit=query.limit,
    )
    return {"items": page.items, "next_cursor": page.next_cursor}


@router.get("/learnings/{learning_id}", response=LearningOut)
def get_learning(request, learning_id: int):
    return selectors.learning_get(agent=request.auth, learning_id=learning_id)


@router.patch("/learnings/{learning_id}", response=LearningOut)
def update_learning(request, learning_id: int, payload: LearningPatch):
    """Edit, approve (status active) or archive a learning."""
    learning = selectors.learning_get(agent=request.auth, learning_id=learning_id)
    return services.learning_update(
        learning=learning, content=payload.content, kind=payload.kind, status=payload.status
    )


@router.delete("/learnings/{learning_id}", response={204: None})
def delete_learning(request, learning_id: int):
    learning = selectors.learning_get(agent=request.auth, learning_id=learning_id)
    services.learning_delete(learning=learning)
    return Status(204, None)
