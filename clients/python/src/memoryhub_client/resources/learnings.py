"""/errors (error memory: tool failures and what fixed them) and /learnings (errors and
corrections the agent keeps in mind)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from memoryhub_client import _call as http
from memoryhub_client._call import Bound, Call, M, given
from memoryhub_client.models import (
    ErrorIn,
    ErrorPage,
    ErrorPatch,
    ErrorQuery,
    ErrorRecord,
    ErrorSearchIn,
    ErrorSearchResult,
    ForUser,
    Learning,
    LearningIn,
    LearningPage,
    LearningPatch,
    LearningQuery,
    ReadFor,
)

Outcome = Literal["open", "resolved", "failed", "abandoned"]
Kind = Literal["error", "correction"]
Status = Literal["active", "pending", "archived"]


class Errors(Bound[M]):
    """hub.errors: remember a tool's failure, find earlier ones, record what resolved them."""

    @http.post("/errors")
    def remember(
        self,
        tool_name: str,
        error: str,
        *,
        arguments: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
        strategy: str | None = None,
        outcome: Outcome | None = None,
        resolution: str | None = None,
        session_id: str | None = None,
        user: str | None = None,
    ) -> Call[ErrorRecord]:
        """Record a failure (the same failure again counts a hit on the record). Every
        user reads it de-identified; `user` (or the session's) reads their own raw."""
        body = ErrorIn(
            tool_name=tool_name,
            error=error,
            **given(
                arguments=arguments,
                context=context,
                strategy=strategy,
                outcome=outcome,
                resolution=resolution,
                session_id=session_id,
                user=user,
            ),
        )
        return Call(ErrorRecord, body=body)

    @http.listing("/errors")
    def list(
        self,
        *,
        tool_name: str | None = None,
        outcome: Outcome | None = None,
        limit: int | None = None,
        user: str | None = None,
        all_users: bool = False,
    ) -> Call[ErrorPage]:
        """Live error records, newest first: de-identified, and `user`'s own raw."""
        query = ErrorQuery(
            **given(
                tool_name=tool_name,
                outcome=outcome,
                limit=limit,
                user=user,
                all_users=all_users or None,
            )
        )
        return Call(ErrorPage, query=query)

    @http.post("/errors/search")
    def search(
        self,
        query: str,
        *,
        tool_name: str | None = None,
        k: int | None = None,
        user: str | None = None,
        session_id: str | None = None,
        all_users: bool = False,
    ) -> Call[ErrorSearchResult]:
        """Earlier failures like this one, best first. A read: retried like a GET."""
        body = ErrorSearchIn(
            query=query,
            **given(tool_name=tool_name, k=k, user=user, session_id=session_id,
                    all_users=all_users or None),
        )  # fmt: skip
        return Call(ErrorSearchResult, body=body, retry=True)

    @http.get("/errors/{error_id}")
    def get(
        self, error_id: int, *, user: str | None = None, all_users: bool = False
    ) -> Call[ErrorRecord]:
        path = {"error_id": error_id}
        query = ReadFor(**given(user=user, all_users=all_users or None))
        return Call(ErrorRecord, path=path, query=query)

    @http.patch("/errors/{error_id}")
    def update(
        self,
        error_id: int,
        *,
        outcome: Outcome | None = None,
        strategy: str | None = None,
        resolution: str | None = None,
        user: str | None = None,
    ) -> Call[ErrorRecord]:
        body = ErrorPatch(**given(outcome=outcome, strategy=strategy, resolution=resolution))
        path, query = {"error_id": error_id}, ForUser(**given(user=user))
        return Call(ErrorRecord, path=path, body=body, query=query)

    @http.delete("/errors/{error_id}")
    def delete(self, error_id: int) -> Call[None]:
        return Call(None, path={"error_id": error_id})

    @http.post("/errors/{error_id}/promote")
    def promote(self, error_id: int) -> Call[Learning]:
        """Make a learning of the record."""
        return Call(Learning, path={"error_id": error_id})


class Learnings(Bound[M]):
    """hub.learnings: add, read, list, change and delete learnings."""

    @http.post("/learnings")
    def add(
        self,
        content: str,
        kind: Kind,
        *,
        source: Literal["agent", "user"] | None = None,
        scope: Literal["agent", "user"] | None = None,
        session_id: str | None = None,
        user: str | None = None,
    ) -> Call[Learning]:
        body = LearningIn(
            content=content,
            kind=kind,
            **given(source=source, scope=scope, session_id=session_id, user=user),
        )
        return Call(Learning, body=body)

    @http.listing("/learnings")
    def list(
        self,
        *,
        user: str | None = None,
        all_users: bool = False,
        kind: Kind | None = None,
        status: Status | None = None,
        limit: int | None = None,
    ) -> Call[LearningPage]:
        """Learnings, newest first: the agent's own alone, with `user` theirs as well,
        with `all_users=True` every user's."""
        query = LearningQuery(
            **given(user=user, all_users=all_users or None, kind=kind, status=status, limit=limit)
        )
        return Call(LearningPage, query=query)

    @http.get("/learnings/{learning_id}")
    def get(
        self, learning_id: int, *, user: str | None = None, all_users: bool = False
    ) -> Call[Learning]:
        query = ReadFor(**given(user=user, all_users=all_users or None))
        return Call(Learning, path={"learning_id": learning_id}, query=query)

    @http.patch("/learnings/{learning_id}")
    def update(
        self,
        learning_id: int,
        *,
        content: str | None = None,
        kind: Kind | None = None,
        status: Status | None = None,
        user: str | None = None,
    ) -> Call[Learning]:
        body = LearningPatch(**given(content=content, kind=kind, status=status))
        path = {"learning_id": learning_id}
        return Call(Learning, path=path, body=body, query=ForUser(**given(user=user)))

    @http.delete("/learnings/{learning_id}")
    def delete(self, learning_id: int, *, user: str | None = None) -> Call[None]:
        return Call(None, path={"learning_id": learning_id}, query=ForUser(**given(user=user)))
