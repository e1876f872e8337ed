"""A keyset window of a session's timeline, with its compact markers placed in time and
its resets at its start, each linking to the archives made for the session."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from apps.conversations.models import CompactMarker, Message, Session
from apps.conversations.selectors import after, before
from apps.core.pagination import decode_keyset_cursor, encode_cursor
from apps.entries.models import Entry
from apps.lifecycle.models import Run, Trigger
from apps.lifecycle.selectors import ArchiveMade, session_archives_made

TIMELINE_PAGE = 100


@dataclass(frozen=True)
class TimelinePage:
    """A window of a session's messages, oldest first, with opaque cursors to the pages
    around it (None: there is nothing earlier / later)."""

    messages: list[Message]
    earlier: str | None
    later: str | None
    # The time of the message just before the window (None: the window starts the session).
    previous_at: datetime | None


def _cursor_of(message: Message) -> str:
    return encode_cursor([message.created_at, message.pk])


def parse_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    """The (time, id) a timeline cursor names; BadRequest (400), as for every cursor, when
    it is not one."""
    return decode_keyset_cursor(cursor, tie=uuid.UUID)


def _timeline_qs(session: Session) -> QuerySet[Message]:
    return Message.objects.filter(session=session).defer("embedding")


def _backwards(
    qs: QuerySet[Message], limit: int, start: int = 0
) -> tuple[list[Message], Message | None]:
    """`limit` messages read newest first from `start`, plus the one before them."""
    rows = list(qs.order_by("-created_at", "-id")[start : start + limit + 1])
    previous = rows[limit] if len(rows) > limit else None
    rows = rows[:limit]
    rows.reverse()
    return rows, previous


def timeline_page(
    *,
    session: Session,
    before_cursor: str | None = None,
    after_cursor: str | None = None,
    limit: int = TIMELINE_PAGE,
) -> TimelinePage:
    """The `limit` messages before `before_cursor`, after `after_cursor`, or by default the
    newest; no count of the session is taken, so the cost does not grow with its size."""
    qs = _timeline_qs(session)
    has_later = False
    if after_cursor:
        at, pk = parse_cursor(after_cursor)
        rows = list(qs.filter(after(at, pk)).order_by("created_at", "id")[: limit + 1])
        has_later = len(rows) > limit
        rows = rows[:limit]
        if not rows:
            return TimelinePage(messages=[], earlier=after_cursor, later=None, previous_at=at)
        previous = (
            qs.filter(before(rows[0].created_at, rows[0].pk))
            .order_by("-created_at", "-id")
            .only("id", "created_at")
            .first()
        )
    else:
        scoped = qs
        if before_cursor:
            at, pk = parse_cursor(before_cursor)
            scoped = qs.filter(before(at, pk))
            has_later = True
        rows, previous = _backwards(scoped, limit)
        if before_cursor and not rows:
            return TimelinePage(messages=[], earlier=None, later=before_cursor, previous_at=None)
    return _page(rows, previous, has_later)


def _page(rows: list[Message], previous: Message | None, has_later: bool) -> TimelinePage:
    return TimelinePage(
        messages=rows,
        earlier=_cursor_of(rows[0]) if rows and previous is not None else None,
        later=_cursor_of(rows[-1]) if rows and has_later else None,
        previous_at=previous.created_at if previous is not None else None,
    )


def timeline_around(
    *, session: Session, message_id: uuid.UUID, limit: int = TIMELINE_PAGE
) -> TimelinePage | None:
    """The page holding the message, aligned as "Earlier" links from the newest page align
    them (so both lead to the same page); None if the session has no such message."""
    qs = _timeline_qs(session)
    target = qs.filter(pk=message_id).only("id", "created_at").first()
    if target is None:
        return None
    newer = qs.filter(after(target.created_at, target.pk)).count()
    start = (newer // limit) * limit
    rows, previous = _backwards(qs, limit, start=start)
    return _page(rows, previous, has_later=start > 0)


@dataclass(frozen=True)
class ArchiveLink:
    """An archive as the timeline shows it: its name now, and its entry (None: removed)."""

    name: str
    entry_id: int | None


@dataclass(frozen=True)
class ResetNote:
    """A reset of the session: when, the archive that keeps what it deleted (None: the reset
    archived nothing, its consolidation runs took it all), and the archives of the
    compactions before it, whose markers it cleared."""

    at: datetime
    archive: ArchiveLink | None
    compacted: list[ArchiveLink]


@dataclass(frozen=True)
class SessionArchives:
    """The archives made for a session: each compact marker's, and its resets."""

    by_marker: dict[int, ArchiveLink]  # marker id -> its archive
    resets: list[ResetNote]  # oldest first


