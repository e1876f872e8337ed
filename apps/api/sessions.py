"""/sessions: a session by id or key, its messages and hot window, and the lifecycle's
operations on it (summarize, compact, flush, consolidate, reset).

Every method of a path lives on this one router: Django resolves a path to the first router
that declares it.
"""

import time
import uuid

import pydantic
from django.conf import settings
from ninja import Query, Status

from apps.api.registry import Router, access
from apps.api.request import AuthedRequest
from apps.conversations import schemas, selectors, services
from apps.conversations.models import Message, Session
from apps.conversations.selectors import Window
from apps.conversations.services import NewMessage
from apps.core.errors import NotFound
from apps.core.pagination import Page
from apps.learnings.schemas import hint_out
from apps.lifecycle import services as lifecycle
from apps.lifecycle.models import Trigger
from apps.lifecycle.schemas import (
    CompactOut,
    ConsolidateQuery,
    ResetOut,
    RunsOut,
    SummaryRunsOut,
)
from apps.lifecycle.services.reset import ResetOutcome
from apps.memory import services as memory
from apps.memory.schemas import AppendOut, MessagesIn
from apps.people.selectors import read_audience
from apps.people.services import session_remove

router = Router(tags=["sessions"])

# Who a pop's audit event names: the agent's own key asks (no person is logged in).
API_ACTOR = "agent"


def session_of(request: AuthedRequest, ref: str | None) -> Session | None:
    """The calling agent's session `ref` (its id or key) names, 404 when none; None without
    a ref."""
    return selectors.session_get(agent=request.auth, ref=ref) if ref else None


@router.post("/sessions", response={200: schemas.SessionOut, 201: schemas.SessionOut})
@access(session_field="key")
def create_session(request: AuthedRequest, payload: schemas.SessionIn) -> Status[Session]:
    """Create a session; with a `key` the agent already uses, that session is returned (200)."""
    session, created = services.session_create(agent=request.auth, **payload.dict())
    return Status(201 if created else 200, session)


@router.get("/sessions", response=schemas.SessionPage)
def list_sessions(request: AuthedRequest, query: Query[schemas.SessionQuery]) -> Page[Session]:
    """Newest first: `user`'s sessions, every session with `all_users`, else the agent's own
    (those without a user)."""
    seen = read_audience(user=query.user, all_users=query.all_users, where="query")
    return selectors.sessions_page(
        agent=request.auth, cursor=query.cursor, limit=query.limit, user=seen.user
    )


@router.get("/sessions/{session_id}", response=schemas.SessionOut)
def get_session(request: AuthedRequest, session_id: str) -> Session:
    return selectors.session_get(agent=request.auth, ref=session_id)


@router.patch("/sessions/{session_id}", response=schemas.SessionOut)
def update_session(
    request: AuthedRequest, session_id: str, payload: schemas.SessionPatch
) -> Session:
    session = selectors.session_get(agent=request.auth, ref=session_id)
    return services.session_update(session=session, **payload.dict())


@router.delete("/sessions/{session_id}", response={204: None})
def remove_session(request: AuthedRequest, session_id: str) -> Status[None]:
    """Delete the session with its messages, compact markers, meta, summary and archives.
    Its runs and history entries stay, without the session."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    session_remove(session=session)
    return Status(204, None)


@router.get("/sessions/{session_id}/messages", response=schemas.MessagePage)
def list_messages(
    request: AuthedRequest, session_id: str, query: Query[schemas.MessageQuery]
) -> Page[Message]:
    """Every message of the session (compaction deletes none), filtered and paginated."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    return selectors.messages_page(
        session=session,
        after=query.after,
        before=query.before,
        roles=query.role,
        cursor=query.cursor,
        limit=query.limit,
        descending=query.order == "desc",
    )


def _new_key(ref: str) -> schemas.SessionIn | None:
    """POST /sessions's payload for `ref` when it can name a new session: a valid key that
    is not an id (an unknown id stays "session not found"); None otherwise."""
    try:
        uuid.UUID(ref)
        return None
    except ValueError:
        pass
    try:
        return schemas.SessionIn.model_validate({"key": ref})
    except pydantic.ValidationError:
        return None


def session_to_append(request: AuthedRequest, ref: str) -> Session:
    """The session an append goes to: the agent's with this id or key, or a new one for a
    key it has not used yet, as POST /sessions with that key makes it (a user-bound key's
    is its user's). The API and MCP's append_messages both take this path."""
    try:
        return selectors.session_get(agent=request.auth, ref=ref)
    except NotFound:
        payload = _new_key(ref)
        if payload is None:
            raise
        session, _ = services.session_create(
            agent=request.auth, key=payload.key, user=request.key_scope.user
        )
        return session


