"""The summary and flush cursors and compaction's cut: compare and set under the
session meta's row lock."""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Sum

from apps.conversations import working_memory
from apps.conversations.models import CompactMarker, Message, Session, SessionMeta, Summary


def _locked_meta(session: Session) -> SessionMeta:
    SessionMeta.objects.get_or_create(session=session)
    return SessionMeta.objects.select_for_update().get(session=session)


@dataclass(frozen=True)
class Cursor:
    """A position in a session's message order: (created_at, id)."""

    at: datetime
    id: uuid.UUID

    @classmethod
    def of(cls, message: Message) -> "Cursor":
        return cls(at=message.created_at, id=message.id)

    @classmethod
    def read(cls, meta: SessionMeta | None, name: str) -> "Cursor | None":
        """The cursor kept in `meta.<name>` and `meta.<name>_id` (None when unset)."""
        at = getattr(meta, name) if meta is not None else None
        return cls(at=at, id=getattr(meta, f"{name}_id")) if at is not None else None


def _swap_cursor(meta: SessionMeta, name: str, cursor: Cursor, expected: Cursor | None) -> bool:
    if Cursor.read(meta, name) != expected:
        return False
    setattr(meta, name, cursor.at)
    setattr(meta, f"{name}_id", cursor.id)
    meta.save(update_fields=[name, f"{name}_id", "updated_at"])
    return True


def summary_write(
    *, session: Session, content: str, cursor: Cursor, expected: Cursor | None
) -> bool:
    """Save the rolling summary and advance its cursor, only if the cursor is still
    `expected` (compare and set); False when another run moved it first. Atomic."""
    with transaction.atomic():
        if not _swap_cursor(_locked_meta(session), "summary_cursor", cursor, expected):
            return False
        Summary.objects.update_or_create(session=session, defaults={"content": content})
    return True


def flush_cursor_write(*, session: Session, cursor: Cursor, expected: Cursor | None) -> bool:
    """Advance the flush cursor if it is still `expected` (compare and set). Atomic."""
    with transaction.atomic():
        return _swap_cursor(_locked_meta(session), "flush_cursor", cursor, expected)


@dataclass(frozen=True)
class WindowCut:
    """Where a compaction cuts the hot part: `prefix` leaves it, and start_at moves to
    `cutoff_at` (the first message kept) if it is still `expected_start_at`."""

    prefix: Sequence[Message]
    cutoff_at: datetime
    expected_start_at: datetime | None


def compact_marker_add(
    *, session: Session, cut: WindowCut, archive_name: str, archived_at: datetime
) -> CompactMarker | None:
    """Move start_at to the cut and append a compact marker for its prefix, if start_at is
    still what the cut expects; None otherwise. No message is deleted. Atomic."""
    prefix, cutoff_at = cut.prefix, cut.cutoff_at
    with transaction.atomic():
        meta = _locked_meta(session)
        if meta.start_at != cut.expected_start_at:
            return None
        hot = Message.objects.filter(session=session, created_at__gte=cutoff_at)
        meta.start_at = cutoff_at
        meta.hot_bytes = hot.aggregate(n=Sum("byte_size"))["n"] or 0
        meta.save(update_fields=["start_at", "hot_bytes", "updated_at"])
        marker = CompactMarker.objects.create(
            agent_id=session.agent_id,
            session=session,
            archive_name=archive_name,
            archived_at=archived_at,
            cutoff_at=cutoff_at,
            first_message_at=prefix[0].created_at,
            last_message_at=prefix[-1].created_at,
            message_count=len(prefix),
            bytes=sum(m.byte_size for m in prefix),
        )
        working_memory.invalidate(session.id)
    return marker
