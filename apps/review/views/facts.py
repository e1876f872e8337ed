"""Facts: grouped by category with salience, one fact with its versions (diffed) and its
supersede chain; editors edit (fact_update) and delete (fact_delete)."""

from collections.abc import Callable

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from apps.agents.services import snapshot
from apps.agents.users import EVERYONE
from apps.facts.models import Fact
from apps.facts.selectors import fact_chain, fact_get
from apps.facts.services import fact_delete as fact_delete_service
from apps.facts.services import fact_update
from apps.review import curation
from apps.review.access import Access, agent_action, agent_form, agent_list, agent_page
from apps.review.forms import FactForm
from apps.review.selectors import fact_counts_of
from apps.review.views.common import (
    audit,
    changed_by,
    edit_form,
    filtered_page,
    or_404,
    refused,
    user_filter,
)

EDIT_TEMPLATES = {"facts": "review/fact_edit.html", "queue": "review/queue_edit.html"}
FACT_FIELDS = ["category", "key", "value", "importance", "status", "valid_to", "superseded_by_id"]


def fact_snapshot(fact: Fact) -> dict:
    """A fact's audit snapshot (its category by name)."""
    return snapshot(fact, FACT_FIELDS)


def fact_initial(fact: Fact) -> dict:
    """The edit form's starting values: what the fact holds now."""
    return {
        "value": fact.value,
        "category": fact.category.name,
        "key": fact.key,
        "importance": fact.importance,
    }


def fact_form(
    request: HttpRequest,
    access: Access,
    fact: Fact,
    *,
    tab: str,
    save: Callable[[dict], HttpResponse],
    template: str | None = None,
    context: dict | None = None,
) -> HttpResponse:
    """The fact's edit form on the facts tab or the queue's (or `template`, given `context`
    besides the fact), starting from what the fact holds now."""
    form = FactForm(request.POST or None, initial=fact_initial(fact))
    return edit_form(
        request,
        access,
        form=form,
        tab=tab,
        template=template or EDIT_TEMPLATES[tab],
        context={"fact": fact, **(context or {})},
        save=save,
    )


def get_fact(access: Access, fact_id: int) -> Fact:
    """One of the agent's facts, current or not; 404 otherwise."""
    return or_404(fact_get, agent=access.agent, fact_id=fact_id, audience=EVERYONE)


@agent_list
def fact_list(request: HttpRequest, access: Access) -> HttpResponse:
    """Current facts by category; `?user=` keeps one owner's (views.common.user_param)."""
    uf = user_filter(request, access)
    rows = {
        "groups": curation.fact_groups(agent=access.agent, user=uf.value),
        "counts": fact_counts_of(agent=access.agent, user=uf.value),
    }
    return filtered_page(request, access, uf, tab="facts", rows=rows)


@agent_page
def fact_detail(request: HttpRequest, access: Access, fact_id: int) -> HttpResponse:
    fact = get_fact(access, fact_id)
    context = {
        "access": access,
        "tab": "facts",
        "fact": fact,
        "versions": curation.version_diffs(fact=fact),
        "chain": fact_chain(fact=fact),
    }
    return render(request, "review/fact.html", context)


@agent_form
def fact_edit(request: HttpRequest, access: Access, fact_id: int) -> HttpResponse:
    fact = get_fact(access, fact_id)
    if fact.valid_to is not None:
        return refused(
            request,
            access,
            status=409,
            tab="facts",
            message="A superseded fact is history and cannot be edited.",
        )

    def save(data: dict) -> HttpResponse:
        before = fact_snapshot(fact)
        # fact_update embeds a new value before its transaction: audit after it.
        updated = fact_update(
            agent=access.agent,
            fact=fact,
            changed_by=changed_by(request),
            reason="edited on the review page",
            **data,
        )
        audit(
            request,
            access,
            action="fact.update",
            target=updated,
            before=before,
            after=fact_snapshot(updated),
        )
        messages.success(request, f"Fact #{fact.pk} saved.")
        return redirect("review:fact", access.agent.slug, fact.pk)

    return fact_form(request, access, fact, tab="facts", save=save)


@agent_action
def fact_delete(request: HttpRequest, access: Access, fact_id: int) -> HttpResponse:
    fact = get_fact(access, fact_id)
    before = fact_snapshot(fact)
    # No provider call: the delete and its audit event commit together.
    with transaction.atomic():
        fact_delete_service(agent=access.agent, fact=fact)
        audit(request, access, action="fact.delete", target=fact, before=before, after=None)
    messages.success(request, f"Fact #{fact_id} deleted.")
    return redirect("review:facts", access.agent.slug)
