"""The review queue: facts waiting as pending (the agent's fact_review setting), oldest
first. Editors approve, edit then approve, reject or merge into an approved fact."""

from collections.abc import Callable
from contextlib import suppress

from django.contrib import messages
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect, render

from apps.core.errors import ApplicationError, NotFound
from apps.facts.models import FactStatus
from apps.facts.selectors import fact_counts, fact_get, facts_merge_targets, facts_pending
from apps.facts.services import fact_reject, fact_review_approve, fact_review_merge
from apps.review.access import Access, agent_action, agent_form, agent_page
from apps.review.forms import MergeForm
from apps.review.views.common import audit, changed_by, error_status, refused
from apps.review.views.facts import fact_form, fact_initial, fact_snapshot, get_fact


def _done(request, access: Access, fact_id: int, note: str) -> HttpResponse:
    """htmx swaps the fact's row for a one-line note; a plain POST goes back to the queue."""
    if request.htmx:
        context = {"access": access, "fact_id": fact_id, "note": note}
        return render(request, "review/partials/queue_done.html", context)
    messages.success(request, note)
    return redirect("review:queue", access.agent.slug)


def _refused(request, access: Access, exc: ApplicationError) -> HttpResponse:
    return refused(request, access, status=error_status(exc), message=exc.message, tab="queue")


def _decide(
    request, access: Access, fact_id: int, *, action: str, note: str, change: Callable[[], tuple]
) -> HttpResponse:
    """`change()`, a service call returning (target, before, after) for the audit event, and
    that event in one transaction (no provider is called); a refusal from the service is
    answered as a page, with nothing changed."""
    try:
        with transaction.atomic():
            target, before, after = change()
            audit(request, access, action=action, target=target, before=before, after=after)
    except ApplicationError as exc:
        return _refused(request, access, exc)
    return _done(request, access, fact_id, note)


@agent_page
def queue(request, access: Access):
    context = {
        "access": access,
        "tab": "queue",
        "pending": facts_pending(agent=access.agent),
        "targets": facts_merge_targets(agent=access.agent) if access.can_edit else [],
        "counts": fact_counts(agent=access.agent),
        "fact_review": access.agent.config.fact_review,
    }
    return render(request, "review/queue.html", context)


@agent_action
def queue_approve(request, access: Access, fact_id: int):
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
def queue_edit(request, access: Access, fact_id: int):
    fact = get_fact(access, fact_id)
    if fact.valid_to is not None or fact.status != FactStatus.PENDING:
        return refused(
            request, access, status=409, tab="queue", message="The fact is not waiting for review."
        )
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
        messages.success(request, f"Fact #{fact_id} edited and approved.")
        return redirect("review:queue", access.agent.slug)

    return fact_form(request, access, fact, tab="queue", save=save)


@agent_action
def queue_reject(request, access: Access, fact_id: int):
    fact = get_fact(access, fact_id)

    def reject() -> tuple:
        rejected = fact_reject(agent=access.agent, fact=fact)
        return rejected, fact_snapshot(rejected), None

    note = f"Fact #{fact_id} rejected."
    return _decide(request, access, fact_id, action="fact.reject", note=note, change=reject)


@agent_action
def queue_merge(request, access: Access, fact_id: int):
    fact = get_fact(access, fact_id)
    form = MergeForm(request.POST)
    into = None
    if form.is_valid():
        with suppress(NotFound):  # not this agent's fact: refused below
            into = fact_get(agent=access.agent, fact_id=form.cleaned_data["into"])
    if into is None:
        return refused(
            request,
            access,
            status=400,
            tab="queue",
            message="Choose one of this agent's approved facts to merge into.",
        )
    before = {"fact": fact_snapshot(fact), "into": fact_snapshot(into)}

    def merge() -> tuple:
        kept = fact_review_merge(
            agent=access.agent, fact=fact, into=into, changed_by=changed_by(request)
        )
        fact.refresh_from_db()
        return fact, before, {"fact": fact_snapshot(fact), "into": fact_snapshot(kept)}

    note = f"Fact #{fact_id} merged into #{into.pk}."
    return _decide(request, access, fact_id, action="fact.merge", note=note, change=merge)
