"""Plain pages outside the agent API."""

import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)


def _run_check(path: str) -> tuple[str, dict, bool]:
    try:
        return import_string(path)()
    except Exception as exc:  # one broken check must not hide the others
        logger.warning("health check %s failed", path, exc_info=True)
        # Each check's key is its function's name without "_report" (database_report ->
        # "database"), so a check that raises still shows under its usual key.
        key = path.rsplit(".", 1)[-1].removesuffix("_report")
        return key, {"ok": False, "detail": f"{type(exc).__name__}: {exc}"}, False


def healthz(request: HttpRequest) -> JsonResponse:
    """Every check of MEMORYHUB_HEALTH_CHECKS (apps/core/health_checks.py). 503 ("down") only when a
    check named in MEMORYHUB_HEALTH_CRITICAL fails (the database); any other failure (broker,
    providers) answers 200 with status "degraded" and that check's `ok: false`."""
    body: dict = {}
    ok, down = True, False
    for path in settings.MEMORYHUB_HEALTH_CHECKS:
        key, report, passed = _run_check(path)
        body[key] = report
        ok = ok and passed
        down = down or (not passed and key in settings.MEMORYHUB_HEALTH_CRITICAL)
    status = "down" if down else "ok" if ok else "degraded"
    return JsonResponse({"status": status, **body}, status=503 if down else 200)


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico whatever a page links: a permanent redirect to the
    static icon (resolved per request, so it follows collectstatic's hashed name)."""
    return redirect(static("favicon.svg"), permanent=True)
