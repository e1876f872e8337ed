"""/facts: the agent's (and its end users') facts, their changes and versions. A read without
`user` sees the agent's own facts alone; `all_users=True` sees every user's as well."""

from __future__ import annotations

from typing import Literal

from memoryhub_client import _call as http
from memoryhub_client._call import Bound, Call, M, given
from memoryhub_client.models import (
    Fact,
    FactIn,
    FactPage,
    FactPatch,
    FactQuery,
    FactSaveResult,
    FactSupersede,
    FactVersion,
    ForUser,
    ReadFor,
)

Source = Literal["agent", "user"]
FactVersions = list[FactVersion]  # `list` inside the class is Facts.list


class Facts(Bound[M]):
    """hub.facts: create (deduplicated), read, list, change, supersede and delete facts."""

    @http.post("/facts")
    def create(
        self,
        value: str,
        *,
        key: str | None = None,
        category: str | None = None,
        importance: float | None = None,
        source: Source | None = None,
        scope: Literal["agent", "user"] | None = None,
        user: str | None = None,
        review: bool | None = None,
    ) -> Call[FactSaveResult]:
        """Store a fact, or find the one it duplicates (`action` and `deduped` say which)."""
        body = FactIn(
            value=value,
            **given(
                key=key,
                category=category,
                importance=importance,
                source=source,
                scope=scope,
                user=user,
                review=review,
            ),
        )
        return Call(FactSaveResult, body=body)

    @http.get("/facts/{fact_id}")
    def get(self, fact_id: int, *, user: str | None = None, all_users: bool = False) -> Call[Fact]:
        query = ReadFor(**given(user=user, all_users=all_users or None))
        return Call(Fact, path={"fact_id": fact_id}, query=query)

    @http.listing("/facts")
    def list(
        self,
        *,
        user: str | None = None,
        all_users: bool = False,
        category: str | None = None,
        include_superseded: bool | None = None,
        limit: int | None = None,
    ) -> Call[FactPage]:
        """Every current fact (superseded ones too with include_superseded); `limit` is the
        page size."""
        query = FactQuery(
            **given(
                user=user,
                all_users=all_users or None,
                category=category,
                include_superseded=include_superseded,
                limit=limit,
            )
        )
        return Call(FactPage, query=query)

    @http.patch("/facts/{fact_id}")
    def update(
        self,
        fact_id: int,
        *,
        value: str | None = None,
        key: str | None = None,
        category: str | None = None,
        importance: float | None = None,
        reason: str | None = None,
        source: Source | None = None,
        user: str | None = None,
    ) -> Call[Fact]:
        """Change a fact in place (a new version records the old value)."""
        body = FactPatch(
            **given(
                value=value,
                key=key,
                category=category,
                importance=importance,
                reason=reason,
                source=source,
            )
        )
        return Call(Fact, path={"fact_id": fact_id}, body=body, query=ForUser(**given(user=user)))

    @http.post("/facts/{fact_id}/supersede")
    def supersede(
        self,
        fact_id: int,
        value: str,
        *,
        reason: str | None = None,
        source: Source | None = None,
        user: str | None = None,
    ) -> Call[Fact]:
        """A new fact replacing this one, which stays as history (superseded_by)."""
        body = FactSupersede(value=value, **given(reason=reason, source=source))
        return Call(Fact, path={"fact_id": fact_id}, body=body, query=ForUser(**given(user=user)))

    @http.get("/facts/{fact_id}/versions")
    def versions(
        self, fact_id: int, *, user: str | None = None, all_users: bool = False
    ) -> Call[FactVersions]:
        """The fact's changes, oldest first."""
        query = ReadFor(**given(user=user, all_users=all_users or None))
        return Call(FactVersions, path={"fact_id": fact_id}, query=query)

    @http.delete("/facts/{fact_id}")
    def delete(self, fact_id: int, *, user: str | None = None) -> Call[None]:
        return Call(None, path={"fact_id": fact_id}, query=ForUser(**given(user=user)))
