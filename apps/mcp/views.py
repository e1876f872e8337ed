"""POST /mcp: the MCP endpoint, authenticated with the agent's API key like /api/v1; and the
OAuth discovery and flow paths an MCP client may try after a 401, which memoryhub does not
serve (docs/mcp.md, "Authentication")."""

import mcp_types as types
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from apps.agents.throttle import api_key_authenticate
from apps.core.throttle import RateLimited, client_address
from apps.mcp.auth import bearer_token
from apps.mcp.transport import asgi_scope, serve_http

# Computed by the WSGI server from the body Django sends.
_SKIPPED_HEADERS = {"content-length"}


NO_OAUTH = (
    "memoryhub does not use OAuth: send the agent's API key as 'Authorization: Bearer mh_...'"
)


def _unauthorized(presented: bool) -> HttpResponse:
    """401 with RFC 6750's Bearer challenge and no `resource_metadata`: a key is not an OAuth
    token and there is no authorization server to discover. The body is a JSON-RPC error, as
    the MCP SDKs read a failed POST's body, so a client shows why it was refused."""
    if presented:
        message = "Unauthorized: the API key is unknown, malformed or revoked. " + NO_OAUTH
        challenge = (
            'Bearer realm="memoryhub", error="invalid_token", '
            'error_description="The API key is unknown, malformed or revoked"'
        )
    else:
        message = "Unauthorized: an API key is required. " + NO_OAUTH
        challenge = 'Bearer realm="memoryhub"'  # no credentials: no error code (RFC 6750 3.1)
    error = {"code": types.INVALID_REQUEST, "message": message}
    response = JsonResponse({"jsonrpc": "2.0", "id": None, "error": error}, status=401)
    response["WWW-Authenticate"] = challenge
    return response


@csrf_exempt
def no_oauth(request: HttpRequest) -> JsonResponse:
    """404 for the OAuth documents and endpoints a client probes after a 401 (protected
    resource and authorization server metadata, registration, authorization, token): not a
    page, not a redirect to a login, and words that say what to send instead."""
    return JsonResponse({"detail": NO_OAUTH}, status=404)


def wants_every_tool(request: HttpRequest) -> bool:
    """`?tools=all` on the MCP URL, or the header `X-MemoryHub-Tools: all`: tools/list
    answers every tool in full rather than the default set (docs/mcp.md, "Two tool sets")."""
    asked = request.GET.get("tools") or request.headers.get("X-MemoryHub-Tools", "")
    return asked.strip().lower() == "all"


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    """Streamable HTTP, stateless with JSON responses; 401 before any MCP for a bad key, 429
    (with Retry-After) once the address has failed too often or the key is over its rate."""
    if request.method != "POST":
        # Stateless: no server-to-client stream (GET) and no session to end (DELETE); the
        # SDK would hold a GET open until the client leaves, tying up a server thread.
        response: HttpResponse = JsonResponse(
            {"detail": "method not allowed: POST only"}, status=405
        )
        response["Allow"] = "POST"
        return response
    token = bearer_token(request.headers.get("Authorization", ""))
    try:
        # Wrong keys count against the address exactly as on /api/v1 (one shared limit).
        api_key = (
            api_key_authenticate(raw=token, address=client_address(request)) if token else None
        )
    except RateLimited as exc:
        response = JsonResponse({"detail": exc.message}, status=429)
        response["Retry-After"] = str(exc.retry_after)
        return response
    if api_key is None:
        return _unauthorized(presented=token is not None)
    try:
        body = request.body
    except RequestDataTooBig:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return JsonResponse({"detail": f"request body is over {limit} bytes"}, status=413)
    exchange = serve_http(
        api_key.agent,
        asgi_scope(request),
        body,
        key_scope=api_key.scope,
        every_tool=wants_every_tool(request),
    )
    response = HttpResponse(bytes(exchange.body), status=exchange.status)
    for name, value in exchange.headers:
        if name.lower() not in _SKIPPED_HEADERS:
            response[name] = value
    return response
