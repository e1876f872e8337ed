"""The review queue: facts waiting as pending (the agent's fact_review setting), oldest
first. Editors approve, edit then approve, reject or merge into an approved fact.

With htmx each action works in the fact's row, and every answer carries the page's
counter out of band (partials/queue_counts.html, from fact_counts as the full page), so the
counts follow each action without a reload."""

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django_htmx.middleware import HtmxDetails

from apps.agents.users import EVERYONE
from apps.core.errors import ApplicationError, Conflict, InvalidInput, NotFound
from apps.facts.models import Fact, FactStatus
from apps.facts.selectors import fact_counts, fact_get, facts_merge_candidates, facts_pending
from apps.facts.services import fact_reject, fact_review_approve, fact_review_merge
from apps.review.access import Access, agent_action, agent_form, agent_list
from apps.review.forms import MergeForm, MergeSearchForm
from apps.review.views.common import audit, changed_by, error_status, refused
from apps.review.views.facts import fact_form, fact_initial, fact_snapshot, get_fact


class HtmxRequest(HttpRequest):
    """A request through django-htmx's middleware (settings.MIDDLEWARE): `htmx` is set."""

    htmx: HtmxDetails


NOT_PENDING = "The fact is not waiting for review."
NO_TARGET = "Choose the fact to merge into."


def _row(
    request: HttpRequest,
    access: Access,
    template: str,
    context: dict[str, Any],  # Any: a template context (render takes Mapping[str, Any])
    *,
    status: int = 200,
) -> HttpResponse:
    """A row of the queue for htmx (`template`), and the counter out of band as it is now."""
    page = {
        "access": access,
        "tab": "queue",
        **context,
        "row_template": template,
        "counts": fact_counts(agent=access.agent),
    }
    return render(request, "review/partials/queue_htmx.html", page, status=status)


def _done(request: HtmxRequest, access: Access, fact_id: int, note: str) -> HttpResponse:
    """htmx swaps the fact's row for a one-line note; a plain POST goes back to the queue."""
    if request.htmx:
        context = {"fact_id": fact_id, "note": note}
        return _row(request, access, "review/partials/queue_done.html", context)
    messages.success(request, note)
    return redirect("review:queue", access.agent.slug)


def _refused(
    request: HtmxRequest, access: Access, fact_id: int, *, status: int, message: str
) -> HttpResponse:
    """A refusal (400 or 409; nothing changed): in the fact's row for htmx, else a page."""
    if request.htmx:
        context = {"fact_id": fact_id, "status": status, "message": message}
        return _row(request, access, "review/partials/queue_refused.html", context, status=status)
    return refused(request, access, status=status, message=message, tab="queue")


def _decide(
    request: HtmxRequest,
    access: Access,
    fact_id: int,
    *,
    action: str,
    note: str,
    change: Callable[[], tuple],
) -> HttpResponse:
    """`change()`, a service call returning (target, before, after) for the audit event, and
    that event in one transaction (no provider is called); a refusal from the service is
    answered as a page, with nothing changed."""
    try:
        with transaction.atomic():
            target, before, after = change()
            audit(request, access, action=action, target=target, before=before, after=after)
    except ApplicationError as exc:
        return _refused(request, access, fact_id, status=error_status(exc), message=exc.message)
    return _done(request, access, fact_id, note)


def _is_pending(fact: Fact) -> bool:
    return fact.valid_to is None and fact.status == FactStatus.PENDING


@agent_list
def queue(request: HtmxRequest, access: Access) -> HttpResponse:
    context = {
        "access": access,
        "tab": "queue",
        "pending": facts_pending(agent=access.agent),
        "counts": fact_counts(agent=access.agent),
        "fact_review": access.agent.config.fact_review,
    }
    return render(request, "review/queue.html", context)


@agent_action
def queue_approve(request: HtmxRequest, access: Access, fact_id: int) -> HttpResponse:
    fact = get_fact(access, fact_id)
    before = fact_snapshot(fact)

    def approve() -> tuple:
        approved = fact_review_approve(
            agent=access.agent, fact=fact, changed_by=changed_by(request)
        )
        return approved, before, fact_snapshot(approved)

    note = f"Fact #{fact_id} approved."
    return _decide(request, access, fact_id, action="fact.approve", note=note, change=approve)


