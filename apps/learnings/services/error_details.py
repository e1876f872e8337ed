"""Issue 39: the agent keeps the lesson, not the person. A failure from a user's session is
stored twice: de-identified in the shared row (an ErrorRecord, an error Learning) that every
reader sees, and as given in an ErrorDetail that only that user's reads see.

`Origin` is whose failure it is: the session's user ("" the agent's) and the terms the
scrubber masks besides its patterns (the composition layer gathers them from the user's
facts: this app does not read facts).
"""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict, Unpack

from django.utils import timezone
from pydantic import JsonValue

from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.core.scrub import Scrubber
from apps.learnings.models import ErrorDetail, ErrorRecord, Learning


class RawText(TypedDict, total=False):
    """What an ErrorDetail keeps as the user gave it (the shared row keeps it scrubbed)."""

    error: str
    arguments: dict[str, JsonValue]
    context: dict[str, JsonValue]
    request: str
    strategy: str
    resolution: str
    content: str


@dataclass(frozen=True)
class Origin:
    """Where a failure comes from: `user` ("" the agent, or a caller without a user), with
    the `terms` of theirs to mask (their facts' names and values), and their session."""

    user: str = AGENT
    terms: Sequence[str] = ()
    session_id: uuid.UUID | None = None
    session_key: str = ""

    @property
    def scrubber(self) -> Scrubber:
        return Scrubber(user=self.user, terms=tuple(self.terms))

    @property
    def personal(self) -> bool:
        """Whether the raw text is someone's, kept for them in an ErrorDetail."""
        return bool(self.user)

    @property
    def shared_session_key(self) -> str:
        """The session key a shared row may show: a user's session's key is theirs."""
        return "" if self.user else self.session_key


def detail_keep(
    *,
    agent: Agent,
    origin: Origin,
    record: ErrorRecord | None = None,
    learning: Learning | None = None,
    **raw: Unpack[RawText],
) -> ErrorDetail | None:
    """Keep the user's raw text of `record` or `learning` (the latest occurrence replaces
    the one before). Nothing for the agent's own failures: no user reads it raw."""
    if not origin.personal:
        return None
    now = timezone.now()
    found = ErrorDetail.objects.filter(record=record, learning=learning, user=origin.user).first()
    fields = {"session_id": origin.session_id, "session_key": origin.session_key, **raw}
    if found is None:
        return ErrorDetail.objects.create(
            agent=agent,
            record=record,
            learning=learning,
            user=origin.user,
            created_at=now,
            updated_at=now,
            **fields,
        )
    for name, value in fields.items():
        setattr(found, name, value)
    found.updated_at = now
    found.save(update_fields=[*fields, "updated_at"])
    return found


def detail_update(*, record: ErrorRecord, user: str, **raw: str) -> int:
    """The user's raw strategy or resolution of a record they have a detail of."""
    if not user or not raw:
        return 0
    return ErrorDetail.objects.filter(record=record, user=user).update(
        updated_at=timezone.now(), **raw
    )
