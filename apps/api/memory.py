"""/memory: save, recall and search (the memory tools), and the history the lifecycle
writes (/memory/history: its grep and its files)."""

from ninja import Query

from apps.agents.config import within_ceiling
from apps.agents.schemas import ReadFor
from apps.api.registry import PathRest, Router, access
from apps.api.request import AuthedRequest
from apps.api.runs import listing
from apps.api.sessions import session_of
from apps.core.pagination import Page
from apps.facts.schemas import save_out
from apps.lifecycle import schemas as lifecycle_schemas
from apps.lifecycle import selectors as lifecycle
from apps.lifecycle.models import HistoryEntry
from apps.memory import selectors, services
from apps.memory.schemas import (
    RecallIn,
    RecallOut,
    SaveIn,
    SaveOut,
    SearchIn,
    SearchOut,
)
from apps.people.selectors import read_audience

router = Router(tags=["memory"])


@router.post("/memory/save", response=SaveOut)
def memory_save(request: AuthedRequest, payload: SaveIn) -> dict:
    """Store a fact (dedup on write) and append it to today's log memory/YYYY-MM-DD.md."""
    result = services.memory_save(
        agent=request.auth,
        **payload.dict(exclude={"session_id"}),
        session_ref=payload.session_id,
    )
    return {**save_out(result.saved), "log": result.log_name}


@router.post("/memory/recall", response=RecallOut)
@access(read=True)
def memory_recall(request: AuthedRequest, payload: RecallIn) -> dict:
    """Semantic recall over facts: matching categories, scoped search, flat fallback.
    A `k` over the team's recall_k ceiling is 422."""
    within_ceiling(request.auth, "recall_k", payload.k, loc=["body", "k"])
    session = session_of(request, payload.session_id)
    result = services.memory_recall(
        agent=request.auth,
        **payload.dict(exclude={"session_id", "user", "all_users"}),
        audience=read_audience(session=session, user=payload.user, all_users=payload.all_users),
    )
    return {
        "items": [
            {"fact": h.fact, "similarity": h.similarity, "score": h.score, "tier": h.tier}
            for h in result.hits
        ],
        "categories": result.categories,
        "fell_back": result.fell_back,
        "degraded": result.degraded,
    }


@router.post("/memory/search", response=SearchOut)
@access(read=True)
def memory_search(request: AuthedRequest, payload: SearchIn) -> dict:
    """Hybrid search over workspace documents, entries, facts, learnings and HISTORY entries
    in one ranked list, each hit labelled with its `source`; keyword only, with `degraded:
    ["semantic"]`, when the query cannot be embedded. A `k` over the team's memory_search_k
    ceiling is 422."""
    within_ceiling(request.auth, "memory_search_k", payload.k, loc=["body", "k"])
    session = session_of(request, payload.session_id)
    result = selectors.memory_search(
        agent=request.auth,
        query=payload.query,
        k=payload.k,
        audience=read_audience(session=session, user=payload.user, all_users=payload.all_users),
    )
    return {"items": result.items, "degraded": result.degraded}


@router.get("/memory/history", response=lifecycle_schemas.HistoryPage, tags=["lifecycle"])
def history(
    request: AuthedRequest, query: Query[lifecycle_schemas.HistoryQuery]
) -> Page[HistoryEntry]:
    """A grep over HISTORY: case-insensitive substring, newest first."""
    return listing(lifecycle.history_page, request, query)


@router.get(
    "/memory/history/files/{name}",
    response=lifecycle_schemas.HistoryFileOut,
    tags=["lifecycle"],
)
def history_file(request: AuthedRequest, name: PathRest, query: Query[ReadFor]) -> dict:
    """memory/HISTORY.md or memory/HISTORY-YYYY-MM.md, rendered (read-only); with `user`,
    of the agent's entries and that user's; without `user` or `all_users`, the agent's own."""
    seen = read_audience(user=query.user, all_users=query.all_users, where="query")
    content = lifecycle.history_document(agent=request.auth, name=name, audience=seen)
    return {"name": name, "content": content, "bytes": len(content.encode("utf-8"))}
