"""Learnings (active, pending, archived) and live error memory; editors edit a learning,
record an error's outcome, strategy and resolution, extend its life by the TTL or expire it
now (error_record_expire: no longer served, deleted by the next errors_expire sweep)."""

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render

from apps.agents.services import snapshot
from apps.learnings.models import ErrorRecord, LearningKind, LearningStatus, Outcome
from apps.learnings.services import (
    error_record_expire,
    error_record_update,
    errors_extend,
    learning_update,
)
from apps.review import curation
from apps.review.access import Access, agent_action, agent_form, agent_page
from apps.review.forms import ErrorRecordForm, LearningForm
from apps.review.views.common import audit, edit_form

LEARNING_FIELDS = ["kind", "content", "status", "source"]
ERROR_FIELDS = ["tool_name", "outcome", "strategy", "resolution", "expires_at"]


def _choice(value: str, choices) -> str:
    """A filter value if it is one of `choices`, else "" (no filter)."""
    return value if value in choices.values else ""


@agent_page
def learning_list(request, access: Access):
    status = _choice(request.GET.get("status", ""), LearningStatus)
    kind = _choice(request.GET.get("kind", ""), LearningKind)
    outcome = _choice(request.GET.get("outcome", ""), Outcome)
    q = request.GET.get("q", "")[:200]
    context = {
        "access": access,
        "tab": "learnings",
        "learnings": curation.learnings_list(agent=access.agent, status=status, kind=kind, q=q),
        "errors": curation.errors_list(agent=access.agent, outcome=outcome, q=q),
        "filters": {"status": status, "kind": kind, "outcome": outcome, "q": q},
        "statuses": LearningStatus.values,
        "kinds": LearningKind.values,
        "outcomes": Outcome.values,
    }
    return render(request, "review/learnings.html", context)


@agent_form
def learning_edit(request, access: Access, learning_id: int):
    learning = curation.learning_page_get(agent=access.agent, learning_id=learning_id)
    if learning is None:
        raise Http404("learning not found")
    initial = {"content": learning.content, "kind": learning.kind, "status": learning.status}

    def save(data: dict) -> HttpResponse:
        before = snapshot(learning, LEARNING_FIELDS)
        with transaction.atomic():  # no provider call: change and audit together
            updated = learning_update(learning=learning, **data)
            after = snapshot(updated, LEARNING_FIELDS)
            audit(
                request,
                access,
                action="learning.update",
                target=updated,
                before=before,
                after=after,
            )
        messages.success(request, f"Learning #{updated.pk} saved.")
        return redirect("review:learnings", access.agent.slug)

    return edit_form(
        request,
        access,
        form=LearningForm(request.POST or None, initial=initial),
        tab="learnings",
        template="review/learning_edit.html",
        context={"learning": learning},
        save=save,
    )


def _error(access: Access, error_id: int) -> ErrorRecord:
    record = curation.error_page_get(agent=access.agent, error_id=error_id)
    if record is None:
        raise Http404("error record not found")
    return record


@agent_form
def error_edit(request, access: Access, error_id: int):
    record = _error(access, error_id)
    initial = {
        "outcome": record.outcome,
        "strategy": record.strategy,
        "resolution": record.resolution,
    }

    def save(data: dict) -> HttpResponse:
        before = snapshot(record, ERROR_FIELDS)
        with transaction.atomic():  # no provider call: change and audit together
            updated = error_record_update(record=record, **data)
            after = snapshot(updated, ERROR_FIELDS)
            audit(
                request, access, action="error.update", target=updated, before=before, after=after
            )
        messages.success(request, f"Error record #{updated.pk} saved.")
        return redirect("review:learnings", access.agent.slug)

    return edit_form(
        request,
        access,
        form=ErrorRecordForm(request.POST or None, initial=initial),
        tab="learnings",
        template="review/error_edit.html",
        context={"record": record},
        save=save,
    )


@agent_action
def error_extend(request, access: Access, error_id: int):
    record = _error(access, error_id)
    before = snapshot(record, ERROR_FIELDS)
    with transaction.atomic():
        errors_extend(records=[record])
        record.refresh_from_db(fields=["expires_at"])
        after = snapshot(record, ERROR_FIELDS)
        audit(request, access, action="error.extend", target=record, before=before, after=after)
    messages.success(
        request, f"Error record #{record.pk} now lives until {record.expires_at:%Y-%m-%d}."
    )
    return redirect("review:learnings", access.agent.slug)


@agent_action
def error_expire(request, access: Access, error_id: int):
    record = _error(access, error_id)
    before = snapshot(record, ERROR_FIELDS)
    with transaction.atomic():
        record = error_record_expire(record=record)
        after = snapshot(record, ERROR_FIELDS)
        audit(request, access, action="error.expire", target=record, before=before, after=after)
    messages.success(request, f"Error record #{record.pk} expired.")
    return redirect("review:learnings", access.agent.slug)
