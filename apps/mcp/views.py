"""POST /mcp: the MCP endpoint, authenticated with the agent's API key like /api/v1."""

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


def _unauthorized() -> HttpResponse:
    response = JsonResponse({"detail": "Unauthorized"}, status=401)
    response["WWW-Authenticate"] = "Bearer"
    return response


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
        agent = api_key_authenticate(raw=token, address=client_address(request)) if token else None
    except RateLimited as exc:
        response = JsonResponse({"detail": exc.message}, status=429)
        response["Retry-After"] = str(exc.retry_after)
        return response
    if agent is None:
        return _unauthorized()
    try:
        body = request.body
    except RequestDataTooBig:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return JsonResponse({"detail": f"request body is over {limit} bytes"}, status=413)
    exchange = serve_http(agent, asgi_scope(request), body)
    response = HttpResponse(bytes(exchange.body), status=exchange.status)
    for name, value in exchange.headers:
        if name.lower() not in _SKIPPED_HEADERS:
            response[name] = value
    return response
