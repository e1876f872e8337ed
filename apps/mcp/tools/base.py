"""A tool is an API endpoint called in-process: arguments parsed with the endpoint's own
schemas, the endpoint function called with the connection's agent, its return value
serialized through the endpoint's response schema, errors answered with the API's detail."""

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp_types as types
import pydantic
from django.http import Http404
from ninja import Schema, Status
from ninja.errors import HttpError
from ninja.operation import ResponseObject

from apps.agents.models import Agent
from apps.core.encoders import MicrosecondEncoder
from apps.core.errors import ApplicationError, error_detail
from apps.core.validation import check_parsed

logger = logging.getLogger(__name__)

S = TypeVar("S", bound=Schema)


@dataclass(frozen=True)
class ToolRequest:
    """What the endpoint functions read from a request: the authenticated agent."""

    auth: Agent


@dataclass(frozen=True)
class Answer:
    """A result from another endpoint than the tool's own (a tool over two endpoints)."""

    endpoint: Callable[..., Any]
    result: Any


@dataclass(frozen=True)
class Tool:
    """One MCP tool over one API endpoint. `call(request, args)` invokes the endpoint with
    the parsed arguments; its description is the endpoint's docstring unless given."""

    name: str
    endpoint: Callable[..., Any]
    params: type[Schema]
    call: Callable[[ToolRequest, Any], Any]
    description: str = ""

    def definition(self) -> types.Tool:
        operation = self.endpoint._ninja_operation  # type: ignore[attr-defined]
        text = self.description or operation.description or operation.summary
        schema = self.params.model_json_schema()
        return types.Tool(name=self.name, description=text.strip(), input_schema=schema)


def serialize(endpoint: Callable[..., Any], request: ToolRequest, result: Any) -> dict:
    """The endpoint's result as the JSON body the API answers, the way ninja builds it
    (ninja.operation.Operation._result_to_response); an empty body (204) becomes {}."""
    operation = endpoint._ninja_operation  # type: ignore[attr-defined]
    models = operation.response_models
    status = next(iter(models)) if len(models) == 1 else 200
    if isinstance(result, Status):
        status, result = result.status_code, result.value
    model = models[status]
    if model is None:
        return {}
    context = {"request": request, "response_status": status}
    validated = model.model_validate(ResponseObject(result), context=context)
    body = validated.model_dump(
        by_alias=operation.by_alias,
        exclude_unset=operation.exclude_unset,
        exclude_defaults=operation.exclude_defaults,
        exclude_none=operation.exclude_none,
        context=context,
    )["response"]
    return json.loads(json.dumps(body, cls=MicrosecondEncoder))


def part(args: pydantic.BaseModel, schema: type[S]) -> S:
    """The API schema's share of a tool's composed arguments (already validated)."""
    return schema.model_validate({name: getattr(args, name) for name in schema.model_fields})


def validation_detail(exc: pydantic.ValidationError) -> list[dict]:
    """The API's 422 detail shape; `loc` is relative to the tool's arguments."""
    return [
        {"loc": list(e.get("loc", [])), "msg": str(e.get("msg", "")), "type": e.get("type", "")}
        for e in exc.errors()
    ]


def _error(detail: object) -> types.CallToolResult:
    text = detail if isinstance(detail, str) else json.dumps(detail, cls=MicrosecondEncoder)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _success(body: dict) -> types.CallToolResult:
    text = json.dumps(body, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=body
    )


def run(tool: Tool, agent: Agent, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Call `tool` as `agent`: its API body on success, a tool error with the API's detail
    on any failure the API reports (an unexpected one is logged, as the API logs a 500)."""
    request = ToolRequest(auth=agent)
    try:
        # The API's body checks (NUL, surrogates, non-finite numbers) hold for tools too.
        check_parsed(arguments or {}, loc=[])
        args = tool.params.model_validate(arguments or {})
        result = tool.call(request, args)
        if isinstance(result, Answer):
            return _success(serialize(result.endpoint, request, result.result))
        return _success(serialize(tool.endpoint, request, result))
    except pydantic.ValidationError as exc:
        return _error(validation_detail(exc))
    except ApplicationError as exc:
        return _error(error_detail(exc))
    except HttpError as exc:
        return _error(str(exc))
    except Http404:
        return _error("not found")
    except Exception:
        logger.exception("unhandled error in MCP tool %s", tool.name)
        return _error("internal error")
