"""The agents' JSON API: one NinjaAPI, a router per URL resource, key auth, errors as JSON."""

import functools
import inspect
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from types import MethodType
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import IntegrityError, InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from ninja import Router
from ninja.errors import AuthenticationError, HttpError, Throttled, ValidationError
from ninja.operation import Operation
from ninja.parser import Parser
from ninja.renderers import JSONRenderer
from ninja.security import HttpBearer

from apps.agents.keyscope import KeyScope
from apps.agents.models import Agent
from apps.agents.throttle import api_key_authenticate
from apps.api.registry import Endpoint
from apps.api.scopes import Call, enforce, with_user
from apps.core.encoders import MicrosecondEncoder
from apps.core.errors import (
    ApplicationError,
    BadRequest,
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    error_detail,
    validation_detail,
)
from apps.core.races import integrity_error
from apps.core.throttle import RateLimited, client_address
from apps.core.unavailable import database_unavailable
from apps.core.validation import check_params, parse_json_body, query_items
from memoryhub.openapi import DocumentedNinjaAPI

logger = logging.getLogger(__name__)


class ApiKeyAuth(HttpBearer):
    """`Authorization: Bearer <key>`; request.auth becomes the key's Agent and
    request.key_scope its KeyScope, which is enforced here, before the input is parsed
    (apps/api/scopes.py: a 403). Too many wrong keys from one address, or a key over its
    rate, answer 429 with Retry-After (apps/agents/throttle.py)."""

    def authenticate(self, request: HttpRequest, token: str) -> Agent | None:
        try:
            api_key = api_key_authenticate(raw=token, address=client_address(request))
        except RateLimited as exc:
            throttled = Throttled(wait=exc.retry_after)
            throttled.message = exc.message  # the 429 body's detail
            raise throttled from exc
        if api_key is None:
            return None
        request.key_scope = api_key.scope  # type: ignore[attr-defined]
        if not api_key.scope.unscoped:
            _enforce_scope(request, api_key.agent, api_key.scope)
        return api_key.agent


@dataclass(frozen=True)
class _Operation:
    """What scoped_call records for the auth: the endpoint, its path parameters and the
    names its query and body declare."""

    endpoint: Endpoint
    path: dict[str, str | int]  # as Django's path converters give them
    query_declares: frozenset[str]
    body_declares: frozenset[str]


def _declared(operation: Operation, source: str) -> frozenset[str]:
    """The names an operation's query (flattened) or body (its schema's fields) declares."""
    names: set[str] = set()
    for model in operation.models:
        if model.__ninja_param_source__ != source:
            continue
        if source == "query":
            names |= set(model.__ninja_flatten_map__)
        for field in model.model_fields.values():
            if source == "body" and isinstance(field.annotation, type):
                names |= set(getattr(field.annotation, "model_fields", {}))
    return frozenset(names)


def _json_object(request: HttpRequest) -> dict[str, object]:
    """The body's top level when it is a JSON object, else {} (the parser answers a bad one)."""
    if request.method in ("GET", "HEAD") or not request.body:
        return {}
    try:
        body = parse_json_body(request.body)
    except ApplicationError:
        return {}
    return body if isinstance(body, dict) else {}


def _enforce_scope(request: HttpRequest, agent: Agent, scope: KeyScope) -> None:
    """Forbidden unless the scope allows the call; then the bound user into the query
    where it is declared and not given (the body's: CheckedParser)."""
    operation: _Operation = request.scoped_operation  # type: ignore[attr-defined]
    for name, values in request.GET.lists():
        if len(set(values)) > 1:
            # The check reads one value of each; the endpoint must not read another.
            raise Forbidden(f"a scoped key gives each query parameter once: '{name}' differs")
    call = Call(
        endpoint=operation.endpoint,
        path=operation.path,
        query={name: str(value) for name, value in request.GET.items()},
        body=_json_object(request),
        query_declares=operation.query_declares,
        body_declares=operation.body_declares,
    )
    enforce(agent=agent, scope=scope, call=call)
    query = with_user(scope, call.query, operation.query_declares)
    if query != call.query:
        scoped = request.GET.copy()
        scoped.update({"user": query["user"]})
        request.GET = scoped  # type: ignore[assignment]
    request.scoped_body_declares = operation.body_declares  # type: ignore[attr-defined]


class Renderer(JSONRenderer):
    encoder_class = MicrosecondEncoder


class CheckedParser(Parser):
    """JSON bodies through apps/core/validation.py: no NUL, lone surrogate, NaN, Infinity
    or out-of-range number reaches a schema, whatever the depth."""

    def parse_body(self, request: HttpRequest) -> dict:
        # ninja wraps any error raised here in HttpError(400); http_error unwraps ours.
        body = parse_json_body(request.body)
        declares = getattr(request, "scoped_body_declares", None)
        if declares and isinstance(body, dict):
            # A user-bound key naming no user names its own (ApiKeyAuth checked the rest).
            body = with_user(request.key_scope, body, declares)  # type: ignore[attr-defined]
        return body


api = DocumentedNinjaAPI(  # error responses declared: memoryhub/openapi.py
    renderer=Renderer(),
    title="memoryhub",
    # The contract's version (issue 39's safe reads made it 2); the URL's /api/v1/ names
    # the URL scheme and stays (docs/architecture.md).
    version="2",
    description="Durable memory for LLM agents.",
    auth=ApiKeyAuth(),
    urls_namespace="api",
    docs_url="/docs",
    parser=CheckedParser(),
)

