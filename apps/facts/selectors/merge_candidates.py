"""The review queue's merge offers: facts close to a pending one, by vector and by text."""

from dataclasses import dataclass

import numpy as np
from django.db.models import Q, QuerySet

from apps.agents.models import Agent
from apps.agents.users import EVERYONE
from apps.facts.models import Fact
from apps.facts.selectors.fact_lookup import VECTORS, facts_usable
from apps.providers.embeddings import vector_label
from apps.search.legs import keyword_search, vector_search
from apps.search.ranking import Hit

MERGE_CANDIDATES = 50  # the review queue's merge offers this many; its search box narrows


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
