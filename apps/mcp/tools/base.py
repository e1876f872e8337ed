"""A tool is an API endpoint called in-process: arguments parsed with the endpoint's own
schemas, the endpoint function called with the connection's agent, its return value
serialized through the endpoint's response schema (apps/api/registry.py), errors answered
with the API's detail. What the model reads (title, description, each parameter's words, the
hints) is the tool's own: the API's docstrings speak to developers."""

import inspect
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import mcp_types as types
import pydantic
from django.http import Http404
from ninja import Schema
from ninja.errors import HttpError

from apps.agents.keyscope import UNSCOPED, KeyScope
from apps.agents.models import Agent
from apps.api.registry import Endpoint, declared
from apps.api.scopes import Call, enforce, with_user
from apps.core.encoders import MicrosecondEncoder
from apps.core.errors import ApplicationError, error_detail, validation_detail
from apps.core.races import DETAIL as LOST_RACE
from apps.core.races import is_vanished_reference
from apps.core.validation import check_parsed
from apps.mcp.tools import words
from apps.mcp.tools.schema import compact_schema, input_schema, output_schema, without

logger = logging.getLogger(__name__)

S = TypeVar("S", bound=Schema)


@dataclass(frozen=True)
class ToolRequest:
    """What the endpoint functions read from a request: the authenticated agent and its
    key's scope (apps/api/request.py)."""

    auth: Agent
    key_scope: KeyScope = UNSCOPED


@dataclass(frozen=True)
class Answer:
    """A result from another endpoint than the tool's own (a tool over two endpoints)."""

    endpoint: Endpoint
    result: object


@dataclass(frozen=True)
class Hints:
    """What a call does to the agent's memory, as MCP's tool annotations say it
    (docs/mcp.md, "Tool hints"). Every tool touches this service's memory alone."""

    read_only: bool
    destructive: bool
    idempotent: bool

    def annotations(self, title: str) -> types.ToolAnnotations:
        return types.ToolAnnotations(
            title=title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=False,
        )


# A read changes nothing, so repeating it changes nothing either.
READ = Hints(read_only=True, destructive=False, idempotent=True)


def write(*, destructive: bool, idempotent: bool) -> Hints:
    return Hints(read_only=False, destructive=destructive, idempotent=idempotent)


@dataclass(frozen=True)
class About:
    """What a client and its model read about a tool: a title, what it does (when to use
    it, what it returns), each parameter's description by (dotted) name, and its hints.
    `brief` is the description in the default tool set (docs/mcp.md, "Two tool sets")."""

    title: str
    description: str
    hints: Hints
    docs: Mapping[str, str] = field(default_factory=dict)
    brief: str = ""
    # Parameter descriptions of the default set, where the first sentence is not enough.
    brief_docs: Mapping[str, str] = field(default_factory=dict)
    # Optional parameters the default set leaves out of the schema (a call may send them).
    brief_omits: tuple[str, ...] = ()


def _reflowed(text: str) -> str:
    """`text` with each paragraph on one line (the source wraps them; a model needs not)."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


@dataclass(frozen=True)
class Tool:
    """One MCP tool over one API endpoint. `call(request, args)` invokes the endpoint with
    the parsed arguments; `answers` are the other endpoints whose body the tool may answer
    (an `Answer`)."""

    name: str
    endpoint: Endpoint
    params: type[Schema]
    # The arguments as `params` validated them: each tool's own Schema, which its call
    # reads (a Tool generic in it would put every tool in a dict of Tool[Any]).
    call: Callable[[ToolRequest, Any], object]  # Any: each tool's own Schema
    about: About
    answers: tuple[Endpoint, ...] = ()

    def definition(self, *, full: bool = True) -> types.Tool:
        """The tool as tools/list shows it: in the full set, or in the default (compact)
        one, with its brief description and compact input schema."""
        about = self.about
        if full:
            description, schema = about.description, input_schema(self.params, about.docs)
        else:
            docs = {path: words.BRIEF.get(text, text) for path, text in about.docs.items()}
            schema = input_schema(self.params, {**docs, **about.brief_docs})
            description = about.brief or about.description
            schema = compact_schema(without(schema, about.brief_omits))
        return types.Tool(
            name=self.name,
            title=about.title,
            description=_reflowed(description),
            input_schema=schema,
            output_schema=output_schema([self.endpoint, *self.answers]),
            annotations=about.hints.annotations(about.title),
        )


def whole(
    name: str,
    endpoint: Endpoint,
    params: type[Schema],
    about: About,
    into: str = "payload",
) -> Tool:
    """A tool whose arguments are, whole, the endpoint's `into` parameter: its body
    (payload) or its query."""
    return Tool(
        name=name,
        endpoint=endpoint,
        params=params,
        call=lambda request, args: endpoint(request, **{into: args}),
        about=about,
    )


def on_path(
    name: str,
    endpoint: Endpoint,
    params: type[Schema],
    about: About,
    *,
    path: str,
    body: Callable[[Any], Schema] | None = None,  # Any: the tool's arguments (Tool.call)
    query: type[Schema] | None = None,
) -> Tool:
    """A tool over a path with one parameter (`path`, the argument of that name), with the
    body `body(arguments)` builds, or the `query` schema's share of the arguments."""

    def call(request: ToolRequest, args: pydantic.BaseModel) -> object:
        given: dict[str, object] = {path: getattr(args, path)}
        if body is not None:
            given["payload"] = body(args)
        if query is not None:
            given["query"] = part(args, query)
        return endpoint(request, **given)

    return Tool(name=name, endpoint=endpoint, params=params, call=call, about=about)


