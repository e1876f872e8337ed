"""Reads for facts and categories, always scoped to one agent."""

from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Q, QuerySet

from apps.agents.models import Agent
from apps.agents.users import EVERYONE, Audience
from apps.core.errors import NotFound
from apps.core.pagination import Page, id_paginate
from apps.facts.models import Category, Fact, FactStatus, FactVersion
from apps.facts.unit_vectors import unit
from apps.providers.embeddings import vector_label
from apps.search.legs import keyword_search, vector_search
from apps.search.ranking import Hit, rrf

# Reads that show facts skip both vectors: decoding 384 floats per row (pgvector parses text)
# costs more than the query itself.
VECTORS = ("embedding", "category__embedding")
CHAIN_LIMIT = 50  # supersede chains are short; this only bounds a corrupted loop
MERGE_CANDIDATES = 50  # the review queue's merge offers this many; its search box narrows


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


def categories_nearest(
    *, agent: Agent, vector: np.ndarray, threshold: float, limit: int
) -> list[tuple[Category, float]]:
    """Categories whose name embedding has cosine >= threshold to `vector`, best first.

    An agent has tens of categories, so they are compared in numpy in one pass.
    """
    cats = list(Category.objects.filter(agent=agent, embedding__isnull=False))
    if not cats:
        return []
    matrix = np.stack([unit(c.embedding) for c in cats])
    sims = matrix @ unit(vector)
    order = sorted(range(len(cats)), key=lambda i: (-float(sims[i]), cats[i].name))
    return [(cats[i], float(sims[i])) for i in order if float(sims[i]) >= threshold][:limit]


def facts_current(*, agent: Agent, audience: Audience) -> QuerySet[Fact]:
    """The agent's facts that are not superseded, of those `audience` sees."""
    return Fact.objects.current().filter(audience.q(), agent=agent)


def facts_usable(*, agent: Agent, audience: Audience) -> QuerySet[Fact]:
    """The agent's current facts that are not waiting for review, of those `audience` sees."""
    return Fact.objects.usable().filter(audience.q(), agent=agent)


def facts_owned(*, agent: Agent, user: str) -> QuerySet[Fact]:
    """The current facts that belong to `user` exactly ("" the agent): dedup's candidates."""
    return Fact.objects.current().filter(agent=agent, user=user)


def _current(
    agent: Agent, category_ids: list[int] | None, audience: Audience, owner: str | None
) -> QuerySet[Fact]:
    if owner is not None:
        qs = facts_owned(agent=agent, user=owner)
    else:
        qs = facts_current(agent=agent, audience=audience)
    if category_ids is not None:
        qs = qs.filter(category_id__in=category_ids)
    return qs


def _load(agent: Agent, hits: list) -> list[tuple[Fact, float]]:
    facts = (
        Fact.objects.filter(agent=agent)
        .select_related("category")
        .defer(*VECTORS)
        .in_bulk([h.object_id for h in hits])
    )
    return [(facts[h.object_id], float(h.score)) for h in hits if h.object_id in facts]


def facts_nearest(
    *,
    agent: Agent,
    vector: np.ndarray,
    category_ids: list[int] | None,
    k: int,
    audience: Audience,
    owner: str | None = None,
) -> list[tuple[Fact, float]]:
    """Current facts `audience` sees (or `owner`'s alone) by cosine similarity to `vector`,
    best first (the "facts" corpus)."""
    scope = _current(agent, category_ids, audience, owner)
    hits = vector_search("facts", agent_id=agent.pk, vector=vector, limit=k, queryset=scope)
    return _load(agent, hits)


def facts_keyword(
    *,
    agent: Agent,
    query: str,
    category_ids: list[int] | None,
    k: int,
    audience: Audience,
) -> list[tuple[Fact, float]]:
    """Current facts `audience` sees by BM25 over key + value, best first."""
    scope = _current(agent, category_ids, audience, None)
    hits = keyword_search("facts", agent_id=agent.pk, query=query, limit=k, queryset=scope)
    return _load(agent, hits)


