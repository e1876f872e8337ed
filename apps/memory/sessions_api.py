"""One session by id or key: read, update, remove.

The three methods of /sessions/{id} live on one router (Django resolves a path to the first
router that declares it), here in the composition layer because removing a session also
deletes its archives, which live in apps.entries (apps.lifecycle.services.session_remove).
"""

from ninja import Router, Status

from apps.conversations import selectors, services
from apps.conversations.schemas import SessionOut, SessionPatch
from apps.lifecycle.services import session_remove

router = Router(tags=["sessions"])


@router.get("/sessions/{session_id}", response=SessionOut)
def get_session(request, session_id: str):
    return selectors.session_get(agent=request.auth, ref=session_id)


@router.patch("/sessions/{session_id}", response=SessionOut)
def update_session(request, session_id: str, payload: SessionPatch):
    session = selectors.session_get(agent=request.auth, ref=session_id)
    return services.session_update(session=session, title=payload.title, metadata=payload.metadata)


@router.delete("/sessions/{session_id}", response={204: None})
def remove_session(request, session_id: str):
    """Delete the session with its messages, compact markers, meta, summary and archives
    (seed 000). Its runs and history entries stay, without the session."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    session_remove(session=session)
    return Status(204, None)
