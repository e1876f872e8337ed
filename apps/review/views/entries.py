"""The agent's entries: documents, notes, archives, and HISTORY by month."""

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.core.errors import InvalidInput
from apps.entries import names
from apps.review.access import Access, agent_page
from apps.review.selectors import (
    entry_by_id,
    entry_changes,
    entry_groups,
    history_month_entries,
    history_months,
)


@agent_page
def entry_list(request: HttpRequest, access: Access) -> HttpResponse:
    """Entries grouped (MEMORY.md and the other documents first) and the history months."""
    context = {
        "access": access,
        "tab": "entries",
        "groups": entry_groups(agent=access.agent),
        "months": history_months(agent=access.agent),
        "reserved": names.RESERVED_DOCUMENTS,
    }
    return render(request, "review/entries.html", context)


@agent_page
def entry_detail(request: HttpRequest, access: Access, entry_id: int) -> HttpResponse:
    """One entry with its aliases, kind, token count and change log."""
    entry = entry_by_id(agent=access.agent, entry_id=entry_id)
    if entry is None:
        raise Http404("no such entry")
    context = {
        "access": access,
        "tab": "entries",
        "entry": entry,
        "aliases": list(entry.aliases.all()),
        "changes": entry_changes(entry=entry),
    }
    return render(request, "review/entry.html", context)


@agent_page
def history_month(request: HttpRequest, access: Access, month: str) -> HttpResponse:
    """HISTORY-YYYY-MM.md as its entries, oldest first; 404 for a malformed or empty month."""
    try:
        entries = history_month_entries(agent=access.agent, month=month)
    except InvalidInput as exc:
        raise Http404(exc.message) from exc
    if not entries:
        raise Http404("no history in this month")
    context = {
        "access": access,
        "tab": "entries",
        "month": month,
        "file_name": names.history_month_name(month),
        "entries": entries,
    }
    return render(request, "review/history.html", context)