def part(args: pydantic.BaseModel, schema: type[S]) -> S:
    """The API schema's share of a tool's composed arguments (already validated)."""
    return schema.model_validate({name: getattr(args, name) for name in schema.model_fields})


def _error(detail: object) -> types.CallToolResult:
    text = detail if isinstance(detail, str) else json.dumps(detail, cls=MicrosecondEncoder)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _success(body: dict) -> types.CallToolResult:
    text = json.dumps(body, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=body
    )


# A tool call's arguments, as the MCP SDK types them (CallToolRequestParams.arguments).
Arguments = dict[str, Any]  # Any: the SDK's own type for them


def _scoped(tool: Tool, request: ToolRequest, arguments: Arguments) -> dict[str, object]:
    """`arguments` within the key's scope, as the API's bearer auth has them: Forbidden
    for a write with a read-only key or for another user than a bound key's, whatever the
    model sent; the bound user where the tool takes a `user` and none was given."""
    if request.key_scope.unscoped:
        return arguments
    declares = frozenset(tool.params.model_fields)
    call = Call(
        endpoint=tool.endpoint,
        path={},
        query={},
        body=arguments,
        query_declares=frozenset(),
        body_declares=declares,
    )
    enforce(agent=request.auth, scope=request.key_scope, call=call)
    return with_user(request.key_scope, arguments, declares)


def run(
    tool: Tool, agent: Agent, arguments: Arguments | None, key_scope: KeyScope = UNSCOPED
) -> types.CallToolResult:
    """Call `tool` as `agent` within its key's scope: its API body on success, a tool error
    with the API's detail on any failure the API reports (an unexpected one is logged, as
    the API logs a 500)."""
    request = ToolRequest(auth=agent, key_scope=key_scope)
    try:
        # The API's body checks (NUL, surrogates, non-finite numbers) hold for tools too.
        check_parsed(arguments or {}, loc=[])
        scoped = _scoped(tool, request, dict(arguments or {}))
        args = tool.params.model_validate(scoped)
        result = tool.call(request, args)
        if isinstance(result, Answer):
            # Its outputSchema covers the endpoints in `answers` alone.
            assert result.endpoint in tool.answers, f"{tool.name}: undeclared answer"
            return _success(declared(result.endpoint).body(request, result.result))
        return _success(declared(tool.endpoint).body(request, result))
    except pydantic.ValidationError as exc:
        # The API's 422 detail; `loc` is relative to the tool's arguments.
        return _error(validation_detail(exc.errors()))
    except ApplicationError as exc:
        return _error(error_detail(exc))
    except HttpError as exc:
        return _error(str(exc))
    except Http404:
        return _error("not found")
    except Exception as exc:
        if is_vanished_reference(exc):
            # A write that lost a race with a delete: the API's retryable 409 detail.
            logger.warning("vanished reference in MCP tool %s: %s", tool.name, exc)
            return _error(LOST_RACE)
        logger.exception("unhandled error in MCP tool %s", tool.name)
        return _error("internal error")