STATUS = {
    BadRequest: 400,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    InvalidInput: 422,
    PayloadTooLarge: 413,
}


# ninja's Operation.run, which the decorators below wrap: the request and the path's
# parameters (as Django's converters give them) in, the response out.
Run = Callable[..., HttpResponseBase]


def checked_params(run: Run) -> Run:
    """Every operation refuses a query or path parameter holding NUL or a lone surrogate
    with 400 naming it, before the view or the database sees it."""

    @functools.wraps(run)
    def wrapper(
        request: HttpRequest,
        *args: Any,  # Any: ninja's Operation.run takes the path's values as **kw: Any
        **kwargs: Any,
    ) -> HttpResponseBase:
        try:
            check_params(query_items(request.GET), source="query")
            check_params(kwargs.items(), source="path")
        except BadRequest as exc:
            return api.on_exception(request, exc)
        return run(request, *args, **kwargs)

    return wrapper


def scoped_call(run: Run) -> Run:
    """Record the operation and its path parameters on the request, for ApiKeyAuth to
    enforce the key's scope on (auth runs inside `run`, before parsing)."""
    bound = inspect.unwrap(run)
    assert isinstance(bound, MethodType)  # add_decorator(mode="view") wraps Operation.run
    operation = bound.__self__
    assert isinstance(operation, Operation)
    query_declares = _declared(operation, "query")
    body_declares = _declared(operation, "body")

    @functools.wraps(run)
    def wrapper(
        request: HttpRequest,
        *args: Any,  # Any: ninja's Operation.run takes the path's values as **kw: Any
        **kwargs: Any,
    ) -> HttpResponseBase:
        request.scoped_operation = _Operation(  # type: ignore[attr-defined]
            endpoint=operation.view_func,
            path=kwargs,
            query_declares=query_declares,
            body_declares=body_declares,
        )
        return run(request, *args, **kwargs)

    return wrapper


api.add_decorator(checked_params, mode="view")  # wraps Operation.run: before parsing
api.add_decorator(scoped_call, mode="view")


@api.exception_handler(ApplicationError)
def application_error(request: HttpRequest, exc: ApplicationError) -> HttpResponse:
    body: dict[str, object] = {"detail": error_detail(exc)}
    if exc.loc and isinstance(exc, (PayloadTooLarge, Conflict)):
        body["loc"] = exc.loc
    return api.create_response(request, body, status=STATUS.get(type(exc), 400))


@api.exception_handler(RequestDataTooBig)
def too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return api.create_response(
        request, {"detail": f"request body is over {limit} bytes"}, status=413
    )


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = api.create_response(
        request, {"detail": "missing, malformed or revoked API key"}, status=401
    )
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return api.create_response(request, {"detail": "not found"}, status=404)


@api.exception_handler(ValidationError)
def invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = validation_detail(exc.errors)
    if all(e["loc"] == ["query", "cursor"] for e in errors):
        # A cursor is opaque: one the schema cannot even read is as bad as a forged one.
        return api.create_response(request, {"detail": errors}, status=400)
    too_large = [e for e in errors if e["type"] == "json_too_large"]
    if too_large:
        # A free-form JSON field over its size bound (apps/core/fields.py): 413, like any
        # other value over a size limit.
        body = {"detail": too_large[0]["msg"], "loc": too_large[0]["loc"]}
        return api.create_response(request, body, status=413)
    return api.create_response(request, {"detail": errors}, status=422)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    if isinstance(exc.__cause__, ApplicationError):
        # ninja wraps the body parser's errors (CheckedParser); answer the real one.
        return application_error(request, exc.__cause__)
    response = api.create_response(request, {"detail": str(exc)}, status=exc.status_code)
    if isinstance(exc, Throttled) and exc.wait is not None:
        # ninja sets Retry-After only for its own throttles; ours raise Throttled themselves.
        response["Retry-After"] = str(max(1, math.ceil(exc.wait)))  # RFC 9110 delta-seconds
    return response


@api.exception_handler(Exception)
def unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.exception("unhandled error on %s %s", request.method, request.path)
    return api.create_response(request, {"detail": "internal error"}, status=500)


# A write whose referenced row another request removed meanwhile: 409 (apps/core/races.py).
api.add_exception_handler(IntegrityError, integrity_error)  # type: ignore[arg-type]

# A database that is down answers 503 + Retry-After (apps/core/unavailable.py).
for _db_error in (OperationalError, InterfaceError):
    # ninja types a handler's argument as "the exception or its class"; it is the exception.
    api.add_exception_handler(_db_error, database_unavailable)  # type: ignore[arg-type]

# One module per URL's first segment, each with its router; each declares its full paths, so
# grepping a URL finds its endpoint (docs/architecture.md has the table).
SEGMENTS = (
    "agent", "context", "entries", "errors", "facts", "learnings", "memory", "runs", "search",
    "sessions", "team", "users", "workspace",
)  # fmt: skip
for _segment in SEGMENTS:
    api.add_router("/", f"apps.api.{_segment}.router")

# Last, so it only catches what no router matched: an unknown /api/v1 path answers JSON.
fallback = Router(auth=None)


_ANY_METHOD = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


@fallback.api_operation(_ANY_METHOD, "/{path:path}", include_in_schema=False)
def unknown_path(request: HttpRequest, path: str) -> HttpResponse:
    raise NotFound("not found")


@fallback.api_operation(_ANY_METHOD, "/", include_in_schema=False)
def api_root(request: HttpRequest) -> HttpResponse:
    raise NotFound("not found")


api.add_router("/", fallback)
