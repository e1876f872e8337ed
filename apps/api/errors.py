"""/errors: error memory (tool failures, what was tried, how it ended). A record may name
one of the agent's sessions by id or key; sessions.session_of resolves it."""

from ninja import Query, Status

from apps.agents.schemas import ForUser, ReadFor
from apps.agents.users import AGENT_ONLY, Audience
from apps.api.registry import Router, access
from apps.api.request import AuthedRequest
from apps.api.sessions import session_of
from apps.conversations.models import Session
from apps.core.pagination import Page
from apps.learnings import schemas, selectors, services
from apps.learnings.models import ErrorRecord, Learning
from apps.people.selectors import Where, failure_origin, read_audience

router = Router(tags=["learnings"])


def _errors_audience(
    request: AuthedRequest,
    user: str | None,
    session_ref: str | None = None,
    *,
    all_users: bool = False,
    where: Where = "body",
) -> tuple[Audience, Session | None]:
    """Who an /errors call acts for (issue 39), by the central resolver: a user's reads see
    their own failures raw, every other read (the agent's, all_users) de-identified."""
    session = session_of(request, session_ref)
    found = read_audience(session=session, user=user, all_users=all_users, where=where)
    return found, session


@router.post("/errors", response={200: schemas.ErrorOut, 201: schemas.ErrorOut})
def remember_error(request: AuthedRequest, payload: schemas.ErrorIn) -> Status[ErrorRecord]:
    """Record a tool failure with what was tried and how it ended (remember_error);
    the same tool, error and strategy again updates that record (200). The record every
    user reads is de-identified; the user's (the session's) raw text is theirs alone."""
    seen, session = _errors_audience(request, payload.user, payload.session_id)
    origin = failure_origin(agent=request.auth, user=seen.user or "", session=session)
    record, created = services.error_record_create(
        agent=request.auth, **payload.dict(exclude={"session_id", "user"}), origin=origin
    )
    return Status(201 if created else 200, selectors.records_shown([record], seen)[0])


@router.get("/errors", response=schemas.ErrorPage)
def list_errors(request: AuthedRequest, query: Query[schemas.ErrorQuery]) -> Page[ErrorRecord]:
    """Live error records, newest first: de-identified, but `user`'s own raw."""
    seen, _ = _errors_audience(request, query.user, all_users=query.all_users, where="query")
    return selectors.errors_page(
        agent=request.auth, **query.dict(exclude={"user", "all_users"}), audience=seen
    )


@router.post("/errors/search", response=schemas.ErrorSearchOut)
@access(read=True)
def search_errors(request: AuthedRequest, payload: schemas.ErrorSearchIn) -> dict:
    """search_error_memory: substring and vector matches over the de-identified records;
    every hit's TTL is refreshed."""
    seen, _ = _errors_audience(
        request, payload.user, payload.session_id, all_users=payload.all_users
    )
    found = selectors.errors_search(
        agent=request.auth,
        **payload.dict(exclude={"user", "session_id", "all_users"}),
        audience=seen,
    )
    hits = found.items
    services.errors_touch(agent=request.auth, ids=[h.record.pk for h in hits])
    for hit in hits:
        hit.record.refresh_from_db(fields=["hit_count", "last_hit_at", "expires_at"])
    return {
        "items": [{"record": h.record, "score": h.score, "legs": h.legs} for h in hits],
        "degraded": found.degraded,
    }


@router.get("/errors/{error_id}", response=schemas.ErrorOut)
def get_error(request: AuthedRequest, error_id: int, query: Query[ReadFor]) -> ErrorRecord:
    """One record (read_error_memory); reading it is not a hit."""
    seen, _ = _errors_audience(request, query.user, all_users=query.all_users, where="query")
    return selectors.error_get(agent=request.auth, error_id=error_id, audience=seen)


def _shared(request: AuthedRequest, error_id: int) -> ErrorRecord:
    """The record's shared (de-identified) row: what a write changes."""
    return selectors.error_get(agent=request.auth, error_id=error_id, audience=AGENT_ONLY)


@router.patch("/errors/{error_id}", response=schemas.ErrorOut)
@access(agent_level=True)
def update_error(
    request: AuthedRequest, error_id: int, payload: schemas.ErrorPatch, query: Query[ForUser]
) -> ErrorRecord:
    """Record the outcome: resolved (with its resolution), failed or abandoned. The
    strategy and resolution are shared de-identified (`user`'s terms masked too)."""
    seen, _ = _errors_audience(request, query.user, where="query")
    origin = failure_origin(agent=request.auth, user=seen.user or "")
    record = services.error_record_update(
        record=_shared(request, error_id), **payload.dict(), origin=origin
    )
    return selectors.records_shown([record], seen)[0]


@router.delete("/errors/{error_id}", response={204: None})
@access(agent_level=True)
def delete_error(request: AuthedRequest, error_id: int) -> Status[None]:
    services.error_record_delete(record=_shared(request, error_id))
    return Status(204, None)


@router.post("/errors/{error_id}/promote", response={201: schemas.LearningOut})
@access(agent_level=True)
def promote_error(request: AuthedRequest, error_id: int) -> Status[Learning]:
    """A resolved or failed record becomes an active error learning (409 otherwise)."""
    return Status(201, services.error_record_promote(record=_shared(request, error_id)))
