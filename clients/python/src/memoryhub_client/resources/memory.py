"""/memory: the memory tools an agent calls by name (save, recall, search). A read names its
user (`user`, or a session of theirs); without one it sees the agent's own memory alone, and
`all_users=True` sees every user's."""

from __future__ import annotations

from typing import Literal

from memoryhub_client import _call as http
from memoryhub_client._call import Bound, Call, M, given
from memoryhub_client.models import (
    MemorySearchResult,
    RecallIn,
    RecallResult,
    SaveIn,
    SaveResult,
    SearchIn,
)


class Memory(Bound[M]):
    """hub.memory: save a fact (deduplicated on write), recall facts, search all memory."""

    @http.post("/memory/save")
    def save(
        self,
        content: str,
        *,
        key: str | None = None,
        category: str | None = None,
        importance: float | None = None,
        scope: Literal["agent", "user"] | None = None,
        session_id: str | None = None,
        user: str | None = None,
        review: bool | None = None,
    ) -> Call[SaveResult]:
        """Store a fact (or find it already stored) and log it in today's memory file."""
        body = SaveIn(
            content=content,
            **given(
                key=key,
                category=category,
                importance=importance,
                scope=scope,
                session_id=session_id,
                user=user,
                review=review,
            ),
        )
        return Call(SaveResult, body=body)

    @http.post("/memory/recall")
    def recall(
        self,
        query: str,
        *,
        k: int | None = None,
        category: str | None = None,
        session_id: str | None = None,
        user: str | None = None,
        all_users: bool = False,
    ) -> Call[RecallResult]:
        """Semantic recall over facts: matching categories first, then a flat fallback. A
        read: retried like a GET."""
        body = RecallIn(
            query=query,
            **given(
                k=k,
                category=category,
                session_id=session_id,
                user=user,
                all_users=all_users or None,
            ),
        )
        return Call(RecallResult, body=body, retry=True)

    @http.post("/memory/search")
    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        session_id: str | None = None,
        user: str | None = None,
        all_users: bool = False,
    ) -> Call[MemorySearchResult]:
        """Hybrid search over documents, entries, facts, learnings and history in one ranked
        list, each hit labelled with its source. A read: retried like a GET."""
        body = SearchIn(
            query=query,
            **given(k=k, session_id=session_id, user=user, all_users=all_users or None),
        )
        return Call(MemorySearchResult, body=body, retry=True)
