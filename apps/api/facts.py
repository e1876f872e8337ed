"""/facts: list, create (with dedup), read, edit, supersede, delete.
With `user` (issue 26) a call sees the agent's facts and that user's, and creates theirs;
with neither `user` nor `all_users` (issue 39) only the agent's own."""

from ninja import Query, Status

from apps.agents.schemas import ForUser, ReadFor
from apps.agents.users import Audience
from apps.api.registry import PathInt, Router
from apps.api.request import AuthedRequest
from apps.core.pagination import Page, decode_id_cursor
from apps.facts import schemas, selectors, services
from apps.facts.models import Fact, FactVersion
from apps.people.selectors import query_audience, read_audience

router = Router(tags=["facts"])


@router.get("/facts", response=schemas.FactPage)
def list_facts(request: AuthedRequest, query: Query[schemas.FactQuery]) -> Page[Fact]:
    return selectors.facts_page(
        agent=request.auth,
        **query.dict(exclude={"cursor", "user", "all_users"}),
        after_id=decode_id_cursor(query.cursor, model=Fact),
        audience=read_audience(user=query.user, all_users=query.all_users, where="query"),
    )


@router.post("/facts", response={200: schemas.FactSaveOut, 201: schemas.FactSaveOut})
def create_fact(request: AuthedRequest, payload: schemas.FactIn) -> Status[dict]:
    """Create a fact; a duplicate (exact or semantic) returns the existing one with 200.
    `review: true` with the agent's fact_review on: the fact waits as pending."""
    result = services.fact_save(
        agent=request.auth,
        content=payload.value,
        category=payload.category,
        key=payload.key,
        importance=payload.importance,
        source=payload.source,
        pending=payload.review and request.auth.config.fact_review,
        user=Audience(payload.user).owner(payload.scope),
    )
    return Status(200 if result.deduped else 201, schemas.save_out(result))


def _fact(request: AuthedRequest, fact_id: int, query: ForUser) -> Fact:
    """The fact the call may reach: a read's (`all_users` too), or a write's (the agent's
    own, or `user`'s)."""
    return selectors.fact_get(agent=request.auth, fact_id=fact_id, audience=query_audience(query))


@router.get("/facts/{fact_id}", response=schemas.FactOut)
def get_fact(request: AuthedRequest, fact_id: PathInt, query: Query[ReadFor]) -> Fact:
    return _fact(request, fact_id, query)


@router.patch("/facts/{fact_id}", response=schemas.FactOut)
def update_fact(
    request: AuthedRequest, fact_id: PathInt, payload: schemas.FactPatch, query: Query[ForUser]
) -> Fact:
    """Edit in place; a changed value is recorded as a version (old value, who, why)."""
    fact = _fact(request, fact_id, query)
    services.fact_update(
        agent=request.auth,
        fact=fact,
        changed_by=payload.source,
        reason=payload.reason,
        value=payload.value,
        key=payload.key,
        category=payload.category,
        importance=payload.importance,
    )
    return _fact(request, fact_id, query)


@router.post("/facts/{fact_id}/supersede", response={201: schemas.FactOut})
def supersede_fact(
    request: AuthedRequest, fact_id: PathInt, payload: schemas.FactSupersede, query: Query[ForUser]
) -> Status[Fact]:
    """Close the fact (valid_to = now) and create its successor; history is kept."""
    fact = _fact(request, fact_id, query)
    successor = services.fact_supersede(
        agent=request.auth,
        fact=fact,
        value=payload.value,
        changed_by=payload.source,
        reason=payload.reason,
    )
    return Status(
        201,
        _fact(request, successor.pk, query),
    )


@router.get("/facts/{fact_id}/versions", response=list[schemas.FactVersionOut])
def fact_versions(
    request: AuthedRequest, fact_id: PathInt, query: Query[ReadFor]
) -> list[FactVersion]:
    fact = _fact(request, fact_id, query)
    return list(selectors.fact_versions(fact=fact))


@router.delete("/facts/{fact_id}", response={204: None})
def delete_fact(request: AuthedRequest, fact_id: PathInt, query: Query[ForUser]) -> Status[None]:
    fact = _fact(request, fact_id, query)
    services.fact_delete(agent=request.auth, fact=fact)
    return Status(204, None)
