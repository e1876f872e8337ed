"""Each endpoint is written once: a resource method builds a `Call` (path values, query,
body, the answer's type), its decorator adds the HTTP method and path, and the client's
transport, sync or async, sends the resulting `Request`. Every decorated method is recorded in
OPERATIONS, so a test can check that every server operation has a client method."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload
from urllib.parse import quote

from pydantic import BaseModel, TypeAdapter, ValidationError

from memoryhub_client.errors import InvalidInput
from memoryhub_client.models.common import Page

if TYPE_CHECKING:
    from typing import Self

    import httpx

API_PREFIX = "/api/v1"
P = ParamSpec("P")
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

# (METHOD, OpenAPI path) -> the client method sending it, filled as the resource classes are
# defined: the schema-drift test checks it covers every operation the server serves.
OPERATIONS: dict[tuple[str, str], Operation[Any, Any]] = {}

_PARAM = re.compile(r"\{(\w+)(:path)?\}")
# The keyword `session=` of 2.1, renamed `session_id=` (the API's and MCP's name) in 2.2.0;
# it goes in 2.3.0.
SESSION_DEPRECATED = (
    "session= is deprecated: use session_id= (the API's name); session= goes in "
    "memoryhub-client 2.3.0"
)
IDEMPOTENT = frozenset({"GET", "PUT", "DELETE"})


class Sync:
    """Marks a resource bound to the blocking transport."""


class Async:
    """Marks a resource bound to the asyncio transport."""


M = TypeVar("M", Sync, Async)


class Bound(Generic[M]):
    """Something whose endpoint methods send through a transport: a resource or a hub."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport


@dataclass(frozen=True)
class Call(Generic[T_co]):
    """What one call sends, as its method builds it: path values, query parameters, a JSON
    body (a model, dumped without the fields the caller left unset) or raw bytes, the type
    the answer is read as (None: no body; bytes: the raw body), and `retry` to allow retries
    of a call whose method alone would not (an append with idempotency keys)."""

    answer: Any
    path: Mapping[str, str | int] = field(default_factory=dict)
    query: BaseModel | None = None
    body: BaseModel | bytes | None = None
    retry: bool = False


@dataclass(frozen=True)
class Request(Generic[T_co]):
    """A Call with its HTTP method and URL path filled in: what a transport sends."""

    method: str
    path: str
    params: dict[str, Any]
    json: Any
    content: bytes | None
    answer: Any
    retry: bool

    def read(self, response: httpx.Response) -> Any:
        """The answer's body as the declared type."""
        if self.answer is None:
            return None
        if self.answer is bytes:
            return response.content
        return _adapter(self.answer).validate_python(response.json())

    def with_cursor(self, cursor: str) -> Self:
        return dataclasses.replace(self, params={**self.params, "cursor": cursor})


@functools.cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def dump(model: BaseModel) -> dict[str, Any]:
    """A request model as JSON: only the fields the caller set (the server's defaults apply
    to the rest), by their server names."""
    return model.model_dump(mode="json", exclude_unset=True, by_alias=True)


def given(**values: Any) -> dict[str, Any]:
    """The keyword arguments the caller gave (not None): what a request model is built from."""
    return {name: value for name, value in values.items() if value is not None}


