"""An agent's entries grouped for browsing, its history months, one entry's change log."""

from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import Count
from django.db.models.functions import TruncMonth

from apps.agents.models import Agent
from apps.entries import names
from apps.entries.models import Entry, EntryChange, Kind
from apps.lifecycle.models import HistoryEntry
from apps.lifecycle.services.history import month_range


@dataclass
class EntryGroups:
    documents: list[Entry] = field(default_factory=list)  # MEMORY.md first, then reserved order
    daily_logs: list[Entry] = field(default_factory=list)  # newest first
    notes: list[Entry] = field(default_factory=list)
    archives: list[Entry] = field(default_factory=list)


@dataclass(frozen=True)
class HistoryMonth:
    month: str  # YYYY-MM
    count: int


_DOCUMENT_ORDER = (names.MEMORY, *[n for n in names.RESERVED_DOCUMENTS if n != names.MEMORY])


def entry_groups(*, agent: Agent) -> EntryGroups:
    """The agent's entries for browsing: workspace documents (MEMORY.md first), daily logs,
    notes and archives; contents are not loaded."""
    groups = EntryGroups()
    rows = Entry.objects.filter(agent=agent).defer("content").order_by("name")
    reserved = {}
    for entry in rows:
        if entry.name in names.RESERVED_DOCUMENTS:
            reserved[entry.name] = entry
        elif entry.kind == Kind.ARCHIVE:
            groups.archives.append(entry)
        elif names.is_document(entry.name):
            groups.daily_logs.append(entry)
        else:
            groups.notes.append(entry)
    groups.documents = [reserved[n] for n in _DOCUMENT_ORDER if n in reserved]
    groups.daily_logs.reverse()
    return groups


def history_months(*, agent: Agent) -> list[HistoryMonth]:
    """The months (UTC) that have history entries, newest first, with their counts."""
    rows = (
        HistoryEntry.objects.filter(agent=agent)
        .annotate(month=TruncMonth("created_at", tzinfo=UTC))
        .values("month")
        .annotate(n=Count("pk"))
        .order_by("-month")
    )
    out = []
    for row in rows:
        month = row["month"]
        month = datetime.fromisoformat(month) if isinstance(month, str) else month
        out.append(HistoryMonth(month=f"{month:%Y-%m}", count=row["n"]))
    return out


def history_month_entries(*, agent: Agent, month: str) -> list[HistoryEntry]:
    """The month's history entries, oldest first; InvalidInput for a malformed month."""
    start, end = month_range(month)
    return list(
        HistoryEntry.objects.filter(agent=agent, created_at__gte=start, created_at__lt=end)
        .defer("embedding")
        .order_by("created_at", "id")
    )


def entry_by_id(*, agent: Agent, entry_id: int) -> Entry | None:
    """The agent's entry with its aliases, or None."""
    return Entry.objects.filter(agent=agent, pk=entry_id).prefetch_related("aliases").first()


def entry_changes(*, entry: Entry) -> list[EntryChange]:
    """The entry's change log, newest first (each write keeps the content before it)."""
    return list(EntryChange.objects.filter(entry=entry).order_by("-id"))
