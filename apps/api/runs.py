"""/runs: the lifecycle's run log, what it did, read back."""

from collections.abc import Callable

from ninja import Query

from apps.agents.schemas import ReadFor
from apps.api.registry import Router
from apps.api.request import AuthedRequest
from apps.api.sessions import session_of
from apps.core.pagination import Page
from apps.lifecycle import schemas, selectors
from apps.lifecycle.models import Run
from apps.people.selectors import read_audience

router = Router(tags=["lifecycle"])


def listing(
    selector: Callable[..., Page],
    request: AuthedRequest,
    query: schemas.RunQuery | schemas.HistoryQuery,
) -> Page:
    """The selector's page of the rows the call sees; the query's session_id names a
    session, its `user` an end user, `all_users` every user."""
    session = session_of(request, query.session_id)
    return selector(
        agent=request.auth,
        session=session,
        audience=read_audience(
            session=session, user=query.user, all_users=query.all_users, where="query"
        ),
        **query.dict(exclude={"session_id", "user", "all_users"}),
    )


@router.get("/runs", response=schemas.RunPage)
def list_runs(request: AuthedRequest, query: Query[schemas.RunQuery]) -> Page[Run]:
    """Every LLM call and fallback of the lifecycle, newest first."""
    return listing(selectors.runs_page, request, query)


@router.get("/runs/{run_id}", response=schemas.RunDetailOut)
def get_run(request: AuthedRequest, run_id: int, query: Query[ReadFor]) -> Run:
    """One run with the model's raw answer and the facts it stored."""
    seen = read_audience(user=query.user, all_users=query.all_users, where="query")
    return selectors.run_get(agent=request.auth, run_id=run_id, audience=seen)
