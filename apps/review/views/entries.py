"""The agent's entries: documents, notes, archives, and HISTORY by month."""

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.core.errors import InvalidInput
from apps.entries import names
from apps.review.access import Access, agent_list, agent_page
from apps.review.markdown import renderable
from apps.review.selectors import entries as reads
from apps.review.views.common import filtered_page, user_filter


@agent_list
def entry_list(request: HttpRequest, access: Access) -> HttpResponse:
    """Entries grouped (MEMORY.md and the other documents first) and the history months;
    `?user=` keeps one owner's (views.common.user_param)."""
    uf = user_filter(request, access)
    rows = {
        "groups": reads.entry_groups(agent=access.agent, user=uf.value),
        "months": reads.history_months(agent=access.agent, user=uf.value),
        "reserved": names.RESERVED_DOCUMENTS,
    }
    return filtered_page(request, access, uf, tab="entries", rows=rows)


@agent_page
def entry_detail(request: HttpRequest, access: Access, entry_id: int) -> HttpResponse:
    """One entry with its aliases, kind, token count and change log; its content as
    sanitised markdown (apps/review/markdown.py), or as stored with `?raw=1`."""
    entry = reads.entry_by_id(agent=access.agent, entry_id=entry_id)
    if entry is None:
        raise Http404("no such entry")
    context = {
        "access": access,
        "tab": "entries",
        "entry": entry,
        "aliases": list(entry.aliases.all()),
        "changes": reads.entry_changes(entry=entry),
        "raw": request.GET.get("raw") == "1",
        "renderable": renderable(entry.content),
    }
    return render(request, "review/entry.html", context)


@agent_list
def history_month(request: HttpRequest, access: Access, month: str) -> HttpResponse:
    """HISTORY-YYYY-MM.md as its entries, oldest first, `?user=` one owner's; 404 for a
    malformed or empty month (a month with none of the owner's entries shows none)."""
    uf = user_filter(request, access)
    try:
        entries = reads.history_month_entries(agent=access.agent, month=month, user=uf.value)
    except InvalidInput as exc:
        raise Http404(exc.message) from exc
    if not entries and not reads.history_month_has_entries(agent=access.agent, month=month):
        raise Http404("no history in this month")
    rows = {
        "month": month,
        "file_name": names.history_month_name(month),
        "entries": entries,
    }
    return filtered_page(
        request, access, uf, tab="entries", rows=rows, template="review/history.html"
    )
