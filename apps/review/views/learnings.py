"""Learnings (active, pending, archived) and live error memory; editors edit a learning,
record an error's outcome, strategy and resolution, extend its life by the TTL or expire it
now (error_record_expire: no longer served, deleted by the next errors_expire sweep)."""

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from django.contrib import messages
from django.db import transaction
from django.db.models import Model, TextChoices
from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from apps.agents.services import snapshot
from apps.agents.users import AGENT, AGENT_ONLY, EVERYONE, Audience
from apps.learnings.models import ErrorRecord, LearningKind, LearningStatus, Outcome
from apps.learnings.selectors import error_get, errors_page, learning_get, learnings_shown
from apps.learnings.services import (
    error_record_expire,
    error_record_update,
    errors_extend,
    learning_update,
)
from apps.review.access import Access, agent_action, agent_form, agent_list
from apps.review.forms import ErrorRecordForm, LearningForm
from apps.review.selectors import learnings_listed
from apps.review.views.common import audit, edit_form, filtered_page, or_404, user_filter

LEARNING_FIELDS = ["kind", "content", "status", "source"]
ERROR_FIELDS = ["tool_name", "outcome", "strategy", "resolution", "expires_at"]
ROWS = 500  # each list shows the newest this many


def _choice(value: str, choices: type[TextChoices]) -> str:
    """A filter value if it is one of `choices`, else "" (no filter)."""
    return value if value in choices.values else ""


@agent_list
def learning_list(request: HttpRequest, access: Access) -> HttpResponse:
    """Learnings and live error records by status, kind, outcome and `q`; `?user=` keeps
    one owner's learnings. Error memory is the agent's (issue 26), de-identified (issue 39):
    filtered to a user, that user's own failures show their raw text."""
    status = _choice(request.GET.get("status", ""), LearningStatus)
    kind = _choice(request.GET.get("kind", ""), LearningKind)
    outcome = _choice(request.GET.get("outcome", ""), Outcome)
    q = request.GET.get("q", "")[:200]
    uf = user_filter(request, access)
    learnings = learnings_listed(
        agent=access.agent, user=uf.value, kind=kind, status=status, q=q, limit=ROWS
    )
    audience = Audience(uf.value or AGENT)  # a user's raw text for that user's filter only
    learnings = learnings_shown(learnings, audience)
    first = partial(errors_page, tool_name=None, cursor=None, limit=ROWS)  # every tool's
    errors = first(agent=access.agent, audience=audience, outcome=outcome, q=q).items
    rows = {
        "learnings": learnings,
        "errors": errors,
        "filters": {"status": status, "kind": kind, "outcome": outcome, "q": q},
        "statuses": LearningStatus.values,
        "kinds": LearningKind.values,
        "outcomes": Outcome.values,
    }
    return filtered_page(request, access, uf, tab="learnings", rows=rows)


@dataclass(frozen=True)
class _Editing:
    """What an edit page of a learning or an error record needs besides the row."""

    name: str  # review/<name>_edit.html; audited as "<name>.update"
    noun: str  # in the note after saving
    variable: str  # the row's name in the template
    fields: list[str]  # audited
    form: type[Form]


LEARNING = _Editing("learning", "Learning", "learning", LEARNING_FIELDS, LearningForm)
ERROR = _Editing("error", "Error record", "record", ERROR_FIELDS, ErrorRecordForm)


def _edit(
    request: HttpRequest,
    access: Access,
    page: _Editing,
    row: Model,
    *,
    initial: dict,
    update: Callable,
) -> HttpResponse:
    """The edit form of `row`: the change, `update(**data)`, and its audit commit together
    (no provider call), then back to the list."""

    def save(data: dict) -> HttpResponse:
        before = snapshot(row, page.fields)
        with transaction.atomic():
            updated = update(**data)
            after = snapshot(updated, page.fields)
            audit(
                request,
                access,
                action=f"{page.name}.update",
                target=updated,
                before=before,
                after=after,
            )
        messages.success(request, f"{page.noun} #{updated.pk} saved.")
        return redirect("review:learnings", access.agent.slug)

    return edit_form(
        request,
        access,
        form=page.form(request.POST or None, initial=initial),
        tab="learnings",
        template=f"review/{page.name}_edit.html",
        context={page.variable: row},
        save=save,
    )


@agent_form
def learning_edit(request: HttpRequest, access: Access, learning_id: int) -> HttpResponse:
    # the shared row (every audience, no one's raw text): what an edit changes
    learning = or_404(learning_get, agent=access.agent, learning_id=learning_id, audience=EVERYONE)
    initial = {"content": learning.content, "kind": learning.kind, "status": learning.status}
    update = partial(learning_update, learning=learning)
    return _edit(request, access, LEARNING, learning, initial=initial, update=update)


def _error(access: Access, error_id: int) -> ErrorRecord:
    return or_404(error_get, agent=access.agent, error_id=error_id, audience=AGENT_ONLY)


@agent_form
def error_edit(request: HttpRequest, access: Access, error_id: int) -> HttpResponse:
    record = _error(access, error_id)
    initial = {
        "outcome": record.outcome,
        "strategy": record.strategy,
        "resolution": record.resolution,
    }
    update = partial(error_record_update, record=record)
    return _edit(request, access, ERROR, record, initial=initial, update=update)


@agent_action
def error_extend(request: HttpRequest, access: Access, error_id: int) -> HttpResponse:
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
def error_expire(request: HttpRequest, access: Access, error_id: int) -> HttpResponse:
    record = _error(access, error_id)
    before = snapshot(record, ERROR_FIELDS)
    with transaction.atomic():
        record = error_record_expire(record=record)
        after = snapshot(record, ERROR_FIELDS)
        audit(request, access, action="error.expire", target=record, before=before, after=after)
    messages.success(request, f"Error record #{record.pk} expired.")
    return redirect("review:learnings", access.agent.slug)
