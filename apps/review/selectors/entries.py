"""An agent's entries grouped for browsing, its history months, one entry's change log;
`user` keeps each list to one owner (apps/review/selectors/owners.py), None to none."""

from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import Count
from django.db.models.functions import TruncMonth

from apps.agents.models import Agent
from apps.entries import names
from apps.entries.models import Entry, EntryChange, Kind
from apps.lifecycle.models import HistoryEntry
from apps.lifecycle.services.history import month_range
from apps.review.selectors.owners import owned


@dataclass
class EntryGroups:
    # The agent's own documents, then each user's (issue 26: a user's MEMORY.md and USER.md
    # sit beside the agent's); each owner's MEMORY.md first, then the reserved order.
    documents: list[Entry] = field(default_factory=list)
    daily_logs: list[Entry] = field(default_factory=list)  # newest first
    notes: list[Entry] = field(default_factory=list)
    archives: list[Entry] = field(default_factory=list)

    def all(self) -> list[list[Entry]]:
        return [self.documents, self.daily_logs, self.notes, self.archives]


@dataclass(frozen=True)
class HistoryMonth:
    month: str  # YYYY-MM
    count: int


_DOCUMENT_ORDER = (names.MEMORY, *[n for n in names.RESERVED_DOCUMENTS if n != names.MEMORY])
_DOCUMENT_RANK = {name: i for i, name in enumerate(_DOCUMENT_ORDER)}


def entry_groups(*, agent: Agent, user: str | None = None) -> EntryGroups:
    """The agent's entries (the owner's) for browsing: workspace documents (MEMORY.md
    first), daily logs, notes and archives; contents are not loaded."""
    groups = EntryGroups()
    rows = owned(Entry.objects.filter(agent=agent), user).defer("content").order_by("name", "id")
    reserved = []
    for entry in rows:
        if entry.name in names.RESERVED_DOCUMENTS:
            reserved.append(entry)
        elif entry.kind == Kind.ARCHIVE:
            groups.archives.append(entry)
        elif names.is_document(entry.name):
            groups.daily_logs.append(entry)
        else:
            groups.notes.append(entry)
    groups.documents = sorted(reserved, key=lambda e: (e.user, _DOCUMENT_RANK[e.name]))
    groups.daily_logs.reverse()
    return groups


def history_months(*, agent: Agent, user: str | None = None) -> list[HistoryMonth]:
    """The months (UTC) that have (the owner's) history entries, newest first, with their
    counts."""
    rows = (
        owned(HistoryEntry.objects.filter(agent=agent), user)
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


def history_month_entries(
    *, agent: Agent, month: str, user: str | None = None
) -> list[HistoryEntry]:
    """The month's (the owner's) history entries, oldest first; InvalidInput for a
    malformed month."""
    start, end = month_range(month)
    qs = HistoryEntry.objects.filter(agent=agent, created_at__gte=start, created_at__lt=end)
    return list(owned(qs, user).defer("embedding").order_by("created_at", "id"))


def history_month_has_entries(*, agent: Agent, month: str) -> bool:
    """Whether the agent has any history entry in the month; InvalidInput as above."""
    start, end = month_range(month)
    qs = HistoryEntry.objects.filter(agent=agent, created_at__gte=start, created_at__lt=end)
    return qs.exists()


def entry_by_id(*, agent: Agent, entry_id: int) -> Entry | None:
    """The agent's entry with its aliases, or None."""
    return Entry.objects.filter(agent=agent, pk=entry_id).prefetch_related("aliases").first()


def entry_changes(*, entry: Entry) -> list[EntryChange]:
    """The entry's change log, newest first (each write keeps the content before it)."""
    return list(EntryChange.objects.filter(entry=entry).order_by("-id"))
