"""What each endpoint declares (its responses and its description), recorded as its router
registers it, so that in-process callers (the MCP tools) answer what the API answers without
reading django-ninja's internals; and the Django converters of its path parameters, which
their annotations carry (PathRest, PathInt) so that a path is declared as it is published."""

import inspect
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from types import SimpleNamespace
from typing import Annotated, Any, TypeVar, Union

import ninja
from ninja import Schema, Status
from ninja.schema import NinjaGenerateJsonSchema
from pydantic import TypeAdapter, create_model
from pydantic.json_schema import JsonSchemaValue

from apps.core.encoders import MicrosecondEncoder

# An endpoint: any view function, as ninja's Router takes one.
Endpoint = Callable[..., Any]  # Any: ninja types a view function Callable[..., Any]
# A body type as ninja's `response=` takes it: a Schema, a generic alias (list[FactOut]) or
# None (no body).
Kind = Any  # Any: ninja's response= is typed Any


def _response_model(kind: Kind) -> type[Schema] | None:
    """As ninja validates a result: a Schema with one `response` field, read from an object,
    so ORM rows, managers and resolvers behave as in an HTTP answer (None: no body)."""
    if kind is None:
        return None
    return create_model("Response", __base__=Schema, response=(kind, ...))


@dataclass(frozen=True)
class Declared:
    """An endpoint's responses by status (None: no body) and its description: the
    `description=` it was given, else its docstring, else its name (as ninja documents it)."""

    responses: dict[int, Kind]
    description: str

    @cached_property
    def _models(self) -> dict[int, type[Schema] | None]:
        return {status: _response_model(kind) for status, kind in self.responses.items()}

    def body(self, request: object, result: object) -> dict[str, object]:
        """`result` (what the endpoint returned) as the JSON body the API answers; an empty
        body (204) is {}."""
        status = next(iter(self.responses)) if len(self.responses) == 1 else 200
        if isinstance(result, Status):
            status, result = result.status_code, result.value
        model = self._models[status]
        if model is None:
            return {}
        context = {"request": request, "response_status": status}
        validated = model.model_validate(SimpleNamespace(response=result), context=context)
        body = validated.model_dump(context=context)["response"]
        return json.loads(json.dumps(body, cls=MicrosecondEncoder))

    @property
    def kinds(self) -> list[Kind]:
        """The distinct body types over the statuses, in order (None: no body, {})."""
        return list(dict.fromkeys(self.responses.values()))


# What body() answers for a status without a body.
_EMPTY_BODY: JsonSchemaValue = {"type": "object", "properties": {}, "additionalProperties": False}


def body_schema(kinds: Iterable[Kind]) -> JsonSchemaValue:
    """The JSON Schema of what body() answers for any of `kinds`: field names, serialization
    mode and ninja's generator, as body() dumps and the OpenAPI document describes them. An
    object at the root; several kinds are its `anyOf`."""
    distinct = list(dict.fromkeys(kinds))
    models = [kind for kind in distinct if kind is not None]
    options: list[JsonSchemaValue] = []
    defs: JsonSchemaValue = {}
    if models:
        # Any: a type or a Union of them, built at run time (typing's special form).
        union: Any = models[0] if len(models) == 1 else Union[tuple(models)]  # noqa: UP007
        schema = TypeAdapter(union).json_schema(
            by_alias=False, mode="serialization", schema_generator=NinjaGenerateJsonSchema
        )
        defs = schema.pop("$defs", {})
        options = schema.pop("anyOf") if len(models) > 1 else [schema]
    if None in distinct:
        options.append(_EMPTY_BODY)
    root = options[0] if len(options) == 1 else {"type": "object", "anyOf": options}
    return {**root, "$defs": defs} if defs else root


_DECLARED: dict[Endpoint, Declared] = {}


