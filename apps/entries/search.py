"""The entries app's one wiring point to the search layer (apps/search)."""

from apps.agents.models import Agent
from apps.search.legs import keyword_search


def keyword_hits(*, agent: Agent, query: str, limit: int) -> list[tuple[int, float]]:
    """(entry id, BM25 score) best first, over name + content (seed 003)."""
    hits = keyword_search("entries", agent_id=agent.pk, query=query, limit=limit)
    return [(int(h.object_id), h.score) for h in hits]
