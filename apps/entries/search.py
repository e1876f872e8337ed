"""The entries app's one wiring point to the search layer (apps/search)."""

from apps.agents.models import Agent


def keyword_hits(*, agent: Agent, query: str, limit: int) -> list[tuple[int, float]]:
    """(entry id, BM25 score) best first, over name + content."""
    return []