@router.post("/sessions/{session_id}/messages", response={201: AppendOut})
def append_messages(request: AuthedRequest, session_id: str, payload: MessagesIn) -> Status[dict]:
    """Append one or many messages atomically: all are stored, or none. A key the agent has
    not used yet starts that session first. `lifecycle` names what the append set off in
    the background (summary, consolidate, compact)."""
    session = session_to_append(request, session_id)
    done = memory.messages_append_turn(
        session=session,
        messages=[NewMessage(**m.dict()) for m in payload.messages],
        max_batch=min(
            settings.MEMORYHUB_MAX_BATCH_MESSAGES, session.agent.config.max_batch_messages
        ),
    )
    result = done.result
    return Status(
        201,
        {
            "created": result.created,
            "deduplicated": result.deduplicated,
            "messages": result.messages,
            "lifecycle": done.lifecycle,
            "hints": [hint_out(h) for h in done.hints],
        },
    )


@router.post("/sessions/{session_id}/messages/pop", response=schemas.MessageOut)
def pop_message(request: AuthedRequest, session_id: str, query: Query[schemas.PopQuery]) -> Message:
    """Remove the session's newest message and return it (the OpenAI Agents SDK's
    `pop_item`). 404 when the session has no message; 409 when the lifecycle already used
    it (the rolling summary, a flush, a compaction or a consolidation covers it), and it
    stays. With `user`, a 422 unless it is the session's user. Audited."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    read_audience(session=session, user=query.user, where="query")  # 422: another user
    return services.message_pop(session=session, username=API_ACTOR)


@router.get("/sessions/{session_id}/window", response=schemas.WindowOut)
def get_window(request: AuthedRequest, session_id: str) -> Window:
    """The hot window: the last `max_history_messages` after the compaction cutoff, with
    the older ones the summary does not cover yet, and the recap after a
    consolidation (docs/lifecycle.md)."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    return selectors.session_window(session=session)


@router.post("/sessions/{session_id}/summarize", response=SummaryRunsOut, tags=["lifecycle"])
def summarize(request: AuthedRequest, session_id: str) -> dict:
    """Fold what left the window into the rolling summary now."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    runs = lifecycle.session_summarize(session=session, trigger=Trigger.API)
    summary = selectors.session_summary(session=session)
    return {"runs": runs, "summary": summary.content if summary else None}


@router.post("/sessions/{session_id}/compact", response=CompactOut, tags=["lifecycle"])
def compact(request: AuthedRequest, session_id: str) -> dict:
    """Compact now: the oldest messages go to an Archive entry behind a marker; no
    message is deleted."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    runs = lifecycle.session_compact(session=session, trigger=Trigger.API)
    meta = selectors.session_meta(session=session)
    return {
        "runs": runs,
        "start_at": meta.start_at if meta else None,
        "markers": selectors.session_markers(session=session),
    }


@router.post("/sessions/{session_id}/flush", response=RunsOut, tags=["lifecycle"])
def flush(request: AuthedRequest, session_id: str) -> dict:
    """Store the facts of the oldest window messages now (the proactive flush)."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    return {"runs": lifecycle.session_flush(session=session, trigger=Trigger.API)}


@router.post("/sessions/{session_id}/consolidate", response=RunsOut, tags=["lifecycle"])
def consolidate(request: AuthedRequest, session_id: str, query: Query[ConsolidateQuery]) -> dict:
    """Consolidate now: a history entry and MEMORY.md; waits its turn behind the
    agent's other consolidations, up to consolidation_timeout_seconds. `keep` leaves the
    newest messages for later (default 0: everything)."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    wait_until = time.monotonic() + session.agent.config.consolidation_timeout_seconds
    runs = lifecycle.session_consolidate(
        session=session, trigger=Trigger.API, keep=query.keep, wait_until=wait_until
    )
    return {"runs": runs}


@router.post("/sessions/{session_id}/reset", response=ResetOut, tags=["lifecycle"])
def reset_session(request: AuthedRequest, session_id: str) -> ResetOutcome:
    """Consolidate (at most consolidation_timeout_seconds), keep what that did not cover in an
    Archive entry, then delete the messages and meta; the rolling summary survives."""
    session = selectors.session_get(agent=request.auth, ref=session_id)
    return lifecycle.session_reset(session=session)