def _link(made: ArchiveMade, names_now: dict[int, str]) -> ArchiveLink:
    if made.entry_id is None or made.entry_id not in names_now:
        return ArchiveLink(name=made.name, entry_id=None)
    return ArchiveLink(name=names_now[made.entry_id], entry_id=made.entry_id)


def _marker_archives(
    markers: list[CompactMarker], made: list[ArchiveMade], names_now: dict[int, str]
) -> dict[int, ArchiveLink]:
    """Each marker's archive: the last one compaction made by that name up to the marker
    (a removed archive's name is free again for a later one)."""
    out = {}
    for marker in markers:
        found = [
            m
            for m in made
            if m.made_by == "compaction"
            and m.name == marker.archive_name
            and m.made_at <= marker.archived_at
        ]
        link = _link(found[-1], names_now) if found else None
        out[marker.pk] = link or ArchiveLink(name=marker.archive_name, entry_id=None)
    return out


def _resets(
    made: list[ArchiveMade], names_now: dict[int, str], last_reset_run: datetime | None
) -> list[ResetNote]:
    """A note per reset archive; and one for the last reset when it archived nothing (its
    runs are newer than every reset archive). Earlier resets that archived nothing show in
    the session's runs only: nothing durable tells them apart."""
    notes: list[ResetNote] = []
    compacted: list[ArchiveMade] = []
    for m in made:
        if m.made_by == "compaction":
            compacted.append(m)
            continue
        before = [_link(c, names_now) for c in compacted]
        notes.append(ResetNote(m.made_at, _link(m, names_now), before))
        compacted = []
    if last_reset_run is not None and (not notes or notes[-1].at < last_reset_run):
        before = [_link(c, names_now) for c in compacted if c.made_at <= last_reset_run]
        notes.append(ResetNote(last_reset_run, None, before))
    return notes


def session_archives(*, session: Session, markers: list[CompactMarker]) -> SessionArchives:
    """The archives made for the session (apps.lifecycle.selectors.session_archives_made:
    the change log, so of the session's owner and agent only), placed at its markers and
    its resets."""
    made = session_archives_made(session=session)
    ids = [m.entry_id for m in made if m.entry_id is not None]
    names_now = dict(
        Entry.objects.filter(agent_id=session.agent_id, pk__in=ids).values_list("id", "name")
    )
    last_reset_run = (
        Run.objects.filter(agent_id=session.agent_id, session=session, trigger=Trigger.RESET)
        .order_by("-created_at", "-id")
        .values_list("created_at", flat=True)
        .first()
    )
    return SessionArchives(
        by_marker=_marker_archives(markers, made, names_now),
        resets=_resets(made, names_now, last_reset_run),
    )


@dataclass(frozen=True)
class TimelineItem:
    """One row of the timeline: a message, a compact marker placed where it falls, or a
    reset (at the start of the session: every message left came after it)."""

    message: Message | None = None
    marker: CompactMarker | None = None
    archive: ArchiveLink | None = None  # the marker's archive
    reset: ResetNote | None = None
    hot_start: bool = False  # this message opens the hot window


def timeline_items(
    *,
    page: TimelinePage,
    markers: list[CompactMarker],
    archives: SessionArchives,
    hot_first_id: uuid.UUID | None,
) -> list[TimelineItem]:
    """The session's resets when the page starts the session; then messages interleaved
    with the markers whose cutoff falls among them: a marker goes right before the first
    message at or after its cutoff (the first hot message after that compaction), or at the
    end of the newest page when no message follows it."""
    pending = sorted(markers, key=lambda m: (m.cutoff_at, m.pk))
    previous_at = page.previous_at
    items: list[TimelineItem] = []
    if previous_at is None:
        items += [TimelineItem(reset=r) for r in archives.resets]

    def marker_item(m: CompactMarker) -> TimelineItem:
        return TimelineItem(marker=m, archive=archives.by_marker.get(m.pk))

    for message in page.messages:
        while pending and pending[0].cutoff_at <= message.created_at:
            m = pending.pop(0)
            if previous_at is None or previous_at < m.cutoff_at:
                items.append(marker_item(m))
        items.append(TimelineItem(message=message, hot_start=message.pk == hot_first_id))
        previous_at = message.created_at
    if page.later is None:
        items += [
            marker_item(m) for m in pending if previous_at is None or previous_at < m.cutoff_at
        ]
    return items
