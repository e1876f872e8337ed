"""What the curation views share: the 404 of a selector's get, the audit event, the refusal
page, the edit-form cycle and the filter by user."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode

from django import forms
from django.db.models import Model
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.agents.services import audit_record
from apps.core.errors import ApplicationError, Conflict, NotFound
from apps.review.access import Access
from apps.review.selectors import agent_users

T = TypeVar("T")
# An audit event's before or after: JSON-safe values by name (apps.agents.services.snapshot).
Snapshot = dict[str, object]

# The filter forms' "everyone" option: blank, yet not "" (the agent's own rows), and no user
# is blank (clean_user strips). A missing `user` means everyone too.
EVERYONE = " "
USER_CHOICES = 200  # the users a filter's select offers, by name; `?user=` takes any


def or_404(selector: Callable[..., T], **kwargs: object) -> T:
    """`selector(**kwargs)`: a domain app's get, its NotFound answered as the page's 404."""
    try:
        return selector(**kwargs)
    except NotFound as exc:
        raise Http404(exc.message) from exc


def audit(
    request: HttpRequest,
    access: Access,
    *,
    action: str,
    target: Model,
    before: Snapshot | None,
    after: Snapshot | None,
) -> None:
    """Record a change made on a review page by the logged-in user."""
    audit_record(
        user=request.user,
        agent=access.agent,
        source="review",
        action=action,
        target=target,
        before=before,
        after=after,
    )


def changed_by(request: HttpRequest) -> str:
    """Who a fact version names for a change made on a review page (FactVersion: 100 chars)."""
    return f"review:{request.user.get_username()}"[:100]


# The rows an erasure counts (apps.people.services.user_erasure.UserErased), one of each.
_ONE = {
    "summaries": "summary",
    "entries": "entry",
    "entry_aliases": "entry alias",
    "history": "history entry",
    "provenance": "provenance link",
}
_MANY = {"history": "history entries", "provenance": "provenance links"}


def rows_named(kind: str, n: int) -> str:
    """An erasure's count's rows as a person reads them: "1 fact version", "2 fact versions"."""
    if n == 1:
        return _ONE.get(kind) or kind.replace("_", " ").removesuffix("s")
    return _MANY.get(kind) or kind.replace("_", " ")


def error_status(exc: ApplicationError) -> int:
    return 409 if isinstance(exc, Conflict) else 400


def refused(
    request: HttpRequest, access: Access, *, status: int, message: str, tab: str
) -> HttpResponse:
    """The page for a request the pages refuse (400 or 409): nothing was changed."""
    context = {"access": access, "tab": tab, "status": status, "message": message}
    return render(request, "review/partials/facts_refused.html", context, status=status)


def edit_form(
    request: HttpRequest,
    access: Access,
    *,
    form: forms.Form,
    tab: str,
    template: str,
    context: dict[str, Any],  # Any: a template context (render takes Mapping[str, Any])
    save: Callable[[dict[str, Any]], HttpResponse],  # Any: Form.cleaned_data's values
) -> HttpResponse:
    """GET shows `form`; a valid POST returns `save(cleaned_data)`, whose ApplicationError
    becomes a form error (400, or 409 for a conflict); an invalid POST answers 400."""
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                return save(form.cleaned_data)
            except ApplicationError as exc:
                form.add_error(None, exc.message)
                status = error_status(exc)
    page = {"access": access, "tab": tab, "form": form, **context}
    return render(request, template, page, status=status)


@dataclass(frozen=True)
class UserFilter:
    """The `user` filter of a page: None every row, "" the agent's own, else one user's;
    with the users its select offers."""

    value: str | None
    choices: list[str]

    @property
    def query(self) -> str:
        """The filter as a query-string item for the page's other links ("" when off)."""
        return "" if self.value is None else urlencode({"user": self.value})


def user_param(request: HttpRequest) -> str | None:
    """The `user` query parameter: None when missing or only whitespace (everyone: the
    forms' EVERYONE), "" when empty (the agent's own rows), else the user, stripped as
    users are."""
    raw = request.GET.get("user")
    if raw is None:
        return None
    value = raw.strip()
    return None if raw and not value else value


def filtered_page(
    request: HttpRequest,
    access: Access,
    uf: UserFilter,
    *,
    tab: str,
    rows: Mapping[str, object],
    template: str = "",
) -> HttpResponse:
    """A list page under the user filter `uf`: `rows` (its lists, by their names in the
    template) beside the agent's access, the tab and the filter; the template is the tab's
    (review/<tab>.html) unless given."""
    page = {"access": access, "tab": tab, "uf": uf, **rows}
    return render(request, template or f"review/{tab}.html", page)


def user_filter(request: HttpRequest, access: Access) -> UserFilter:
    """The page's user filter and the first USER_CHOICES users of the agent (plus the one
    asked for, so the select shows it)."""
    value = user_param(request)
    choices = agent_users(agent=access.agent, limit=USER_CHOICES)
    if value and value not in choices:
        choices.append(value)
    return UserFilter(value=value, choices=choices)
