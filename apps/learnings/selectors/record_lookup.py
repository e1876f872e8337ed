"""Error records and learnings by id and in pages, each shown as its reader may see it."""

import copy
import uuid
from collections.abc import Sequence
from typing import TypeVar

from django.db.models import Model, Q, QuerySet

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.core.errors import NotFound
from apps.core.pagination import Page, keyset_paginate
from apps.learnings.models import ErrorDetail, ErrorRecord, Learning, LearningStatus, Outcome

M = TypeVar("M", bound=Model)


def _one(qs: QuerySet[M], pk: int, *, what: str, param: str) -> M:
    """The row `pk` of `qs`, or NotFound naming the path parameter."""
    row = qs.filter(pk=pk).first()
    if row is None:
        raise NotFound(f"{what} not found", loc=["path", param])
    return row


def _given(**filters: str | None) -> dict[str, str]:
    """The filters that are set: a blank or missing one does not filter."""
    return {name: value for name, value in filters.items() if value}


def _newest_first(qs: QuerySet[M], *, cursor: str | None, limit: int) -> Page[M]:
    return keyset_paginate(
        qs, fields=("created_at", "id"), cursor=cursor, limit=limit, descending=True
    )


def _live(agent: Agent) -> QuerySet[ErrorRecord]:
    """The agent's records not past their expiry, without their vectors."""
    return ErrorRecord.objects.live().filter(agent=agent).defer("embedding")


RAW_RECORD = ("error", "arguments", "context", "strategy", "resolution")


def _overlaid(row: M, detail: ErrorDetail | None, fields: Sequence[str]) -> M:
    """A copy of the shared `row` showing the detail's raw text, each field it holds (never
    saved: the row stays de-identified)."""
    if detail is None:
        return row
    shown = copy.copy(row)
    for name in fields:
        if value := getattr(detail, name):
            setattr(shown, name, value)
    return shown


def records_shown(records: Sequence[ErrorRecord], audience: Audience) -> list[ErrorRecord]:
    """The records as `audience` reads them (issue 39): de-identified, but a user's own
    failures with their raw text. The agent's or every user's reads see no one's raw."""
    if not audience.user or not records:
        return list(records)
    details = ErrorDetail.objects.filter(record__in=[r.pk for r in records], user=audience.user)
    by_record = {d.record_id: d for d in details}
    return [_overlaid(r, by_record.get(r.pk), RAW_RECORD) for r in records]


def learnings_shown(learnings: Sequence[Learning], audience: Audience) -> list[Learning]:
    """The learnings as `audience` reads them: an error learning from this user's own
    failure with their raw text (their arguments and request), every other de-identified."""
    if not audience.user or not learnings:
        return list(learnings)
    details = ErrorDetail.objects.filter(
        learning__in=[row.pk for row in learnings], user=audience.user
    )
    by_learning = {d.learning_id: d for d in details}
    return [_overlaid(row, by_learning.get(row.pk), ("content",)) for row in learnings]


def _shown_page(page: Page[M], shown: list[M]) -> Page[M]:
    return Page(items=shown, next_cursor=page.next_cursor)


def error_get(*, agent: Agent, error_id: int, audience: Audience) -> ErrorRecord:
    """One live record as `audience` reads it (records_shown); NotFound otherwise. With
    AGENT_ONLY, the shared row itself: what a write changes."""
    record = _one(_live(agent), error_id, what="error record", param="error_id")
    return records_shown([record], audience)[0]


def errors_page(
    *,
    agent: Agent,
    audience: Audience,
    tool_name: str | None,
    outcome: str | None,
    cursor: str | None,
    limit: int,
    q: str | None = None,
) -> Page[ErrorRecord]:
    """The agent's live error records, newest first, as `audience` reads them; `q`: a
    substring of the tool name or the (de-identified) error."""
    qs = _live(agent).filter(**_given(tool_name=tool_name, outcome=outcome))
    if q:
        qs = qs.filter(Q(tool_name__icontains=q) | Q(error__icontains=q))
    page = _newest_first(qs, cursor=cursor, limit=limit)
    return _shown_page(page, records_shown(page.items, audience))


def errors_first_seen_in(*, agent: Agent, session_id: uuid.UUID) -> set[int]:
    """Open records a session's own failures created and nothing has hit since."""
    return set(
        ErrorRecord.objects.filter(
            agent=agent, session_id=session_id, outcome=Outcome.OPEN, hit_count=0
        ).values_list("pk", flat=True)
    )


def learning_get(*, agent: Agent, learning_id: int, audience: Audience) -> Learning:
    """The learning if `audience` sees it, as it reads it (learnings_shown); NotFound
    otherwise."""
    qs = Learning.objects.filter(audience.q(), agent=agent)
    learning = _one(qs, learning_id, what="learning", param="learning_id")
    return learnings_shown([learning], audience)[0]


def learnings_page(
    *,
    agent: Agent,
    kind: str | None,
    status: str | None,
    cursor: str | None,
    limit: int,
    audience: Audience,
    q: str | None = None,
) -> Page[Learning]:
    """The learnings `audience` sees, newest first, as it reads them (learnings_shown); `q`:
    a substring of the (de-identified) content."""
    qs = Learning.objects.filter(audience.q(), agent=agent, **_given(kind=kind, status=status))
    if q:
        qs = qs.filter(content__icontains=q)
    page = _newest_first(qs, cursor=cursor, limit=limit)
    return _shown_page(page, learnings_shown(page.items, audience))


def learnings_active(*, agent: Agent, audience: Audience) -> list[Learning]:
    """The learnings get_context injects (seed 001): active ones `audience` sees, oldest
    first, as it reads them (learnings_shown)."""
    rows = learnings_searchable(agent=agent, audience=audience).order_by("kind", "created_at", "id")
    return learnings_shown(list(rows), audience)


def learnings_searchable(*, agent: Agent, audience: Audience) -> QuerySet[Learning]:
    """The learnings memory_search may return: the active ones `audience` sees (a pending
    learning waits for review, an archived one is retired)."""
    return Learning.objects.filter(audience.q(), agent=agent, status=LearningStatus.ACTIVE)


def error_details_of_user(*, agent: Agent, user: str) -> QuerySet[ErrorDetail]:
    """`user`'s raw texts of their failures (their data-access export), oldest first."""
    return (
        ErrorDetail.objects.filter(agent=agent, user=user)
        .select_related("record", "learning")
        .order_by("created_at", "id")
    )
