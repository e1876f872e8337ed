"""Erasing one end user of the agent (issue 26), after a confirmation: the page (linked from
the user's page) shows what would be deleted; an editor's POST deletes it and leaves an
audit event."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render

from apps.core.errors import InvalidInput
from apps.people.selectors import user_erasure_counts
from apps.people.services import Actor, erased_user, erasure_vacuum, user_erase
from apps.review.access import Access, agent_form
from apps.review.links import user_url


def _listed(counts: dict[str, int]) -> list[tuple[str, int]]:
    """(kind, count) pairs as the page names them: "fact versions", not "fact_versions"."""
    return [(kind.replace("_", " "), n) for kind, n in counts.items()]


def _erased(request: HttpRequest, access: Access, name: str) -> str:
    """Erase `name` (and vacuum when the form's box is ticked, after the commit); what the
    page then says was done."""
    actor = Actor(source="review", person=request.user)
    erased = user_erase(agent=access.agent, user=name, actor=actor)
    listed = _listed(erased.counts())
    done = ", ".join(f"{kind} {n}" for kind, n in listed if n) or "nothing was left"
    if request.POST.get("vacuum") == "on":
        done += "; vacuumed" if erasure_vacuum() else "; the vacuum did not complete"
    return f"Erased user {name}: {done}."


@agent_form
def user_erase_confirm(request: HttpRequest, access: Access, user: str) -> HttpResponse:
    """GET: every row of `user` an erasure would delete, counted, the vacuum box and the
    button; POST: erase them (and vacuum), then the agent's users (the audit log shows the
    event)."""
    try:
        name = erased_user(user)
    except InvalidInput as exc:
        return HttpResponseBadRequest(exc.message)
    if request.method == "POST":
        messages.success(request, _erased(request, access, name))
        return redirect("review:users", access.agent.slug)
    counts = user_erasure_counts(agent=access.agent, user=name).deletions()
    context = {
        "access": access,
        "tab": "users",
        "user_name": name,  # not "user": the header's logged-in person is `user`
        "user_url": user_url(access.agent.slug, name),
        "counts": _listed(counts),
        "total": sum(counts.values()),
    }
    return render(request, "review/user_erase.html", context)
