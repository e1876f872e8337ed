"""Facts by id, pages, versions and chains, counts, and what an audience or a user has."""

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from apps.agents.models import Agent
from apps.agents.users import EVERYONE, Audience
from apps.core.errors import NotFound
from apps.core.pagination import Page, id_paginate
from apps.facts.models import Fact, FactStatus, FactVersion

# Reads that show facts skip both vectors: decoding 384 floats per row (pgvector parses text)
# costs more than the query itself.
VECTORS = ("embedding", "category__embedding")


CHAIN_LIMIT = 50  # supersede chains are short; this only bounds a corrupted loop


def fact_get(*, agent: Agent, fact_id: int, audience: Audience) -> Fact:
    """The agent's fact, if `audience` sees it; NotFound otherwise (another user's too)."""
    qs = Fact.objects.select_related("category").filter(audience.q(), agent=agent)
    fact = qs.filter(pk=fact_id).first()
    if fact is None:
        raise NotFound("fact not found", loc=["path", "fact_id"])
    return fact


def facts_page(
    *,
    agent: Agent,
    category: str | None,
    include_superseded: bool,
    after_id: int | None,
    limit: int,
    audience: Audience,
) -> Page[Fact]:
    """Facts `audience` sees in id order; current ones only unless `include_superseded`."""
    qs = Fact.objects.select_related("category").filter(audience.q(), agent=agent)
    qs = qs.defer(*VECTORS)
    if not include_superseded:
        qs = qs.current()
    if category:
        qs = qs.filter(category__name=category)
    return id_paginate(qs, after_id=after_id, limit=limit)


def fact_versions(*, fact: Fact) -> QuerySet[FactVersion]:
    return FactVersion.objects.filter(fact=fact).order_by("number")


def facts_current(*, agent: Agent, audience: Audience) -> QuerySet[Fact]:
    """The agent's facts that are not superseded, of those `audience` sees."""
    return Fact.objects.current().filter(audience.q(), agent=agent)


def facts_usable(*, agent: Agent, audience: Audience) -> QuerySet[Fact]:
    """The agent's current facts that are not waiting for review, of those `audience` sees."""
    return Fact.objects.usable().filter(audience.q(), agent=agent)


def facts_owned(*, agent: Agent, user: str) -> QuerySet[Fact]:
    """The current facts that belong to `user` exactly ("" the agent): dedup's candidates."""
    return Fact.objects.current().filter(agent=agent, user=user)


def facts_by_category(*, agent: Agent) -> QuerySet[Fact]:
    """Current facts (approved and pending) by category name, then most salient first."""
    return (
        facts_current(agent=agent, audience=EVERYONE)
        .select_related("category")
        .defer(*VECTORS)
        .order_by("category__name", "-salience", "id")
    )


def facts_pending(*, agent: Agent) -> list[Fact]:
    """Facts waiting for review, oldest first, each with `version_count`."""
    return list(
        facts_current(agent=agent, audience=EVERYONE)
        .filter(status=FactStatus.PENDING)
        .select_related("category", "session")
        .defer(*VECTORS)
        .annotate(version_count=Count("versions"))
        .order_by("created_at", "id")
    )


def fact_counts(*, agent: Agent) -> dict[str, int]:
    """Current facts by status: {"active": n, "pending": m}."""
    rows = facts_current(agent=agent, audience=EVERYONE).values("status").annotate(n=Count("pk"))
    counts = dict.fromkeys(FactStatus.values, 0)
    counts.update({r["status"]: r["n"] for r in rows})
    return counts


@dataclass(frozen=True)
class Chain:
    predecessors: list[Fact]  # the facts this one superseded (or absorbed), oldest first
    successors: list[Fact]  # what superseded it, then what superseded that, in order


def fact_chain(*, fact: Fact) -> Chain:
    """The supersede chain around `fact`, both ways (a merge may give several predecessors)."""
    base = Fact.objects.filter(agent_id=fact.agent_id).defer(*VECTORS).select_related("category")
    predecessors: list[Fact] = []
    frontier, seen = [fact.pk], {fact.pk}
    while frontier and len(predecessors) < CHAIN_LIMIT:
        found = [f for f in base.filter(superseded_by_id__in=frontier) if f.pk not in seen]
        predecessors += found
        seen.update(f.pk for f in found)
        frontier = [f.pk for f in found]
    successors: list[Fact] = []
    current = fact.superseded_by_id
    while current is not None and current not in seen and len(successors) < CHAIN_LIMIT:
        nxt = base.filter(pk=current).first()
        if nxt is None:
            break
        successors.append(nxt)
        seen.add(current)
        current = nxt.superseded_by_id
    predecessors.sort(key=lambda f: (f.valid_from, f.pk))
    return Chain(predecessors=predecessors, successors=successors)


def facts_of_user(*, agent: Agent, user: str) -> QuerySet[Fact]:
    """Every fact of one end user (superseded ones too), with versions, in id order."""
    qs = Fact.objects.filter(agent=agent, user=user).select_related("category")
    return qs.defer(*VECTORS).prefetch_related("versions").order_by("id")


def facts_values(*, agent: Agent, user: str) -> list[str]:
    """Every value one end user's facts hold (superseded ones too), in id order: what the
    scrubber masks in their failures besides its patterns (issue 39). None for the agent."""
    if not user:
        return []
    qs = Fact.objects.filter(agent=agent, user=user).order_by("id")
    return list(qs.values_list("value", flat=True))
