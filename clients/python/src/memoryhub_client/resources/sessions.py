"""/sessions: sessions, their messages, and the lifecycle's operations on a session.

A `session_id` argument is a session's id or its key (the server accepts either), as in
the API; `session=` is its deprecated old name (_call.py)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from memoryhub_client import _call as http
from memoryhub_client._call import Bound, Call, M, given
from memoryhub_client.models import (
    AppendResult,
    CompactResult,
    ConsolidateQuery,
    Message,
    MessagePage,
    MessageQuery,
    MessagesIn,
    NewMessage,
    PopQuery,
    ResetResult,
    RunsResult,
    Session,
    SessionIn,
    SessionPage,
    SessionPatch,
    SessionQuery,
    SummaryResult,
)

Role = Literal["user", "assistant", "tool", "system"]


def with_idempotency_keys(messages: Sequence[NewMessage | Mapping[str, Any]]) -> MessagesIn:
    """The messages as the append's body, each with an idempotency_key (a fresh one where
    the caller gave none), so a retried append stores each message once."""
    body = MessagesIn.model_validate({"messages": list(messages)})
    for i, message in enumerate(body.messages):
        if not message.idempotency_key:
            body.messages[i] = message.model_copy(update={"idempotency_key": uuid.uuid4().hex})
    return body


class Sessions(Bound[M]):
    """hub.sessions: create (get-or-create by key), read, list, change and delete sessions,
    and run the lifecycle's operations on one now."""

    @http.post("/sessions")
    def create(
        self,
        *,
        key: str | None = None,
        user: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[Session]:
        """A new session, or the agent's session with this `key` (get-or-create, so a call
        with a key is retried like an idempotent one)."""
        body = SessionIn(**given(key=key, user=user, title=title, metadata=metadata))
        return Call(Session, body=body, retry=key is not None)

    @http.get("/sessions/{session_id}")
    def get(self, session_id: str) -> Call[Session]:
        """The session with this id or key (NotFound when the agent has none)."""
        return Call(Session, path={"session_id": session_id})

    @http.listing("/sessions")
    def list(
        self, *, user: str | None = None, all_users: bool = False, limit: int | None = None
    ) -> Call[SessionPage]:
        """The agent's sessions without a user; one end user's with `user`; every session with
        `all_users=True`. Newest first; `limit` is the page size."""
        query = SessionQuery(**given(user=user, all_users=all_users or None, limit=limit))
        return Call(SessionPage, query=query)

    @http.patch("/sessions/{session_id}")
    def update(
        self,
        session_id: str,
        *,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[Session]:
        """Change the title and/or replace the metadata; what is not given stays."""
        body = SessionPatch(**given(title=title, metadata=metadata))
        return Call(Session, path={"session_id": session_id}, body=body)

    @http.delete("/sessions/{session_id}")
    def delete(self, session_id: str) -> Call[None]:
        """Delete the session with its messages, markers, summary and archives."""
        return Call(None, path={"session_id": session_id})

    @http.post("/sessions/{session_id}/reset")
    def reset(self, session_id: str) -> Call[ResetResult]:
        """Consolidate, archive what that did not cover, then delete the messages; the
        rolling summary survives."""
        return Call(ResetResult, path={"session_id": session_id})

    @http.post("/sessions/{session_id}/summarize")
    def summarize(self, session_id: str) -> Call[SummaryResult]:
        """Fold what left the window into the rolling summary now."""
        return Call(SummaryResult, path={"session_id": session_id})

    @http.post("/sessions/{session_id}/compact")
    def compact(self, session_id: str) -> Call[CompactResult]:
        """Compact now: the oldest messages go to an archive entry behind a marker."""
        return Call(CompactResult, path={"session_id": session_id})

    @http.post("/sessions/{session_id}/flush")
    def flush(self, session_id: str) -> Call[RunsResult]:
        """Store the facts of the oldest window messages now."""
        return Call(RunsResult, path={"session_id": session_id})

    @http.post("/sessions/{session_id}/consolidate")
    def consolidate(self, session_id: str, *, keep: int | None = None) -> Call[RunsResult]:
        """Consolidate now (history entry, MEMORY.md); `keep` leaves the newest messages."""
        query = ConsolidateQuery(**given(keep=keep))
        return Call(RunsResult, path={"session_id": session_id}, query=query)


class Messages(Bound[M]):
    """hub.messages: append to a session, list its messages, take its last one back."""

    @http.post("/sessions/{session_id}/messages")
    def append(
        self, session_id: str, messages: Sequence[NewMessage | Mapping[str, Any]]
    ) -> Call[AppendResult]:
        """Append messages atomically (all or none). Each gets an idempotency_key when it has
        none, so the append is retried on 429, 503 and lost connections without doubles."""
        body = with_idempotency_keys(messages)
        return Call(AppendResult, path={"session_id": session_id}, body=body, retry=True)

    @http.listing("/sessions/{session_id}/messages")
    def list(
        self,
        session_id: str,
        *,
        order: Literal["asc", "desc"] | None = None,
        role: Role | Sequence[Role] | None = None,
        after: datetime | None = None,
        before: datetime | None = None,
        limit: int | None = None,
    ) -> Call[MessagePage]:
        """Every message of the session (compaction deletes none), oldest first unless
        order="desc", filtered by role and time; `limit` is the page size."""
        roles = [role] if isinstance(role, str) else role
        query = MessageQuery(
            **given(order=order, role=roles, after=after, before=before, limit=limit)
        )
        return Call(MessagePage, path={"session_id": session_id}, query=query)

    @http.post("/sessions/{session_id}/messages/pop")
    def pop(self, session_id: str, *, user: str | None = None) -> Call[Message]:
        """Remove the session's last message and return it (NotFound when it has none)."""
        query = PopQuery(**given(user=user))
        return Call(Message, path={"session_id": session_id}, query=query)
