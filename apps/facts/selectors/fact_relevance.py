"""Facts by relevance: nearest by vector, BM25, fused for recall, and most salient."""

from collections.abc import Sequence

import numpy as np
from django.db.models import QuerySet

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.facts.models import Category, Fact
from apps.facts.selectors.fact_lookup import VECTORS, facts_current, facts_owned, facts_usable
from apps.facts.unit_vectors import unit
from apps.search.legs import keyword_search, vector_search
from apps.search.ranking import FusedHit, Hit, rrf


def categories_nearest(
    *, agent: Agent, vector: np.ndarray, threshold: float, limit: int
) -> list[tuple[Category, float]]:
    """Categories whose name embedding has cosine >= threshold to `vector`, best first.

    An agent has tens of categories, so they are compared in numpy in one pass.
    """
    found = Category.objects.filter(agent=agent, embedding__isnull=False)
    rows = [(c, c.embedding) for c in found if c.embedding is not None]  # as the query says
    if not rows:
        return []
    cats = [c for c, _ in rows]
    matrix = np.stack([unit(v) for _, v in rows])
    sims = matrix @ unit(vector)
    order = sorted(range(len(cats)), key=lambda i: (-float(sims[i]), cats[i].name))
    return [(cats[i], float(sims[i])) for i in order if float(sims[i]) >= threshold][:limit]


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


def _load(agent: Agent, hits: Sequence[Hit | FusedHit]) -> list[tuple[Fact, float]]:
    facts = (
        Fact.objects.filter(agent=agent)
        .select_related("category")
        .defer(*VECTORS)
        .in_bulk([h.object_id for h in hits])
    )
    return [(facts[h.object_id], float(h.score)) for h in hits if h.object_id in facts]


def facts_found(
    *,
    agent: Agent,
    category_ids: list[int] | None,
    k: int,
    audience: Audience,
    vector: np.ndarray | None = None,
    query: str = "",
    owner: str | None = None,
) -> list[tuple[Fact, float]]:
    """Current facts `audience` sees (or `owner`'s alone), best first (the "facts" corpus):
    by cosine similarity to `vector` when there is one, else by BM25 of `query` over key +
    value."""
    scope = _current(agent, category_ids, audience, owner)
    if vector is not None:
        hits = vector_search("facts", agent_id=agent.pk, vector=vector, limit=k, queryset=scope)
    else:
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
