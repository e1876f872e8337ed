"""Conversation endpoints: sessions, messages, the hot window."""

from ninja import Query, Router, Status

from apps.conversations import search, selectors, services
from apps.conversations.schemas import (
    ChatSearchIn,
    ChatSearchMessageOut,
    ChatSearchOut,
    PageQuery,
    SessionIn,
    SessionOut,
    SessionPage,
    WindowOut,
)
from apps.conversations.selectors import as_utc

router = Router(tags=["sessions"])
search_router = Router(tags=["search"])


@router.post("/sessions", response={200: SessionOut, 201: SessionOut})
def create_session(request, payload: SessionIn):
    """Create a session; with a `key` the agent already uses, that session is returned (200)."""
    session, created = services.session_create(
        agent=request.auth, key=payload.key, title=payload.title, metadata=payload.metadata
    )
    return Status(201 if created else 200, session)


@router.get("/sessions", response=SessionPage)
def list_sessions(request, query: Query[PageQuery]):
    page = selectors.sessions_page(agent=request.auth, cursor=query.cursor, limit=query.limit)
    return {"items": page.items, "next_cursor": page.next_cursor}


# GET, PATCH and DELETE /sessions/{session_id} are in apps/memory/sessions_api.py: removal
# also deletes the session's archives (apps.entries), which this app may not import.


@router.get("/sessions/{session_id}/window", response=WindowOut)
def get_window(request, session_id: str):
    """The hot window: the last `max_history_messages` after the compaction cutoff, with
    the older ones the summary does not cover yet, and seed 004's recap after a
    consolidation (docs/lifecycle.md)."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    window = selectors.session_window(session=session)
    return {
        "session_id": session.id,
        "start_at": window.start_at,
        "summary": window.summary,
        "markers": window.markers,
        "messages": window.messages,
        "unsummarised": window.unsummarised,
        "recap": window.recap.text if window.recap else None,
    }


def _search_message(m) -> dict:
    return {name: getattr(m, name) for name in ChatSearchMessageOut.model_fields}


@search_router.post("/search", response=ChatSearchOut)
def search_chat_history(request, payload: ChatSearchIn):
    """Search the agent's messages: semantic (default), keyword, hybrid or contains.

    When the query cannot be embedded, semantic and hybrid answer from BM25 with
    `degraded: ["semantic"]`."""
    agent = request.auth
    session = (
        selectors.session_get(agent=agent, ref=payload.session_id) if payload.session_id else None
    )
    roles = [payload.role] if isinstance(payload.role, str) else payload.role
    result = search.message_search(
        agent=agent,
        query=payload.query,
        mode=payload.mode,
        k=payload.k,
        session=session,
        roles=roles,
        after=as_utc(payload.after) if payload.after else None,
        before=as_utc(payload.before) if payload.before else None,
        metadata=payload.metadata,
        min_score=payload.min_score,
    )
    return {
        "query": result.query,
        "mode": result.mode,
        "degraded": result.degraded,
        "hits": [
            {
                **_search_message(h.message),
                "score": h.score,
                "legs": {leg: {"rank": r.rank, "score": r.score} for leg, r in h.legs.items()},
                "window": h.window,
            }
            for h in result.hits
        ],
        "windows": [
            {"session_id": w.session_id, "messages": [_search_message(m) for m in w.messages]}
            for w in result.windows
        ],
    }
