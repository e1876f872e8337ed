"""memory_search (seed 001): one ranked list over workspace documents, entries and facts."""

from dataclasses import dataclass

from apps.agents.models import Agent
from apps.core.errors import InvalidInput
from apps.entries import names
from apps.entries.models import Entry
from apps.facts import selectors as fact_selectors
from apps.facts.models import Fact
from apps.facts.services import embed
from apps.memory import search
from apps.search.ranking import Hit, rrf


@dataclass(frozen=True)
class MemoryHit:
    source: str  # document | entry | fact
    id: int
    name: str  # entry name, or "category/key" for a fact
    content: str
    score: float  # reciprocal-rank-fusion score
    legs: dict[str, float]  # each leg that found it: its own score (bm25, cosine)


def memory_search(*, agent: Agent, query: str, k: int | None = None) -> list[MemoryHit]:
    """BM25 over entries (documents included) and vector + keyword over facts, fused by RRF."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must not be empty", loc=["body", "query"])
    k = k or agent.config.memory_search_k
    depth = max(k * 2, 20)  # each leg ranks deeper than k so fusion has something to fuse
    entry_leg = [
        Hit(("entry", pk), score, "bm25")
        for pk, score in search.entry_keyword_hits(agent=agent, query=query, limit=depth)
    ]
    fact_keyword = [
        Hit(("fact", pk), score, "bm25")
        for pk, score in search.fact_keyword_hits(agent=agent, query=query, limit=depth)
    ]
    emb = embed(query)
    fact_vector = (
        [
            Hit(("fact", pk), score, "vector")
            for pk, score in search.fact_vector_hits(agent=agent, vector=emb.vector, limit=depth)
        ]
        if emb.vector is not None
        else []
    )
    fused = rrf(entry_leg, fact_keyword, fact_vector)[:k]
    entry_ids = [oid[1] for oid in (h.object_id for h in fused) if oid[0] == "entry"]
    fact_ids = [oid[1] for oid in (h.object_id for h in fused) if oid[0] == "fact"]
    entries = Entry.objects.filter(agent=agent).in_bulk(entry_ids)
    facts = (
        Fact.objects.filter(agent=agent)
        .select_related("category")
        .defer(*fact_selectors.VECTORS)
        .in_bulk(fact_ids)
    )
    out = []
    for hit in fused:
        kind, pk = hit.object_id
        legs = {leg: rank.score for leg, rank in hit.legs.items()}
        if kind == "entry" and pk in entries:
            e = entries[pk]
            source = "document" if names.is_document(e.name) else "entry"
            out.append(MemoryHit(source, pk, e.name, e.content, hit.score, legs))
        elif kind == "fact" and pk in facts:
            f = facts[pk]
            out.append(
                MemoryHit("fact", pk, f"{f.category.name}/{f.key}", f.value, hit.score, legs)
            )
    return out
