"""What the curation views share: the 404 of a selector's get, the audit event, the refusal
page and the edit-form cycle."""

from collections.abc import Callable
from typing import Any, TypeVar

from django import forms
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.agents.services import audit_record
from apps.core.errors import ApplicationError, Conflict, NotFound
from apps.review.access import Access

T = TypeVar("T")


def or_404(selector: Callable[..., T], **kwargs: Any) -> T:
    """`selector(**kwargs)`: a domain app's get, its NotFound answered as the page's 404."""
    try:
        return selector(**kwargs)
    except NotFound as exc:
        raise Http404(exc.message) from exc


def audit(
    request: HttpRequest, access: Access, *, action: str, target: Any, before: Any, after: Any
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


def error_status(exc: ApplicationError) -> int:
    return 409 if isinstance(exc, Conflict) else 400


def refused(request: HttpRequest, access: Access, *, status: int, message: str, tab: str):
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
    context: dict[str, Any],
    save: Callable[[dict[str, Any]], HttpResponse],
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
