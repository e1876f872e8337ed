"""The two transports: one streamable-HTTP exchange (stateless, JSON responses) run through
the SDK's ASGI handler inside a short-lived event loop, and stdio for a whole process."""

import logging
from dataclasses import dataclass, field

import anyio
from asgiref.sync import async_to_sync
from django.conf import settings
from django.http import HttpRequest
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Message, Scope  # the ASGI types the MCP SDK's manager takes

from apps.agents.keyscope import UNSCOPED, KeyScope
from apps.agents.models import Agent
from apps.mcp.server import all_tools, current_agent, current_scope, server

# Each HTTP exchange starts and stops a stateless manager and transport: their INFO lines
# would be two or three log lines per call, with nothing in them.
for _name in ("mcp.server.streamable_http_manager", "mcp.server.streamable_http"):
    logging.getLogger(_name).setLevel(logging.WARNING)


@dataclass
class HttpExchange:
    """What the ASGI app answered: status, headers and the body."""

    status: int = 500
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = [
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]
            ]
        elif message["type"] == "http.response.body":
            self.body += message.get("body", b"")


def asgi_scope(request: HttpRequest) -> Scope:
    """An ASGI HTTP scope for the Django request (WSGI headers are latin-1 already)."""
    host, _, port = request.get_host().partition(":")
    headers = [
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": headers,
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (host, int(port or (443 if request.is_secure() else 80))),
    }


async def _exchange(scope: Scope, body: bytes) -> HttpExchange:
    received = False

    async def receive() -> Message:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": body, "more_body": False}
        # The client stays connected until the answer is sent; the manager's exit cancels this.
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    exchange = HttpExchange()
    manager = StreamableHTTPSessionManager(
        app=server,
        stateless=True,
        json_response=True,
        max_request_body_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
    )
    async with manager.run():
        await manager.handle_request(scope, receive, exchange.send)
    return exchange


def serve_http(
    agent: Agent,
    scope: Scope,
    body: bytes,
    *,
    key_scope: KeyScope = UNSCOPED,
    every_tool: bool = False,
) -> HttpExchange:
    """Answer one MCP POST (or GET/DELETE) as `agent` within its key's scope, in an event
    loop of its own; `every_tool`: tools/list answers the full set."""
    token = current_agent.set(agent)
    scope_token = current_scope.set(key_scope)
    tools_token = all_tools.set(every_tool)
    try:
        # async_to_sync runs the loop in another thread and brings the tools' thread-sensitive
        # sync calls back to this one (apps/mcp/server.py: in_thread).
        return async_to_sync(_exchange)(scope, body)
    finally:
        all_tools.reset(tools_token)
        current_scope.reset(scope_token)
        current_agent.reset(token)


async def _stdio() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_stdio(agent: Agent, *, key_scope: KeyScope = UNSCOPED, every_tool: bool = False) -> None:
    """Speak MCP over stdin/stdout as `agent` (within its key's scope) until stdin closes;
    `every_tool`: tools/list answers the full set."""
    token = current_agent.set(agent)
    scope_token = current_scope.set(key_scope)
    tools_token = all_tools.set(every_tool)
    try:
        anyio.run(_stdio)
    finally:
        all_tools.reset(tools_token)
        current_scope.reset(scope_token)
        current_agent.reset(token)
