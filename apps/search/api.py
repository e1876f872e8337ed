"""POST /search (seed 000's search_chat_history) and GET /search/status (embedding backlog)."""

from datetime import UTC

from ninja import Router
from ninja.errors import HttpError

from apps.conversations.embedding import embedding_counts
from apps.conversations.selectors import session_get
from apps.providers.embeddings import EmbeddingError, get_embedder
from apps.search import selectors
from apps.search.corpora import vector_label
from apps.search.schemas import EmbeddingStatusOut, SearchIn, SearchOut

router = Router(tags=["search"])


def _utc(value):
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def _message(m) -> dict:
    return {
        "id": m.id,
        "session_id": m.session_id,
        "role": m.role,
        "name": m.name,
        "content": m.content,
        "created_at": m.created_at,
        "metadata": m.metadata,
    }


@router.post("/search", response=SearchOut)
def search(request, payload: SearchIn):
    """Search the agent's messages: semantic (default), keyword, hybrid or contains."""
    agent = request.auth
    session = session_get(agent=agent, ref=payload.session_id) if payload.session_id else None
    roles = [payload.role] if isinstance(payload.role, str) else payload.role
    try:
        result = selectors.message_search(
            agent=agent,
            query=payload.query,
            mode=payload.mode,
            k=payload.k,
            session=session,
            roles=roles,
            after=_utc(payload.after),
            before=_utc(payload.before),
            metadata=payload.metadata,
            min_score=payload.min_score,
        )
    except EmbeddingError as exc:
        raise HttpError(503, f"the query could not be embedded: {exc}") from exc
    return {
        "query": result.query,
        "mode": result.mode,
        "hits": [
            {
                **_message(h.message),
                "score": h.score,
                "legs": {leg: {"rank": r.rank, "score": r.score} for leg, r in h.legs.items()},
                "window": h.window,
            }
            for h in result.hits
        ],
        "windows": [
            {"session_id": w.session_id, "messages": [_message(m) for m in w.messages]}
            for w in result.windows
        ],
    }


@router.get("/search/status", response=EmbeddingStatusOut)
def search_status(request):
    """How many of the agent's messages are embedded, stale, pending or failed."""
    counts = embedding_counts(agent_id=request.auth.id)
    return {"model": vector_label(get_embedder()), **counts.__dict__}
