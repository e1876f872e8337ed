"""Who may see and change what on the review pages.

Every agent page is addressed by the agent's slug. A user who is not a member of the agent's
team gets 404, exactly as for an agent that does not exist; viewers read, editors change
(403 for a viewer's POST); anonymous users are sent to the login page.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from apps.agents.models import Agent, MemberRole
from apps.agents.selectors import agent_for_user, user_role
from apps.core.errors import NotFound
from apps.core.replicas import on_replica

View = Callable[..., HttpResponse]


@dataclass(frozen=True)
class Access:
    """The agent a review page is about, and what the user may do with it."""

    agent: Agent
    role: str

    @property
    def can_edit(self) -> bool:
        return self.role == MemberRole.EDITOR


def _resolve(request: HttpRequest, slug: str) -> Access:
    try:
        agent = agent_for_user(user=request.user, slug=slug)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    role = user_role(user=request.user, agent=agent)
    if role is None:  # pragma: no cover - agent_for_user already filtered by membership
        raise Http404(f"no agent '{slug}'")
    return Access(agent=agent, role=role)


def _forbidden(request: HttpRequest) -> HttpResponse:
    # Answered, not raised: a viewer pressing an editor's button is not worth a logged
    # traceback (Django logs every PermissionDenied with its stack).
    return render(request, "403.html", status=403)


def agent_page(view: View) -> View:
    """A page about one agent, for any member of its team: `view(request, access, ...)`."""

    @login_required
    @require_http_methods(["GET", "HEAD"])
    @wraps(view)
    def wrapped(request: HttpRequest, slug: str, *args: object, **kwargs: object) -> HttpResponse:
        return view(request, _resolve(request, slug), *args, **kwargs)

    return wrapped


def _for_editors(view: View, methods: list[str]) -> View:
    """`view(request, access, ...)` for the agent's editors: a viewer gets 403; someone
    outside the team 404 (the agent is not there for them)."""

    @login_required
    @require_http_methods(methods)
    @wraps(view)
    def wrapped(request: HttpRequest, slug: str, *args: object, **kwargs: object) -> HttpResponse:
        access = _resolve(request, slug)
        if not access.can_edit:
            return _forbidden(request)
        return view(request, access, *args, **kwargs)

    return wrapped


def agent_list(view: View) -> View:
    """An agent_page listing rows, read from a replica when there is one (apps/core/replicas.py);
    who the user is and what they may see is resolved on the primary. A browser that has just
    written reads from the primary instead (pin_primary_after_write), so the list it is sent
    back to shows its change."""
    return agent_page(on_replica(view))


def agent_action(view: View) -> View:
    """A change to one agent's memory, POST only and for editors (_for_editors)."""
    return _for_editors(view, ["POST"])


def agent_form(view: View) -> View:
    """An edit form: GET shows it, POST saves; both for editors only (_for_editors)."""
    return _for_editors(view, ["GET", "HEAD", "POST"])
