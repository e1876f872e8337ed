"""MemoryHub (blocking) and AsyncMemoryHub (asyncio): one set of resources, two transports.

with MemoryHub() as hub:                 # MEMORYHUB_URL and MEMORYHUB_KEY by default
    hub.messages.append("chat-1", [{"role": "user", "content": "hi"}])
    context = hub.context("chat-1", query="hi")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import ClassVar, Literal

import httpx

from memoryhub_client import _call as http
from memoryhub_client._call import Async, Bound, Call, M, Sync, given
from memoryhub_client._transport import AsyncTransport, Policy, SyncTransport, settings
from memoryhub_client.models import (
    ChatSearchIn,
    Context,
    ContextIn,
    SearchResult,
    SearchStatus,
    Window,
)
from memoryhub_client.resources.agent import AgentResource, Users, Workspace
from memoryhub_client.resources.entries import Entries
from memoryhub_client.resources.facts import Facts
from memoryhub_client.resources.learnings import Errors, Learnings
from memoryhub_client.resources.lifecycle import History, Runs
from memoryhub_client.resources.memory import Memory
from memoryhub_client.resources.sessions import Messages, Sessions

DEFAULT_TIMEOUT = 30.0
# Requests in flight per client (httpx's default is 100: as many server threads and
# database connections as PostgreSQL's default max_connections).
MAX_CONNECTIONS = 10
SearchMode = Literal["semantic", "keyword", "hybrid", "contains"]


class _Hub(Bound[M]):
    """The resources and the calls on the hub itself, whatever the transport."""

    # The HTTP client and the transport a subclass sends with (blocking or asyncio).
    _http_client: ClassVar[type[httpx.Client] | type[httpx.AsyncClient]]
    _transport_type: ClassVar[type[SyncTransport] | type[AsyncTransport]]

    def __init__(
        self,
        url: str | None = None,
        key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_wait: float = 60.0,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        base, headers = settings(url, key)
        # A bound on requests in flight: thousands of concurrent calls (an asyncio.gather of
        # store ops) queue here instead of opening a server thread and database connection each.
        limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
        # `timeout` is per attempt: waiting for a free connection is not part of it.
        timeouts = httpx.Timeout(timeout, pool=None)
        client = self._http_client(base_url=base, headers=headers, timeout=timeouts, limits=limits)
        policy = Policy(max_retries=max_retries, backoff=backoff, max_wait=max_wait)
        transport = self._transport_type(client, policy)
        super().__init__(transport)
        self.url = base
        self.sessions: Sessions[M] = Sessions(transport)
        self.messages: Messages[M] = Messages(transport)
        self.entries: Entries[M] = Entries(transport)
        self.memory: Memory[M] = Memory(transport)
        self.facts: Facts[M] = Facts(transport)
        self.errors: Errors[M] = Errors(transport)
        self.learnings: Learnings[M] = Learnings(transport)
        self.runs: Runs[M] = Runs(transport)
        self.history: History[M] = History(transport)
        self.users: Users[M] = Users(transport)
        self.workspace: Workspace[M] = Workspace(transport)
        self.agent: AgentResource[M] = AgentResource(transport)

    @http.get("/sessions/{session_id}/window")
    def window(self, session_id: str) -> Call[Window]:
        """The session's hot window: recent messages with their tool calls, the rolling
        summary, compaction markers."""
        return Call(Window, path={"session_id": session_id})

    @http.post("/context")
    def context(
        self,
        session_id: str,
        *,
        query: str | None = None,
        max_tokens: int | None = None,
        user: str | None = None,
        observed_tokens: int | None = None,
        lifecycle: Literal["background", "wait", "off"] | None = None,
    ) -> Call[Context]:
        """get_context: the system part, the session's relevant messages and the memory leg's
        windows within `max_tokens`, with usage figures (`Context.openai_messages()` turns it
        into an OpenAI chat list)."""
        body = ContextIn(
            session_id=session_id,
            **given(
                query=query,
                max_tokens=max_tokens,
                user=user,
                observed_tokens=observed_tokens,
                lifecycle=lifecycle,
            ),
        )
        return Call(Context, body=body)

    @http.post("/search")
    def search(
        self,
        query: str,
        *,
        mode: SearchMode | None = None,
        k: int | None = None,
        session_id: str | None = None,
        user: str | None = None,
        all_users: bool = False,
        role: str | Sequence[str] | None = None,
        after: datetime | None = None,
        before: datetime | None = None,
        metadata: Mapping[str, str | int | float | bool] | None = None,
        min_score: float | None = None,
    ) -> Call[SearchResult]:
        """Search the agent's messages (semantic by default; keyword, hybrid or contains): in
        one session with `session_id`, one end user's with `user`, every user's with
        `all_users=True`; with none of these, the agent's own messages (sessions without a
        user) alone. A read, so it is retried like a GET."""
        role_value = role if role is None or isinstance(role, str) else list(role)
        body = ChatSearchIn(
            query=query,
            **given(
                mode=mode,
                k=k,
                session_id=session_id,
                user=user,
                all_users=all_users or None,
                role=role_value,
                after=after,
                before=before,
                metadata=metadata,
                min_score=min_score,
            ),
        )
        return Call(SearchResult, body=body, retry=True)

    @http.get("/search/status")
    def search_status(self) -> Call[SearchStatus]:
        """How many of the agent's rows are embedded, stale, pending or failed, per corpus."""
        return Call(SearchStatus)


class MemoryHub(_Hub[Sync]):
    """The blocking client. `url` defaults to MEMORYHUB_URL (else http://127.0.0.1:8000),
    `key` to MEMORYHUB_KEY; `timeout` is per attempt, in seconds; a retryable call is
    attempted at most 1 + max_retries times (see Policy); at most `max_connections` requests
    are in flight at once. Close it, or use `with`."""

    _http_client = httpx.Client
    _transport_type = SyncTransport

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> MemoryHub:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncMemoryHub(_Hub[Async]):
    """The asyncio client: MemoryHub's arguments, resources and methods, every call awaited
    and every listing an async iterator. Close it with `await hub.aclose()`, or `async with`."""

    _http_client = httpx.AsyncClient
    _transport_type = AsyncTransport

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> AsyncMemoryHub:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
