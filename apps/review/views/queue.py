"""The review queue: facts waiting as pending (the agent's fact_review setting), oldest
first. Editors approve, edit then approve, reject or merge into an approved fact."""

from django.contrib import messages
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect, render

from apps.core.errors import ApplicationError
from apps.facts.models import FactStatus
from apps.facts.services import fact_reject, fact_review_approve, fact_review_merge
from apps.review import curation
from apps.review.access import Access, agent_action, agent_form, agent_page
from apps.review.forms import FactForm, MergeForm
from apps.review.views.common import audit, changed_by, edit_form, error_status, refused
from apps.review.views.facts import fact_initial, fact_snapshot, get_fact


def _done(request, access: Access, fact_id: int, note: str) -> HttpResponse:
    """htmx swaps the fact's row for a one-line note; a plain POST goes back to the queue."""
    if request.htmx:
        context = {"access": access, "fact_id": fact_id, "note": note}
        return render(request, "review/partials/queue_done.html", context)
    messages.success(request, note)
    return redirect("review:queue", access.agent.slug)


def _refused(request, access: Access, exc: ApplicationError) -> HttpResponse:
    return refused(request, access, status=error_status(exc), message=exc.message, tab="queue")


@agent_page
def queue(request, access: Access):
    pending = curation.pending_facts(agent=access.agent)
    context = {
        "access": access,
        "tab": "queue",
        "pending": pending,
        "targets": curation.merge_targets(agent=access.agent) if access.can_edit else [],
        "counts": curation.fact_counts(agent=access.agent),
        "fact_review": access.agent.config.fact_review,
    }
    return render(request, "review/queue.html", context)


@agent_action
def queue_approve(request, access: Access, fact_id: int):
    fact = get_fact(access, fact_id)
    before = fact_snapshot(fact)
    try:
        with transaction.atomic():  # no provider call without changes: one commit
            approved = fact_review_approve(
                agent=access.agent, fact=fact, changed_by=changed_by(request)
            )
            after = fact_snapshot(approved)
            audit(
                request, access, action="fact.approve", target=approved, before=before, after=after
            )
    except ApplicationError as exc:
        return _refused(request, access, exc)
    return _done(request, access, fact_id, f"Fact #{fact_id} approved.")


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

    return edit_form(
        request,
        access,
        form=FactForm(request.POST or None, initial=initial),
        tab="queue",
        template="review/queue_edit.html",
        context={"fact": fact},
        save=save,
    )


@agent_action
def queue_reject(request, access: Access, fact_id: int):
    fact = get_fact(access, fact_id)
    try:
        with transaction.atomic():  # no provider call: the delete and its audit commit together
            rejected = fact_reject(agent=access.agent, fact=fact)
            before = fact_snapshot(rejected)
            audit(request, access, action="fact.reject", target=rejected, before=before, after=None)
    except ApplicationError as exc:
        return _refused(request, access, exc)
    return _done(request, access, fact_id, f"Fact #{fact_id} rejected.")


@agent_action
def queue_merge(request, access: Access, fact_id: int):
    fact = get_fact(access, fact_id)
    form = MergeForm(request.POST)
    into = None
    if form.is_valid():
        into = curation.fact_page_get(agent=access.agent, fact_id=form.cleaned_data["into"])
    if into is None:
        return refused(
            request,
            access,
            status=400,
            tab="queue",
            message="Choose one of this agent's approved facts to merge into.",
        )
    before = {"fact": fact_snapshot(fact), "into": fact_snapshot(into)}
    try:
        with transaction.atomic():  # no provider call: the merge and its audit commit together
            kept = fact_review_merge(
                agent=access.agent, fact=fact, into=into, changed_by=changed_by(request)
            )
            fact.refresh_from_db()
            after = {"fact": fact_snapshot(fact), "into": fact_snapshot(kept)}
            audit(request, access, action="fact.merge", target=fact, before=before, after=after)
    except ApplicationError as exc:
        return _refused(request, access, exc)
    return _done(request, access, fact_id, f"Fact #{fact_id} merged into #{kept.pk}.")
