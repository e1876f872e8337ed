"""The memory app's one wiring point to the search layer (apps/search)."""

import numpy as np

from apps.agents.models import Agent
from apps.conversations.models import Message, Session
from apps.entries.search import keyword_hits
from apps.facts import selectors as fact_selectors
from apps.facts.vectors import CosineDistance


def message_vector_hits(
    *, agent: Agent, session: Session, vector: np.ndarray, model: str, limit: int
) -> list[tuple[Message, float]]:
    """The session's messages nearest to `vector` by cosine, best first."""
    qs = (
        Message.objects.filter(session=session, embedding__isnull=False)
        .defer("embedding")
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance", "id")[:limit]
    )
    return [(m, 1.0 - float(m.distance)) for m in qs]


def entry_keyword_hits(*, agent: Agent, query: str, limit: int) -> list[tuple[int, float]]:
    """(entry id, BM25) best first."""
    return keyword_hits(agent=agent, query=query, limit=limit)


def fact_keyword_hits(*, agent: Agent, query: str, limit: int) -> list[tuple[int, float]]:
    """(fact id, keyword score) best first, current facts only."""
    hits = fact_selectors.facts_keyword(agent=agent, query=query, category_ids=None, k=limit)
    return [(f.pk, score) for f, score in hits]


def fact_vector_hits(*, agent: Agent, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """(fact id, cosine) best first, current facts only."""
    hits = fact_selectors.facts_nearest(agent=agent, vector=vector, category_ids=None, k=limit)
    return [(f.pk, sim) for f, sim in hits]
