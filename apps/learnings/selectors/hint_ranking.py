"""Seed 000's hints: a tool's past failures like a new one, best first, with the rule to apply.
Hints do not write: callers refresh the TTL of what they return (services.errors_touch)."""

from dataclasses import dataclass

from django.db.models import QuerySet

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.core.scrub import scrub_text
from apps.learnings.models import ErrorRecord, Outcome
from apps.learnings.selectors.record_lookup import records_shown
from apps.learnings.services.error_records import error_key
from apps.providers.embeddings import EmbeddingError
from apps.search.legs import vector_search

# How a hint reads, by the outcome on record (seed 000: apply a resolution, avoid a strategy).
PRIORITY = {Outcome.RESOLVED: 0, Outcome.FAILED: 1, Outcome.ABANDONED: 1, Outcome.OPEN: 2}


CANDIDATES = 200  # most recent records of one tool considered for hints


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


def _similarities(
    agent: Agent, tool_name: str, text: str, qs: QuerySet[ErrorRecord]
) -> dict[int, float]:
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
