"""The agent's API keys (issue 39): each key's prefix, scope, creation, last use and
revocation for every member; editors issue a key (its raw value shown once, on the answer
to the POST alone) and revoke one. Both are audited."""

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers

from apps.agents.selectors import api_key_get, api_keys
from apps.agents.services import api_key_issue, api_key_revoke, snapshot
from apps.core.errors import InvalidInput
from apps.review.access import Access, agent_action, agent_page
from apps.review.forms import ApiKeyForm
from apps.review.views.common import audit, or_404

# What an audit event copies of a key: never its hash.
AUDITED = ["prefix", "name", "user", "read_only", "created_at", "revoked_at"]


def _page(
    request: HttpRequest, access: Access, form: ApiKeyForm, *, status: int = 200
) -> HttpResponse:
    context = {"access": access, "tab": "keys", "keys": api_keys(agent=access.agent),
               "form": form}  # fmt: skip
    return render(request, "review/keys.html", context, status=status)


@agent_page
def key_list(request: HttpRequest, access: Access) -> HttpResponse:
    """Every key of the agent, with its scope; the issue form for editors."""
    return _page(request, access, ApiKeyForm())


@agent_action
def key_create(request: HttpRequest, access: Access) -> HttpResponse:
    """Issue a key with the form's scope; the answer shows the raw key once (not cached,
    no redirect: it is on no other page)."""
    form = ApiKeyForm(request.POST)
    if not form.is_valid():
        return _page(request, access, form, status=400)
    data = form.cleaned_data
    name = data["name"] or f"review:{request.user.get_username()}"[:100]
    try:
        with transaction.atomic():
            issued = api_key_issue(agent=access.agent, name=name, user=data["user"] or None,
                                   read_only=data["read_only"])  # fmt: skip
            after = snapshot(issued.api_key, AUDITED)
            audit(request, access, action="apikey.issue", target=issued.api_key, before=None,
                  after=after)  # fmt: skip
    except InvalidInput as exc:
        form.add_error("user", exc.message)
        return _page(request, access, form, status=400)
    context = {"access": access, "tab": "keys", "issued": issued}
    response = render(request, "review/key_issued.html", context)
    add_never_cache_headers(response)  # Cache-Control: no-store, among others
    return response


@agent_action
def key_revoke(request: HttpRequest, access: Access, key_id: int) -> HttpResponse:
    """Revoke the key (revoking twice keeps the first time); back to the keys."""
    api_key = or_404(api_key_get, agent=access.agent, key_id=key_id)
    if api_key.revoked_at is None:
        before = snapshot(api_key, AUDITED)
        with transaction.atomic():
            api_key_revoke(api_key=api_key)
            audit(request, access, action="apikey.revoke", target=api_key, before=before,
                  after=snapshot(api_key, AUDITED))  # fmt: skip
        messages.success(request, f"Revoked key {api_key.prefix}….")
    return redirect("review:keys", access.agent.slug)