def facts_relevant(
    *,
    agent: Agent,
    query: str,
    vector: np.ndarray | None,
    min_similarity: float,
    k: int,
    audience: Audience,
) -> list[tuple[Fact, float]]:
    """Usable facts relevant to `query`: cosine >= min_similarity or a BM25 match, best first
    by reciprocal-rank fusion (keyword alone without a vector); score is the fused one."""
    if k <= 0 or not query.strip():
        return []
    usable = facts_usable(agent=agent, audience=audience)
    semantic = []
    if vector is not None:
        hits = vector_search("facts", agent_id=agent.pk, vector=vector, limit=k, queryset=usable)
        semantic = [h for h in hits if h.score >= min_similarity]
    keyword = keyword_search("facts", agent_id=agent.pk, query=query, limit=k, queryset=usable)
    return _load(agent, rrf(semantic, keyword)[:k])


def facts_salient(*, agent: Agent, threshold: float, limit: int, audience: Audience) -> list[Fact]:
    """Current facts `audience` sees whose cached salience is >= threshold, most salient
    first."""
    if limit <= 0:
        return []
    return list(
        facts_usable(agent=agent, audience=audience)
        .filter(salience__gte=threshold)
        .select_related("category")
        .defer(*VECTORS)
        .order_by("-salience", "id")[:limit]
    )


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


@dataclass(frozen=True)
class MergeCandidate:
    """A fact another may be merged into, and how it was ranked: leg "vector" (score: the
    cosine), "bm25" (score: BM25), or "" when neither leg found it (score None)."""

    fact: Fact
    leg: str
    score: float | None


def facts_merge_scope(*, agent: Agent, fact: Fact) -> QuerySet[Fact]:
    """What `fact` may be merged into: the agent's approved current facts of the same owner
    (its user, or the agent's own), `fact` itself excluded."""
    return facts_usable(agent=agent, audience=EVERYONE).filter(user=fact.user).exclude(pk=fact.pk)


def facts_merge_candidates(
    *, agent: Agent, fact: Fact, query: str = "", limit: int = MERGE_CANDIDATES
) -> list[MergeCandidate]:
    """facts_merge_scope's facts whose key or value contains `query`, most like `fact` first:
    by cosine to its vector, then by BM25 on its key and value for those the vectors miss
    (no vector yet, or none for `fact`), then the rest by category and key."""
    scope = facts_merge_scope(agent=agent, fact=fact)
    if query:
        scope = scope.filter(Q(key__icontains=query) | Q(value__icontains=query))
    hits: list[Hit] = []
    vector = _current_vector(fact)
    if vector is not None:
        hits += vector_search(
            "facts", agent_id=agent.pk, vector=vector, limit=limit, queryset=scope
        )
    if len(hits) < limit:
        rest = scope.exclude(pk__in=[h.object_id for h in hits])
        words = f"{fact.key} {fact.value}"
        hits += keyword_search("facts", agent_id=agent.pk, query=words, limit=limit, queryset=rest)
    shown = scope.select_related("category").defer(*VECTORS)
    found = shown.in_bulk([h.object_id for h in hits])
    kept = [h for h in hits if h.object_id in found]  # a fact deleted since is left out
    ranked = [MergeCandidate(found[h.object_id], h.leg, h.score) for h in kept][:limit]
    others = shown.exclude(pk__in=list(found)).order_by("category__name", "key", "id")
    return ranked + [MergeCandidate(f, "", None) for f in others[: limit - len(ranked)]]


def _current_vector(fact: Fact) -> np.ndarray | None:
    """The fact's vector if the configured embedder made it (others compare to nothing)."""
    if fact.embedding is None or fact.embedding_model != vector_label():
        return None
    return np.asarray(fact.embedding, dtype=np.float32)


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
