"""The memory app's wiring to the search layer (apps/search): messages, entries, facts."""

import numpy as np

from apps.agents.models import Agent
from apps.conversations.models import Message, Session
from apps.entries.search import keyword_hits
from apps.facts import selectors as fact_selectors
from apps.search.legs import vector_search


def message_vector_hits(
    *, agent: Agent, session: Session, vector: np.ndarray, limit: int
) -> list[tuple[Message, float]]:
    """The session's messages nearest to `vector` by cosine, best first ("messages" corpus)."""
    hits = vector_search(
        "messages",
        agent_id=agent.pk,
        vector=vector,
        limit=limit,
        queryset=Message.objects.filter(session=session),
        # One session is a few thousand rows at most: scanning them beats walking the agent's
        # whole HNSW graph (and is exact).
        exact=True,
    )
    rows = (
        Message.objects.filter(session=session)
        .defer("embedding")
        .in_bulk([h.object_id for h in hits])
    )
    return [(rows[h.object_id], float(h.score)) for h in hits if h.object_id in rows]


def entry_keyword_hits(*, agent: Agent, query: str, limit: int) -> list[tuple[int, float]]:
    """(entry id, BM25) best first."""
    return keyword_hits(agent=agent, query=query, limit=limit)


def fact_keyword_hits(*, agent: Agent, query: str, limit: int) -> list[tuple[int, float]]:
    """(fact id, BM25 over key + value) best first, current facts only."""
    hits = fact_selectors.facts_keyword(agent=agent, query=query, category_ids=None, k=limit)
    return [(f.pk, score) for f, score in hits]


def fact_vector_hits(*, agent: Agent, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """(fact id, cosine) best first, current facts only."""
    hits = fact_selectors.facts_nearest(agent=agent, vector=vector, category_ids=None, k=limit)
    return [(f.pk, sim) for f, sim in hits]