@agent_form
def queue_edit(request: HtmxRequest, access: Access, fact_id: int) -> HttpResponse:
    """The edit form (in the fact's row for htmx); a valid POST saves the changes as
    versions, then approves."""
    fact = get_fact(access, fact_id)
    if not _is_pending(fact):
        return _refused(request, access, fact_id, status=409, message=NOT_PENDING)
    initial = fact_initial(fact)

    def save(data: dict) -> HttpResponse:
        before = fact_snapshot(fact)
        changes = {k: v for k, v in data.items() if v != initial[k]}
        # A new value is embedded before the service's transactions: audit after.
        approved = fact_review_approve(
            agent=access.agent, fact=fact, changed_by=changed_by(request), **changes
        )
        after = fact_snapshot(approved)
        audit(request, access, action="fact.approve", target=approved, before=before, after=after)
        return _done(request, access, fact_id, f"Fact #{fact_id} edited and approved.")

    if not request.htmx:
        return fact_form(request, access, fact, tab="queue", save=save)
    row = {
        "row_template": "review/partials/queue_edit_row.html",
        "counts": fact_counts(agent=access.agent),
    }
    template = "review/partials/queue_htmx.html"
    return fact_form(request, access, fact, tab="queue", save=save, template=template, context=row)


@agent_action
def queue_reject(request: HtmxRequest, access: Access, fact_id: int) -> HttpResponse:
    fact = get_fact(access, fact_id)

    def reject() -> tuple:
        rejected = fact_reject(agent=access.agent, fact=fact)
        return rejected, fact_snapshot(rejected), None

    note = f"Fact #{fact_id} rejected."
    return _decide(request, access, fact_id, action="fact.reject", note=note, change=reject)


# --- merge: choose (nothing chosen beforehand), confirm, merge ---


@agent_form
def queue_merge(request: HtmxRequest, access: Access, fact_id: int) -> HttpResponse:
    """GET: the candidates for a pending fact, most similar first, none chosen (`?q=` keeps
    those containing it). POST `into`: the confirmation naming both facts, nothing written.
    POST `into` and `confirm`: the merge. A missing or refused target is answered with the
    choice again, its error, 400 (409 for a target that is not approved); nothing changes."""
    fact = get_fact(access, fact_id)
    if not _is_pending(fact):
        return _refused(request, access, fact_id, status=409, message=NOT_PENDING)
    if request.method != "POST":
        search = MergeSearchForm(request.GET)
        query = search.cleaned_data["q"].strip() if search.is_valid() else ""
        return _merge_step(request, access, fact, query=query)
    form = MergeForm(request.POST)
    if not form.is_valid():
        return _merge_step(request, access, fact, error=NO_TARGET, status=400)
    try:
        into = _merge_target(access, fact, form.cleaned_data["into"])
    except ApplicationError as exc:
        return _merge_step(request, access, fact, error=exc.message, status=error_status(exc))
    if not form.cleaned_data["confirm"]:
        return _merge_step(request, access, fact, into=into)
    return _merge(request, access, fact, into)


def _merge_target(access: Access, fact: Fact, into_id: int) -> Fact:
    """The fact chosen to merge `fact` into, if it is one the choice offers (the agent's,
    the same owner's, not itself: InvalidInput otherwise), approved and current (Conflict)."""
    try:
        into = fact_get(agent=access.agent, fact_id=into_id, audience=EVERYONE)
    except NotFound:
        raise InvalidInput(f"#{into_id} is not one of this agent's facts. {NO_TARGET}") from None
    if into.pk == fact.pk:
        raise InvalidInput(f"A fact cannot be merged into itself. {NO_TARGET}")
    if into.user != fact.user:
        # A merge moves one fact's versions onto the other: never across users (issue 26).
        raise InvalidInput(f"#{into.pk} belongs to another user than #{fact.pk}. {NO_TARGET}")
    if into.valid_to is not None or into.status != FactStatus.ACTIVE:
        raise Conflict(f"#{into.pk} is not an approved current fact. {NO_TARGET}")
    return into


def _merge_step(
    request: HtmxRequest,
    access: Access,
    fact: Fact,
    *,
    query: str = "",
    into: Fact | None = None,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    """The choice (into None: the candidates, none selected) or the confirmation; in the
    fact's row for htmx, else a page of its own."""
    context: dict[str, Any] = {  # Any: a template context, as render takes it
        "fact": fact,
        "q": query,
        "into": into,
        "error": error,
    }
    if into is None:
        context["candidates"] = facts_merge_candidates(agent=access.agent, fact=fact, query=query)
    if request.htmx:
        return _row(request, access, "review/partials/queue_merge_row.html", context, status=status)
    page = {"access": access, "tab": "queue", **context}
    return render(request, "review/queue_merge.html", page, status=status)


def _merge(request: HtmxRequest, access: Access, fact: Fact, into: Fact) -> HttpResponse:
    """The confirmed merge and its audit event (the service checks both facts again)."""
    before = {"fact": fact_snapshot(fact), "into": fact_snapshot(into)}

    def merge() -> tuple:
        kept = fact_review_merge(
            agent=access.agent, fact=fact, into=into, changed_by=changed_by(request)
        )
        fact.refresh_from_db()
        return fact, before, {"fact": fact_snapshot(fact), "into": fact_snapshot(kept)}

    note = f"Fact #{fact.pk} merged into #{into.pk}."
    return _decide(request, access, fact.pk, action="fact.merge", note=note, change=merge)
