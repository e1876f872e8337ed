"""The SDK's own MCP client, driving the server over real streamable HTTP (pytest-django's
live server) and over stdio (`manage.py mcp --key …` as a subprocess on the test database).

The suite is synchronous, so `McpClient` holds one client session open in an event loop on
its own thread and offers blocking calls; every MCP test uses the transactional database,
because the server (a live-server thread or a subprocess) must see what the test wrote.
"""

import asyncio
import json
import os
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client as DjangoClient
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.factories import AgentFactory, issue_key
from tests.support.client import ApiClient
from tests.support.live import agent, key, live_url  # noqa: F401  (shared fixtures)

TRANSPORTS = ["http", "stdio"]
TIMEOUT = 60.0


def _run_in(loop: asyncio.AbstractEventLoop, coro: Coroutine, timeout: float = TIMEOUT) -> Any:
    return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout)


@dataclass
class McpClient:
    """A blocking facade over one `mcp.client.Client` session, entered on a loop thread."""

    server: Any  # what mcp.client.Client takes: a Transport or StdioServerParameters
    http: httpx2.AsyncClient | None = None
    _loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    _client: Client | None = None

    def __post_init__(self) -> None:
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._ready: Future[Client] = Future()
        self._stop = asyncio.Event()
        self._held = asyncio.run_coroutine_threadsafe(self._hold(), self._loop)
        try:
            self._client = self._ready.result(TIMEOUT)
        except BaseException:
            self._shutdown()
            raise

    async def _hold(self) -> None:
        # The client's task group must be entered and left by the same task: this one.
        try:
            async with AsyncExitStack() as stack:
                if self.http is not None:
                    await stack.enter_async_context(self.http)
                client = await stack.enter_async_context(Client(self.server, cache=None))
                self._ready.set_result(client)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                raise

    def run(self, fn: Callable[[Client], Coroutine]) -> Any:
        """Await `fn(client)` on the session's loop and return its result."""
        return _run_in(self._loop, fn(self._client))

    def call(self, name: str, arguments: dict | None = None):
        return self.run(lambda c: c.call_tool(name, arguments or {}))

    def result(self, name: str, arguments: dict | None = None) -> Any:
        """A successful call's structured content, checked against its one text block."""
        result = self.call(name, arguments)
        assert result.is_error is False, result.content
        assert [c.type for c in result.content] == ["text"]
        assert json.loads(result.content[0].text) == result.structured_content
        return result.structured_content

    def error(self, name: str, arguments: dict | None = None) -> Any:
        """A failed call's text (parsed when it is JSON, as a validation detail is)."""
        result = self.call(name, arguments)
        assert result.is_error is True, result.structured_content
        assert [c.type for c in result.content] == ["text"]
        text = result.content[0].text
        try:
            return json.loads(text)
        except ValueError:
            return text

    def tools(self) -> list:
        return self.run(lambda c: c.list_tools()).tools

    def instructions(self) -> str | None:
        """What the server told the client to tell its model, at connection."""
        assert self._client is not None
        return self._client.instructions

    def resources(self) -> list:
        return self.run(lambda c: c.list_resources()).resources

    def templates(self) -> list:
        return self.run(lambda c: c.list_resource_templates()).resource_templates

    def read(self, uri: str) -> list:
        return self.run(lambda c: c.read_resource(uri)).contents

    def close(self) -> None:
        if self._client is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._held.result(TIMEOUT)
            self._client = None
        self._shutdown()

    def _shutdown(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(TIMEOUT)
        self._loop.close()


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, as a client's task groups raise them."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def http_client(url: str, key: str) -> McpClient:
    """Streamable HTTP to `url` with the key as a Bearer token."""
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(TIMEOUT)
    )
    return McpClient(streamable_http_client(url, http_client=http), http=http)


def database_url() -> str:
    """The test database as a DATABASE_URL, for a server process started by a test."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"  # an absolute path under the test DATA_DIR
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def server_env() -> dict[str, str]:
    """The test settings on the test database, data dir, broker and cache."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings.test",
        "MEMORYHUB_DATA_DIR": str(settings.DATA_DIR),
        "DATABASE_URL": database_url(),
    }


def stdio_params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp", *args],
        env=server_env(),
        cwd=str(settings.BASE_DIR),
    )


def stdio_client(key: str, *extra: str) -> McpClient:
    """`manage.py mcp --key <key>` as a subprocess, through the SDK's stdio client."""
    return McpClient(stdio_params("--key", key, *extra))


@dataclass
class Connect:
    """Opens MCP sessions over one transport; every session is closed after the test."""

    transport: str
    base_url: str | None
    opened: list[McpClient] = field(default_factory=list)

    def __call__(self, key: str, *, every_tool: bool = True) -> McpClient:
        """A session with `key`; `every_tool`: tools/list answers the full set (which the
        tests of every tool read), else the default set."""
        if self.transport == "http":
            query = "?tools=all" if every_tool else ""
            client = http_client(f"{self.base_url}/mcp{query}", key)
        else:
            client = stdio_client(key, *(["--all-tools"] if every_tool else []))
        self.opened.append(client)
        return client


@pytest.fixture(params=TRANSPORTS)
def connect(request, transactional_db) -> Iterator[Connect]:
    """Parametrized over both transports: `connect(key)` opens a session with that key."""
    base_url = request.getfixturevalue("live_url") if request.param == "http" else None
    opener = Connect(transport=request.param, base_url=base_url)
    yield opener
    for client in opener.opened:
        client.close()


@pytest.fixture
def connect_http(transactional_db, live_url) -> Iterator[Connect]:
    opener = Connect(transport="http", base_url=live_url)
    yield opener
    for client in opener.opened:
        client.close()


@pytest.fixture
def other_agent(transactional_db):
    return AgentFactory(slug="mallory-bot")


@pytest.fixture
def other_key(other_agent) -> str:
    return issue_key(other_agent)


@pytest.fixture
def api(key) -> ApiClient:
    """The JSON API as the same agent, to compare tool results with."""
    return ApiClient(key=key, client=DjangoClient())


@pytest.fixture
def other_api(other_key) -> ApiClient:
    return ApiClient(key=other_key, client=DjangoClient())


@pytest.fixture
def mcp(connect, key) -> McpClient:
    """One MCP session as `agent`, over the parametrized transport."""
    return connect(key)
