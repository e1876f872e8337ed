"""Plain pages outside the agent API."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from apps.core.health import check_broker, check_database
from apps.providers.health import provider_status


def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database and broker answer, 503 otherwise; providers are reported."""
    checks = [check_database(), check_broker()]
    providers = provider_status()
    ok = all(c.ok for c in checks)
    body = {
        "status": "ok" if ok else "degraded",
        **{c.name: {"ok": c.ok, "detail": c.detail} for c in checks},
        "providers": {name: {"ok": p.ok, "detail": p.detail} for name, p in providers.items()},
    }
    return JsonResponse(body, status=200 if ok else 503)


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")
