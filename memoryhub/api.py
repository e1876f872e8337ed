"""The agents' JSON API: one NinjaAPI, a router per app, key auth, errors as JSON."""

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.renderers import JSONRenderer
from ninja.security import HttpBearer

from apps.agents.models import Agent
from apps.agents.selectors import api_key_lookup
from apps.agents.services import api_key_touch
from apps.core.encoders import MicrosecondEncoder
from apps.core.errors import (
    ApplicationError,
    Conflict,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    error_detail,
)

logger = logging.getLogger(__name__)


class ApiKeyAuth(HttpBearer):
    """`Authorization: Bearer <key>`; request.auth becomes the key's Agent."""

    def authenticate(self, request: HttpRequest, token: str) -> Agent | None:
        api_key = api_key_lookup(raw=token)
        if api_key is None:
            return None
        api_key_touch(api_key=api_key, every_seconds=settings.MEMORYHUB_KEY_TOUCH_SECONDS)
        return api_key.agent


class Renderer(JSONRenderer):
    encoder_class = MicrosecondEncoder


api = NinjaAPI(
    renderer=Renderer(),
    title="memoryhub",
    version="1",
    description="Durable memory for LLM agents.",
    auth=ApiKeyAuth(),
    urls_namespace="api",
    docs_url="/docs",
)

STATUS = {NotFound: 404, Conflict: 409, InvalidInput: 422, PayloadTooLarge: 413}


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
    # Pydantic's ctx may hold exception objects; keep only what serialises.
    errors = [
        {"loc": list(e.get("loc", [])), "msg": str(e.get("msg", "")), "type": e.get("type", "")}
        for e in exc.errors
    ]
    return api.create_response(request, {"detail": errors}, status=422)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)


@api.exception_handler(Exception)
def unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.exception("unhandled error on %s %s", request.method, request.path)
    return api.create_response(request, {"detail": "internal error"}, status=500)


api.add_router("/", "apps.agents.api.router")
api.add_router("/", "apps.conversations.api.router")
api.add_router("/", "apps.conversations.api.search_router")
api.add_router("/", "apps.search.api.router")
api.add_router("/", "apps.facts.api.router")
api.add_router("/", "apps.entries.api.router")
api.add_router("/", "apps.lifecycle.api.router")
api.add_router("/", "apps.memory.api.router")
api.add_router("/", "apps.memory.api.sessions_router")
api.add_router("/", "apps.memory.learnings_api.router")
