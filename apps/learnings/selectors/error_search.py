"""Searching the agent's error records by meaning and by text. No write: callers refresh the
TTL of what they return (services.errors_touch)."""

from dataclasses import dataclass, field

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.core.errors import InvalidInput
from apps.core.replicas import on_replica
from apps.learnings.models import ErrorRecord
from apps.learnings.selectors.record_lookup import records_shown
from apps.providers.embeddings import EmbeddingError
from apps.search.legs import contains_search, vector_search
from apps.search.ranking import FusedHit, rrf


@dataclass(frozen=True)
class ErrorHit:
    record: ErrorRecord
    score: float
    legs: dict[str, float]


@dataclass(frozen=True)
class ErrorSearch:
    items: list[ErrorHit]
    degraded: list[str] = field(default_factory=list)  # ["semantic"]: query not embedded


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
