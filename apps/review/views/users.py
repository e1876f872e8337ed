"""The agent's end users (issue 26): the index of its users with their counts, and one
user's page with their sessions and memory."""

from dataclasses import dataclass

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.agents.users import USER_MAX
from apps.core.validation import has_control
from apps.review.access import Access, agent_list, agent_page
from apps.review.links import user_url
from apps.review.selectors import (
    UserRow,
    agent_users,
    message_counts,
    user_exists,
    user_memory,
    user_rows,
)

USERS_PER_PAGE = 100


@dataclass(frozen=True)
class ShownUser:
    row: UserRow
    url: str | None  # None: the user cannot be addressed by a path (links.user_url)


@agent_list
def user_list(request: HttpRequest, access: Access) -> HttpResponse:
    """The agent's users by name, 100 a page, with their session and fact counts."""
    paginator = Paginator(agent_users(agent=access.agent), USERS_PER_PAGE)
    page = paginator.get_page(request.GET.get("page"))
    rows = user_rows(agent=access.agent, users=list(page.object_list))
    context = {
        "access": access,
        "tab": "users",
        "page": page,
        "users": [ShownUser(r, user_url(access.agent.slug, r.user)) for r in rows],
    }
    return render(request, "review/users.html", context)


@agent_page
def user_detail(request: HttpRequest, access: Access, user: str) -> HttpResponse:
    """One user's sessions and memory (facts, entries with their MEMORY.md and USER.md,
    learnings, HISTORY) with counts; 404 for a user with no row in the agent."""
    # No stored user holds a control character or runs past USER_MAX (clean_user): such a
    # path names no one, and PostgreSQL could not compare a NUL.
    if has_control(user) or len(user) > USER_MAX or not user_exists(agent=access.agent, user=user):
        raise Http404("no such user")
    memory = user_memory(agent=access.agent, user=user)
    counts = message_counts(sessions=memory.sessions)
    context = {
        "access": access,
        "tab": "users",
        "user_name": user,
        "memory": memory,
        "session_rows": [(s, counts.get(s.pk, 0)) for s in memory.sessions],
        "erase_url": user_url(access.agent.slug, user, name="user_erase"),
    }
    return render(request, "review/user.html", context)