class Operation(Generic[P, T_co]):
    """A resource method bound to one HTTP method and path."""

    def __init__(
        self, method: str, template: str, build: Callable[Concatenate[Any, P], Call[Any]]
    ) -> None:
        self.method = method
        self.template = template
        self.build = build
        self.path = API_PREFIX + _PARAM.sub(r"{\1}", template)
        self.qualname = build.__qualname__
        self.takes_session_id = "session_id" in inspect.signature(build).parameters
        functools.update_wrapper(self, build)  # type: ignore[arg-type]

    def __set_name__(self, owner: type, name: str) -> None:
        self.qualname = f"{owner.__name__}.{name}"
        OPERATIONS[(self.method, self.path)] = self

    def request(self, owner: Any, *args: Any, **kwargs: Any) -> Request[Any]:
        """The Request this method's arguments make; InvalidInput (status None) for an
        argument its request model refuses, before anything is sent."""
        if self.takes_session_id and "session" in kwargs:
            # stacklevel 3: the caller of the bound method (send or iterate calls this).
            warnings.warn(SESSION_DEPRECATED, DeprecationWarning, stacklevel=3)
            if "session_id" in kwargs:
                raise TypeError(f"{self.qualname}() got both session= and session_id=")
            kwargs["session_id"] = kwargs.pop("session")
        try:
            call = self.build(owner, *args, **kwargs)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False, include_input=False)
            detail = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in errors]
            raise InvalidInput(None, detail, loc=["body", *detail[0]["loc"]]) from exc
        body = call.body
        return Request(
            method=self.method,
            path=API_PREFIX
            + _PARAM.sub(lambda m: _quote(call.path[m.group(1)], m.group(2)), self.template),
            params=dump(call.query) if call.query is not None else {},
            json=dump(body) if isinstance(body, BaseModel) else None,
            content=body if isinstance(body, bytes) else None,
            answer=call.answer,
            retry=call.retry or self.method in IDEMPOTENT,
        )


def _quote(value: str | int, path_converter: str | None) -> str:
    # A `{name:path}` parameter (entry names, history files) keeps its slashes.
    return quote(str(value), safe="/" if path_converter else "")


class Endpoint(Operation[P, T_co]):
    """A method whose call answers one value."""

    @overload
    def __get__(self, obj: None, owner: type) -> Self: ...
    @overload
    def __get__(self, obj: Bound[Sync], owner: type) -> Callable[P, T_co]: ...
    @overload
    def __get__(self, obj: Bound[Async], owner: type) -> Callable[P, Awaitable[T_co]]: ...
    def __get__(self, obj: Bound[Any] | None, owner: type) -> Any:
        if obj is None:
            return self

        @functools.wraps(self.build)
        def send(*args: Any, **kwargs: Any) -> Any:
            return obj._transport.send(self.request(obj, *args, **kwargs))

        return send


class Listing(Operation[P, T_co]):
    """A method whose call answers a page: it returns an iterator over every item of every
    page, following `next_cursor` (an async iterator on the async client)."""

    @overload
    def __get__(self, obj: None, owner: type) -> Self: ...
    @overload
    def __get__(self, obj: Bound[Sync], owner: type) -> Callable[P, Iterator[T_co]]: ...
    @overload
    def __get__(self, obj: Bound[Async], owner: type) -> Callable[P, AsyncIterator[T_co]]: ...
    def __get__(self, obj: Bound[Any] | None, owner: type) -> Any:
        if obj is None:
            return self

        @functools.wraps(self.build)
        def iterate(*args: Any, **kwargs: Any) -> Any:
            return obj._transport.iterate(self.request(obj, *args, **kwargs))

        return iterate


def _endpoint(
    method: str, template: str
) -> Callable[[Callable[Concatenate[Any, P], Call[T]]], Endpoint[P, T]]:
    def decorate(build: Callable[Concatenate[Any, P], Call[T]]) -> Endpoint[P, T]:
        return Endpoint(method, template, build)

    return decorate


def get(template: str) -> Callable[[Callable[Concatenate[Any, P], Call[T]]], Endpoint[P, T]]:
    return _endpoint("GET", template)


def post(template: str) -> Callable[[Callable[Concatenate[Any, P], Call[T]]], Endpoint[P, T]]:
    return _endpoint("POST", template)


def put(template: str) -> Callable[[Callable[Concatenate[Any, P], Call[T]]], Endpoint[P, T]]:
    return _endpoint("PUT", template)


def patch(template: str) -> Callable[[Callable[Concatenate[Any, P], Call[T]]], Endpoint[P, T]]:
    return _endpoint("PATCH", template)


def delete(template: str) -> Callable[[Callable[Concatenate[Any, P], Call[T]]], Endpoint[P, T]]:
    return _endpoint("DELETE", template)


def listing(
    template: str,
) -> Callable[[Callable[Concatenate[Any, P], Call[Page[T]]]], Listing[P, T]]:
    """A GET whose answer is a page ({items, next_cursor})."""

    def decorate(build: Callable[Concatenate[Any, P], Call[Page[T]]]) -> Listing[P, T]:
        return Listing("GET", template, build)

    return decorate
