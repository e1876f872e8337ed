"""/learnings: errors and corrections to keep. A learning may name one of the agent's
sessions by id or key; sessions.session_of resolves it."""

from ninja import Query, Status

from apps.agents.schemas import ForUser, ReadFor
from apps.api.registry import Router
from apps.api.request import AuthedRequest
from apps.api.sessions import session_of
from apps.core.pagination import Page
from apps.learnings import schemas, selectors, services
from apps.learnings.models import Learning
from apps.people.selectors import failure_origin, query_audience, read_audience, session_audience

router = Router(tags=["learnings"])


@router.post("/learnings", response={201: schemas.LearningOut})
def add_learning(request: AuthedRequest, payload: schemas.LearningIn) -> Status[Learning]:
    """An error or a correction to keep; active learnings are in every get_context."""
    session = session_of(request, payload.session_id)
    seen = session_audience(session, payload.user)
    origin = failure_origin(agent=request.auth, user=seen.user or "")
    learning = services.learning_create(
        agent=request.auth,
        **payload.dict(exclude={"session_id", "user", "scope"}),
        session_id=session.pk if session else None,
        session_key=session.key if session else "",
        user=seen.owner(payload.scope),
        # an error learning is everyone's (issue 39): its text is shared de-identified
        origin_user=origin.user,
        terms=origin.terms,
    )
    return Status(201, selectors.learnings_shown([learning], seen)[0])


@router.get("/learnings", response=schemas.LearningPage)
def list_learnings(request: AuthedRequest, query: Query[schemas.LearningQuery]) -> Page[Learning]:
    seen = read_audience(user=query.user, all_users=query.all_users, where="query")
    return selectors.learnings_page(
        agent=request.auth, **query.dict(exclude={"user", "all_users"}), audience=seen
    )


def _learning(request: AuthedRequest, learning_id: int, query: ForUser) -> Learning:
    return selectors.learning_get(
        agent=request.auth, learning_id=learning_id, audience=query_audience(query)
    )


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
