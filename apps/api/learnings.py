"""/errors (error memory) and /learnings (errors and corrections). A record or a learning may
name one of the agent's sessions by id or key; sessions.session_of resolves it."""

from ninja import Query, Status

from apps.agents.schemas import ForUser, ReadFor
from apps.api.audience import audience
from apps.api.registry import Router, access
from apps.api.request import AuthedRequest
from apps.api.sessions import session_of
from apps.core.pagination import Page
from apps.learnings import schemas, selectors, services
from apps.learnings.models import ErrorRecord, Learning
from apps.memory.services import session_audience

router = Router(tags=["learnings"])


@router.post("/errors", response={200: schemas.ErrorOut, 201: schemas.ErrorOut})
def remember_error(request: AuthedRequest, payload: schemas.ErrorIn) -> Status[ErrorRecord]:
    """Record a tool failure with what was tried and how it ended (remember_error);
    the same tool, error and strategy again updates that record (200)."""
    session = session_of(request, payload.session_id)
    record, created = services.error_record_create(
        agent=request.auth,
        **payload.dict(exclude={"session_id"}),
        session_id=session.pk if session else None,
    )
    return Status(201 if created else 200, record)


@router.get("/errors", response=schemas.ErrorPage)
def list_errors(request: AuthedRequest, query: Query[schemas.ErrorQuery]) -> Page[ErrorRecord]:
    """Live error records, newest first."""
    return selectors.errors_page(agent=request.auth, **query.dict())


@router.post("/errors/search", response=schemas.ErrorSearchOut)
@access(read=True)
def search_errors(request: AuthedRequest, payload: schemas.ErrorSearchIn) -> dict:
    """search_error_memory: substring and vector matches; every hit's TTL is
    refreshed."""
    found = selectors.errors_search(agent=request.auth, **payload.dict())
    hits = found.items
    services.errors_touch(agent=request.auth, ids=[h.record.pk for h in hits])
    for hit in hits:
        hit.record.refresh_from_db(fields=["hit_count", "last_hit_at", "expires_at"])
    return {
        "items": [{"record": h.record, "score": h.score, "legs": h.legs} for h in hits],
        "degraded": found.degraded,
    }


@router.get("/errors/{error_id}", response=schemas.ErrorOut)
def get_error(request: AuthedRequest, error_id: int) -> ErrorRecord:
    """One record (read_error_memory); reading it is not a hit."""
    return selectors.error_get(agent=request.auth, error_id=error_id)


@router.patch("/errors/{error_id}", response=schemas.ErrorOut)
@access(agent_level=True)
def update_error(request: AuthedRequest, error_id: int, payload: schemas.ErrorPatch) -> ErrorRecord:
    """Record the outcome: resolved (with its resolution), failed or abandoned."""
    record = selectors.error_get(agent=request.auth, error_id=error_id)
    return services.error_record_update(record=record, **payload.dict())


@router.delete("/errors/{error_id}", response={204: None})
@access(agent_level=True)
def delete_error(request: AuthedRequest, error_id: int) -> Status[None]:
    record = selectors.error_get(agent=request.auth, error_id=error_id)
    services.error_record_delete(record=record)
    return Status(204, None)


@router.post("/errors/{error_id}/promote", response={201: schemas.LearningOut})
@access(agent_level=True)
def promote_error(request: AuthedRequest, error_id: int) -> Status[Learning]:
    """A resolved or failed record becomes an active error learning (409 otherwise)."""
    record = selectors.error_get(agent=request.auth, error_id=error_id)
    return Status(201, services.error_record_promote(record=record))


@router.post("/learnings", response={201: schemas.LearningOut})
def add_learning(request: AuthedRequest, payload: schemas.LearningIn) -> Status[Learning]:
    """An error or a correction to keep; active learnings are in every get_context."""
    session = session_of(request, payload.session_id)
    learning = services.learning_create(
        agent=request.auth,
        **payload.dict(exclude={"session_id", "user", "scope"}),
        session_id=session.pk if session else None,
        session_key=session.key if session else "",
        user=session_audience(session, payload.user).owner(payload.scope),
    )
    return Status(201, learning)


@router.get("/learnings", response=schemas.LearningPage)
def list_learnings(request: AuthedRequest, query: Query[schemas.LearningQuery]) -> Page[Learning]:
    seen = audience(request, user=query.user, all_users=query.all_users, where="query")
    return selectors.learnings_page(
        agent=request.auth, **query.dict(exclude={"user", "all_users"}), audience=seen
    )


def _learning(request: AuthedRequest, learning_id: int, query: ForUser) -> Learning:
    every = isinstance(query, ReadFor) and query.all_users
    seen = audience(request, user=query.user, all_users=every, where="query")
    return selectors.learning_get(agent=request.auth, learning_id=learning_id, audience=seen)


@router.get("/learnings/{learning_id}", response=schemas.LearningOut)
def get_learning(request: AuthedRequest, learning_id: int, query: Query[ReadFor]) -> Learning:
    return _learning(request, learning_id, query)


@router.patch("/learnings/{learning_id}", response=schemas.LearningOut)
def update_learning(
    request: AuthedRequest, learning_id: int, payload: schemas.LearningPatch, query: Query[ForUser]
) -> Learning:
    """Edit, approve (status active) or archive a learning."""
    learning = _learning(request, learning_id, query)
    return services.learning_update(learning=learning, **payload.dict())


@router.delete("/learnings/{learning_id}", response={204: None})
def delete_learning(
    request: AuthedRequest, learning_id: int, query: Query[ForUser]
) -> Status[None]:
    learning = _learning(request, learning_id, query)
    services.learning_delete(learning=learning)
    return Status(204, None)
