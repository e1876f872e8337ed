"""Reads for error memory and learnings, always scoped to one agent. Searches and hints do
not write: callers refresh the TTL of what they return (services.errors_touch)."""

import copy
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from django.db.models import Model, Q, QuerySet

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.core.errors import InvalidInput, NotFound
from apps.core.pagination import Page, keyset_paginate
from apps.core.replicas import on_replica
from apps.core.scrub import scrub_text
from apps.learnings.models import ErrorDetail, ErrorRecord, Learning, LearningStatus, Outcome
from apps.learnings.services.errors import error_key
from apps.providers.embeddings import EmbeddingError
from apps.search.legs import contains_search, vector_search
from apps.search.ranking import FusedHit, rrf

# How a hint reads, by the outcome on record (seed 000: apply a resolution, avoid a strategy).
PRIORITY = {Outcome.RESOLVED: 0, Outcome.FAILED: 1, Outcome.ABANDONED: 1, Outcome.OPEN: 2}
CANDIDATES = 200  # most recent records of one tool considered for hints

M = TypeVar("M", bound=Model)


def hint_rule(record: ErrorRecord) -> tuple[str, str]:
    """(rule, text): "apply: <resolution>", "avoid: <strategy>" or "seen before"."""
    if record.outcome == Outcome.RESOLVED:
        return "apply", f"apply: {record.resolution}"
    if record.outcome in (Outcome.FAILED, Outcome.ABANDONED):
        return "avoid", f"avoid: {record.strategy}"
    return "seen before", "seen before"


@dataclass(frozen=True)
class Hint:
    record: ErrorRecord
    rule: str
    text: str
    similarity: float  # to the failing call's error: 1.0 same normalised text, else cosine


@dataclass(frozen=True)
class ErrorHit:
    record: ErrorRecord
    score: float
    legs: dict[str, float]


@dataclass(frozen=True)
class ErrorSearch:
    items: list[ErrorHit]
    degraded: list[str] = field(default_factory=list)  # ["semantic"]: query not embedded


def _one(qs: QuerySet[M], pk: int, *, what: str, param: str) -> M:
    """The row `pk` of `qs`, or NotFound naming the path parameter."""
    row = qs.filter(pk=pk).first()
    if row is None:
        raise NotFound(f"{what} not found", loc=["path", param])
    return row


def _given(**filters: str | None) -> dict[str, str]:
    """The filters that are set: a blank or missing one does not filter."""
    return {name: value for name, value in filters.items() if value}


def _newest_first(qs: QuerySet, *, cursor: str | None, limit: int) -> Page:
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


def _similarities(agent: Agent, tool_name: str, text: str, qs: QuerySet) -> dict[int, float]:
    try:
        hits = vector_search(
            "errors",
            agent_id=agent.pk,
            query=f"{tool_name}: {text}",
            limit=CANDIDATES,
            queryset=qs,
            exact=True,
        )
    except EmbeddingError:
        return {}  # without vectors, exact text matches still rank first
    return {h.object_id: float(h.score) for h in hits}


def error_hints(
    *,
    agent: Agent,
    tool_name: str,
    error: str,
    audience: Audience,
    exclude: set[int] | None = None,
) -> list[Hint]:
    """Seed 000's hints for a failing tool: its live records, the most similar to this error
    first, then resolved before failed or abandoned before open, then the newest; each as
    `audience` reads it (records_shown). `error` is compared as given and de-identified."""
    limit = agent.config.error_hints_limit
    if limit <= 0:
        return []
    qs = ErrorRecord.objects.live().filter(agent=agent, tool_name=tool_name)
    if exclude:
        qs = qs.exclude(pk__in=exclude)
    records = list(qs.defer("embedding").order_by("-created_at", "-id")[:CANDIDATES])
    if not records:
        return []
    keys = {error_key(text) for text in (error, scrub_text(error))} if error else set()
    cosine = _similarities(agent, tool_name, error, qs) if error else {}
    scored = []
    for r in records:
        similarity = 1.0 if r.normalized in keys else cosine.get(r.pk, 0.0)
        scored.append((-round(similarity, 6), PRIORITY[r.outcome], -r.created_at.timestamp(), r))
    scored.sort(key=lambda row: row[:3])
    best = scored[:limit]
    shown = records_shown([r for *_, r in best], audience)
    return [Hint(r, *hint_rule(r), similarity=-s) for (s, *_), r in zip(best, shown, strict=True)]


def errors_first_seen_in(*, agent: Agent, session_id: uuid.UUID) -> set[int]:
    """Open records a session's own failures created and nothing has hit since."""
    return set(
        ErrorRecord.objects.filter(
            agent=agent, session_id=session_id, outcome=Outcome.OPEN, hit_count=0
        ).values_list("pk", flat=True)
    )


@on_replica
def errors_search(
    *, agent: Agent, query: str, tool_name: str | None, k: int, audience: Audience
) -> ErrorSearch:
    """Seed 000's search_error_memory: substring and vector matches over the de-identified
    records, fused by RRF, each as `audience` reads it; the substring leg alone, with
    `degraded` ["semantic"], when the query cannot be embedded."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must not be empty", loc=["body", "query"])
    if "\x00" in query:
        raise InvalidInput("query must not contain NUL characters", loc=["body", "query"])
    qs = ErrorRecord.objects.live().filter(agent=agent)
    if tool_name:
        qs = qs.filter(tool_name=tool_name)
    legs = [
        contains_search(
            "errors",
            agent_id=agent.pk,
            text=query.strip(),
            limit=k,
            field="error",
            queryset=qs,
            order_by=("-created_at", "-id"),
        )
    ]
    degraded = []
    try:
        legs.append(vector_search("errors", agent_id=agent.pk, query=query, limit=k, queryset=qs))
    except EmbeddingError:
        degraded.append("semantic")  # the substring leg still answers
    fused: list[FusedHit] = rrf(*legs)[:k]
    found = qs.defer("embedding").in_bulk([h.object_id for h in fused])
    rows = {r.pk: r for r in records_shown(list(found.values()), audience)}
    items = [
        ErrorHit(rows[h.object_id], h.score, {leg: r.score for leg, r in h.legs.items()})
        for h in fused
        if h.object_id in rows
    ]
    return ErrorSearch(items=items, degraded=degraded)


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
