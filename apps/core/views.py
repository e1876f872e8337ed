"""Plain pages outside the agent API."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.module_loading import import_string


def healthz(request: HttpRequest) -> JsonResponse:
    """200 when every critical check passes (database, broker), 503 otherwise; providers and
    the embedding backlog are reported (apps/core/health.py)."""
    body: dict = {}
    ok = True
    for path in settings.MEMORYHUB_HEALTH_CHECKS:
        key, report, passed = import_string(path)()
        body[key] = report
        ok = ok and passed
    return JsonResponse({"status": "ok" if ok else "degraded", **body}, status=200 if ok else 503)


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")
