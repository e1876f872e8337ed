"""/runs (the lifecycle's run log) and /memory/history (seed 004's history grep and
files): what the lifecycle did, read back."""

from collections.abc import Callable

from ninja import Query

from apps.api.registry import Router
from apps.api.sessions import session_of
from apps.core.pagination import Page
from apps.lifecycle import schemas, selectors

router = Router(tags=["lifecycle"])


def _listing(
    selector: Callable[..., Page], request, query: schemas.RunQuery | schemas.HistoryQuery
) -> Page:
    """The selector's page of the agent's rows; the query's session_id names a session."""
    return selector(
        agent=request.auth,
        session=session_of(request, query.session_id),
        **query.dict(exclude={"session_id"}),
    )


@router.get("/runs", response=schemas.RunPage)
def list_runs(request, query: Query[schemas.RunQuery]):
    """Every LLM call and fallback of the lifecycle, newest first."""
    return _listing(selectors.runs_page, request, query)


@router.get("/runs/{run_id}", response=schemas.RunDetailOut)
def get_run(request, run_id: int):
    """One run with the model's raw answer and the facts it stored."""
    return selectors.run_get(agent=request.auth, run_id=run_id)


@router.get("/memory/history", response=schemas.HistoryPage)
def history(request, query: Query[schemas.HistoryQuery]):
    """Seed 004's grep over HISTORY: case-insensitive substring, newest first."""
    return _listing(selectors.history_page, request, query)


@router.get("/memory/history/files/{path:name}", response=schemas.HistoryFileOut)
def history_file(request, name: str):
    """memory/HISTORY.md or memory/HISTORY-YYYY-MM.md, rendered (read-only)."""
    content = selectors.history_document(agent=request.auth, name=name)
    return {"name": name, "content": content, "bytes": len(content.encode("utf-8"))}
