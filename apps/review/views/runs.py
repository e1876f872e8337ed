"""The agent's run log, one run, and retrying a run."""

import json

from celery.canvas import Signature
from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render

from apps.agents.services import snapshot
from apps.agents.users import EVERYONE
from apps.core.errors import InvalidInput, NotFound
from apps.core.unavailable import send_or_defer
from apps.lifecycle import tasks
from apps.lifecycle.models import Run, RunKind, RunStatus, Trigger
from apps.lifecycle.selectors import run_get
from apps.review.access import Access, agent_action, agent_list, agent_page
from apps.review.selectors import runs_listed
from apps.review.views.common import audit, user_filter

RUNS_PER_PAGE = 50
# The new run says a person asked for it (skipped runs are logged, saying why nothing happened).
RETRY_TRIGGER = Trigger.REVIEW
_SNAPSHOT = ["kind", "trigger", "status", "reason", "session_id", "session_key"]


def _run(access: Access, run_id: int) -> Run:
    try:
        return run_get(agent=access.agent, run_id=run_id, audience=EVERYONE)
    except NotFound as exc:
        raise Http404(exc.message) from exc


@agent_list
def run_list(request: HttpRequest, access: Access) -> HttpResponse:
    """The run log, newest first, filtered by ?kind=, ?status= and ?user= (one owner's:
    views.common.user_param), paged by ?cursor=."""
    kind = request.GET.get("kind", "")
    status = request.GET.get("status", "")
    cursor = request.GET.get("cursor") or None
    uf = user_filter(request, access)
    try:
        page = runs_listed(
            agent=access.agent,
            user=uf.value,
            kind=kind,
            status=status,
            cursor=cursor,
            limit=RUNS_PER_PAGE,
        )
    except InvalidInput as exc:
        return HttpResponseBadRequest(exc.message)
    context = {
        "access": access,
        "tab": "runs",
        "page": page,
        "uf": uf,
        "kind": kind,
        "status": status,
        "kinds": RunKind.choices,
        "statuses": RunStatus.choices,
    }
    return render(request, "review/runs.html", context)


def _detail(
    request: HttpRequest, access: Access, run: Run, *, error: str = "", status: int = 200
) -> HttpResponse:
    context = {
        "access": access,
        "tab": "runs",
        "run": run,
        "facts": list(run.facts.defer("embedding").order_by("id")),
        "details_json": json.dumps(run.details, indent=2, ensure_ascii=False, sort_keys=True),
        "retry_error": error,
    }
    return render(request, "review/run.html", context, status=status)


@agent_page
def run_detail(request: HttpRequest, access: Access, run_id: int) -> HttpResponse:
    """One run: what it processed, what it cost, the model's answer, details and facts."""
    return _detail(request, access, _run(access, run_id))


def retry_signature(run: Run) -> Signature:
    """The lifecycle task that does the run's work again: for its session, or for its
    agent (MEMORY.md compression has no session)."""
    if run.kind == RunKind.COMPRESS:
        return tasks.compress_task.si(run.agent_id, RETRY_TRIGGER)
    session_id = str(run.session_id)
    if run.kind == RunKind.SUMMARY:
        return tasks.summarize_task.si(session_id, RETRY_TRIGGER)
    if run.kind == RunKind.CONSOLIDATE:
        return tasks.consolidate_task.si(session_id, RETRY_TRIGGER)
    if run.kind == RunKind.COMPACT:
        return tasks.compact_task.si(session_id, RETRY_TRIGGER)
    # flush and extract: get_context's background flush stores the window's facts again.
    return tasks.context_task.si(session_id, "flush", RETRY_TRIGGER)


@agent_action
def run_retry(request: HttpRequest, access: Access, run_id: int) -> HttpResponse:
    """Enqueue the run's task again for its session (after commit), record the audit event
    and go back to the run log; 409 on the run's page when its session was removed."""
    run = _run(access, run_id)
    if run.session_id is None and run.kind != RunKind.COMPRESS:
        error = "This run's session was removed: there is nothing to run again."
        return _detail(request, access, run, error=error, status=409)
    signature = retry_signature(run)
    with transaction.atomic():
        audit(
            request,
            access,
            action="run.retry",
            target=run,
            before=snapshot(run, _SNAPSHOT),
            after={
                "task": signature.task,
                "session_id": str(run.session_id) if run.session_id else None,
            },
        )
    # Sent after the commit, so the task sees the audit; a broker that is down is a message
    # to the person, not a server error (retries have no sweep to pick them up later).
    if send_or_defer(signature.delay, what=f"retry of run {run.pk}"):
        messages.success(request, f"Retry of run #{run.pk} ({run.kind}) queued.")
    else:
        messages.error(request, "The task queue cannot be reached; the retry was not queued.")
    return redirect("review:runs", access.agent.slug)