@dataclass(frozen=True)
class Access:
    """What an operation does, for a key's scope (apps/api/scopes.py): `write` (a
    read-only key may not call it), `agent_level` (a user-bound key may not call it: it
    changes or lists the agent's own state), `session_field` (a body field that names a
    session by key, as POST /sessions' `key`)."""

    write: bool
    agent_level: bool = False
    session_field: str | None = None


@dataclass(frozen=True)
class _Mark:
    read: bool
    agent_level: bool
    session_field: str | None


_ACCESS: dict[Endpoint, Access] = {}
_MARKED: dict[Endpoint, _Mark] = {}
F = TypeVar("F", bound=Endpoint)


def access(
    *, read: bool = False, agent_level: bool = False, session_field: str | None = None
) -> Callable[[F], F]:
    """Mark an endpoint (under its route decorator): `read` for a POST that only reads
    (a search, a recall), `agent_level`, `session_field` (see Access). Without it, GET
    is a read and every other method a write."""

    def mark(func: F) -> F:
        _MARKED[func] = _Mark(read=read, agent_level=agent_level, session_field=session_field)
        return func

    return mark


def access_of(endpoint: Endpoint) -> Access:
    """How `endpoint` is classified (KeyError for one no Router registered)."""
    return _ACCESS[endpoint]


@dataclass(frozen=True)
class Converter:
    """A path parameter's Django path converter, carried by its annotation: the declared
    path, as published, names the parameter alone (/users/{user}); the URL pattern Django
    resolves takes it through the converter (<path:user>)."""

    name: str


# The rest of the URL, '/' included: an entry's name (daily logs), an end user's name.
PathRest = Annotated[str, Converter("path")]
# Digits only: any other segment is no such URL (404), not an invalid value (422).
PathInt = Annotated[int, Converter("int")]

_PARAM = re.compile(r"\{(\w+)\}")


def with_converters(path: str, view_func: Endpoint) -> str:
    """`path` with each parameter whose annotation carries a Converter written as Django
    resolves it: `/users/{user}` with `user: PathRest` is `/users/{path:user}`."""
    parameters = inspect.signature(view_func).parameters

    def written(match: re.Match[str]) -> str:
        name = match.group(1)
        annotation = parameters[name].annotation if name in parameters else None
        for meta in getattr(annotation, "__metadata__", ()):
            if isinstance(meta, Converter):
                return f"{{{meta.name}:{name}}}"
        return match.group(0)

    return _PARAM.sub(written, path)


def _by_status(response: Kind) -> dict[int, Kind]:
    """ninja's `response=`: one type (200), or {status or statuses: type}."""
    if not isinstance(response, dict):
        return {200: response}
    found: dict[int, Kind] = {}
    for key, kind in response.items():
        for status in key if isinstance(key, Iterable) else [key]:
            found[status] = kind
    return found


class Router(ninja.Router):
    """ninja's Router that records what each endpoint declares as it is added, and gives
    each path parameter its annotation's converter (with_converters)."""

    def add_api_operation(
        self,
        path: str,
        methods: list[str],
        view_func: Endpoint,
        **options: Any,  # Any: ninja's own options (response, tags, summary...), typed each
    ) -> None:
        path = with_converters(path, view_func)
        if "response" in options:
            _DECLARED[view_func] = Declared(
                responses=_by_status(options["response"]),
                description=options.get("description")
                or inspect.cleandoc(view_func.__doc__ or "")
                or view_func.__name__.title().replace("_", " "),
            )
        marked = _MARKED.get(view_func, _Mark(read=False, agent_level=False, session_field=None))
        _ACCESS[view_func] = Access(
            write=any(m != "GET" for m in methods) and not marked.read,
            agent_level=marked.agent_level,
            session_field=marked.session_field,
        )
        super().add_api_operation(path, methods, view_func, **options)


def declared(endpoint: Endpoint) -> Declared:
    """What `endpoint` declares (KeyError for one no Router registered with a response)."""
    return _DECLARED[endpoint]
