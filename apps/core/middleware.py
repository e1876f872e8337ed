"""Request edges no view handles: query strings the pages cannot use, and API answers
made before any API code runs (ninja's plain-text 405; the site's HTML 404 for a path no
URL pattern matches, such as one holding a newline, which no `<path:>` converter takes)."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

from apps.core.errors import BadRequest
from apps.core.validation import check_params, query_items

API_PREFIX = "/api/"
_API_DETAILS = {404: "not found", 405: "method not allowed"}


def reject_unstorable_params(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """A 400 page naming the parameter when a page's query string holds a NUL: PostgreSQL
    text cannot hold one. The JSON API checks its own parameters (memoryhub/api.py)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            try:
                check_params(query_items(request.GET), source="query")
            except BadRequest as exc:
                return HttpResponseBadRequest(
                    f"Bad request: {exc.message}", content_type="text/plain; charset=utf-8"
                )
        return get_response(request)

    return middleware


def api_errors_as_json(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """The API's non-JSON 404 and 405 in its JSON error shape (405 keeps its Allow)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        status = response.status_code
        if (
            status in _API_DETAILS
            and request.path.startswith(API_PREFIX)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            json_response = JsonResponse({"detail": _API_DETAILS[status]}, status=status)
            if "Allow" in response:
                json_response["Allow"] = response["Allow"]
            return json_response
        return response

    return middleware
