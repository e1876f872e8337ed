"""/runs (the lifecycle's run log) and /memory/history (the history grep and
files): what the lifecycle did, read back."""

from collections.abc import Callable

from ninja import Query

from apps.agents.schemas import ReadFor
from apps.api.registry import Router
from apps.api.request import AuthedRequest
from apps.api.sessions import session_of
from apps.core.pagination import Page
from apps.lifecycle import schemas, selectors
from apps.lifecycle.models import HistoryEntry, Run
from apps.people.selectors import read_audience

router = Router(tags=["lifecycle"])


def _listing(
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
    return _listing(selectors.runs_page, request, query)


@router.get("/runs/{run_id}", response=schemas.RunDetailOut)
def get_run(request: AuthedRequest, run_id: int, query: Query[ReadFor]) -> Run:
    """One run with the model's raw answer and the facts it stored."""
    seen = read_audience(user=query.user, all_users=query.all_users, where="query")
    return selectors.run_get(agent=request.auth, run_id=run_id, audience=seen)


@router.get("/memory/history", response=schemas.HistoryPage)
def history(request: AuthedRequest, query: Query[schemas.HistoryQuery]) -> Page[HistoryEntry]:
    """A grep over HISTORY: case-insensitive substring, newest first."""
    return _listing(selectors.history_page, request, query)


@router.get("/memory/history/files/{path:name}", response=schemas.HistoryFileOut)
def history_file(request: AuthedRequest, name: str, query: Query[ReadFor]) -> dict:
    """memory/HISTORY.md or memory/HISTORY-YYYY-MM.md, rendered (read-only); with `user`,
    of the agent's entries and that user's; without `user` or `all_users`, the agent's own."""
    seen = read_audience(user=query.user, all_users=query.all_users, where="query")
    content = selectors.history_document(agent=request.auth, name=name, audience=seen)
    return {"name": name, "content": content, "bytes": len(content.encode("utf-8"))}
