"""The archives compaction and resets made for a session, as the entries' change log
recorded them (the review timeline's)."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from apps.conversations.models import Session
from apps.entries.models import Action, EntryChange, Kind
from apps.lifecycle.services.compaction import is_compaction_detail
from apps.lifecycle.services.reset import reset_detail


@dataclass(frozen=True)
class ArchiveMade:
    """An archive a compaction or a reset made for a session, as the entries' change log
    (which outlives the entry) recorded it."""

    entry_id: int | None  # None: removed since
    name: str  # its name when made (a renamed archive keeps it as an alias)
    made_by: str  # "compaction" or "reset"
    made_at: datetime


# Who writes a session's archives (EntryChange.changed_by), and the detail naming it.
_ARCHIVE_WRITERS: dict[str, Callable[[Session, str], bool]] = {
    "compaction": is_compaction_detail,
    "reset": lambda session, detail: detail == reset_detail(session),
}


def session_archives_made(*, session: Session) -> list[ArchiveMade]:
    """The archives compaction and resets made for the session, oldest first: the "add"
    changes by those writers, of the session's owner, whose detail names the session and
    which came after its creation (an earlier session of the same key, removed since, made
    the older ones)."""
    changes = EntryChange.objects.filter(
        agent_id=session.agent_id,
        user=session.user,
        action=Action.ADD,
        kind=Kind.ARCHIVE,
        changed_by__in=list(_ARCHIVE_WRITERS),
        changed_at__gte=session.created_at,
        detail__startswith=f"session {session.key}",
    )
    changes = changes.only("entry_id", "entry_name", "changed_by", "changed_at", "detail")
    changes = changes.order_by("changed_at", "id")
    return [
        ArchiveMade(
            entry_id=c.entry_id, name=c.entry_name, made_by=c.changed_by, made_at=c.changed_at
        )
        for c in changes
        # The exact check: startswith is case-insensitive on SQLite, and "a: b" starts as "a".
        if _ARCHIVE_WRITERS[c.changed_by](session, c.detail)
    ]
