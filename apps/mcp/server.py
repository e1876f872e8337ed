"""The MCP server (the SDK's low-level Server): tools and resources for the agent the
connection acts for, which the transport sets in `current_agent` before serving.

Handlers are async; the tools are synchronous Django code, so each call runs through
asgiref's thread-sensitive sync_to_async: over HTTP that is the web server's own request
thread (the transport enters the event loop with async_to_sync), with its persistent
database connection, so a call opens no connection of its own."""

from collections.abc import Callable
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

import mcp_types as types
from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from apps.agents.keyscope import UNSCOPED, KeyScope
from apps.agents.models import Agent
from apps.core.errors import ApplicationError
from apps.mcp import resources
from apps.mcp.tools import DEFAULT_TOOLS, TOOLS, run

T = TypeVar("T")
P = ParamSpec("P")

current_agent: ContextVar[Agent] = ContextVar("mcp_agent")
# The scope of the key the connection authenticated with (`--agent SLUG`: unscoped).
current_scope: ContextVar[KeyScope] = ContextVar("mcp_key_scope", default=UNSCOPED)
# Whether tools/list answers every tool in full (`?tools=all`, `--all-tools`) or the default set.
all_tools: ContextVar[bool] = ContextVar("mcp_all_tools", default=False)

INSTRUCTIONS = (
    "memoryhub is your long-term memory. Save each turn of a conversation with "
    "append_messages, and start a turn with get_context: it gives what to put in your prompt. "
    "Remember facts with memory_save and find them with memory_recall; search past "
    "conversations with search_chat_history and everything else with memory_search. Keep "
    "notes with the entry_ tools. Before retrying a tool that failed, look it up with "
    "search_error_memory, and record what you tried with remember_error. Your documents "
    "(MEMORY.md, USER.md and the others) are also memory:// resources."
)


async def in_thread(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args)` in the thread Django code runs in (the request's, or stdio's one thread);
    a connection past CONN_MAX_AGE or broken is replaced first, as at a request's start."""

    def work() -> T:
        close_old_connections()
        return fn(*args, **kwargs)

    # Measured: a new thread per call opened a PostgreSQL connection each time (+10-20 ms).
    return await sync_to_async(work, thread_sensitive=True)()


FULL_SET = [tool.definition() for tool in TOOLS.values()]
DEFAULT_SET = [TOOLS[name].definition(full=False) for name in DEFAULT_TOOLS]


async def list_tools(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=FULL_SET if all_tools.get() else DEFAULT_SET)


async def call_tool(
    ctx: ServerRequestContext, params: types.CallToolRequestParams
) -> types.CallToolResult:
    tool = TOOLS.get(params.name)
    if tool is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
    return await in_thread(run, tool, current_agent.get(), params.arguments, current_scope.get())


async def list_resources(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    found = await in_thread(resources.resource_list, current_agent.get())
    return types.ListResourcesResult(resources=found)


async def list_resource_templates(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=resources.TEMPLATES)


async def read_resource(
    ctx: ServerRequestContext, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    uri = str(params.uri)
    try:
        text = await in_thread(resources.resource_read, current_agent.get(), uri)
    except ApplicationError as exc:
        # As the SDK's MCPServer answers an unknown resource: invalid params, with the URI.
        raise MCPError(code=types.INVALID_PARAMS, message=exc.message, data={"uri": uri}) from exc
    contents = types.TextResourceContents(uri=uri, mime_type=resources.MARKDOWN, text=text)
    return types.ReadResourceResult(contents=[contents])


server: Server = Server(
    "memoryhub",
    version="1",
    instructions=INSTRUCTIONS,
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_list_resource_templates=list_resource_templates,
    on_read_resource=read_resource,
)
