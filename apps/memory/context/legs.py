"""Seed 002's tri-hybrid retrieval legs over the session's messages."""

import logging

import numpy as np

from apps.conversations.models import Message
from apps.conversations.selectors import session_recent_messages
from apps.facts.services import embed
from apps.memory.context.types import ContextRequest

logger = logging.getLogger(__name__)


def recency(request: ContextRequest) -> list[Message]:
    """The last `recency_limit` hot messages, oldest first (from working memory)."""
    return session_recent_messages(session=request.session, limit=request.config.recency_limit)


def salience(request: ContextRequest) -> list[Message]:
    """The newest `context_salience_limit` messages with importance >= salience_threshold."""
    limit = request.config.context_salience_limit
    if limit <= 0:
        return []
    return list(
        Message.objects.filter(
            session=request.session, importance__gte=request.config.salience_threshold
        )
        .defer("embedding")
        .order_by("-created_at", "-id")[:limit]
    )


def relevance(request: ContextRequest) -> tuple[list[tuple[Message, float]], str]:
    """Messages with cosine > relevance_threshold to the query, best first; and any error."""
    limit = request.config.context_relevance_limit
    if not request.query or not request.query.strip() or limit <= 0:
        return [], ""
    emb = embed(request.query)
    if emb.vector is None:
        return [], f"relevance leg skipped: {emb.error}"
    hits = _nearest_messages(request, emb.vector, limit)
    threshold = request.config.relevance_threshold
    return [(m, s) for m, s in hits if s > threshold], ""


def _nearest_messages(
    request: ContextRequest, vector: np.ndarray, limit: int
) -> list[tuple[Message, float]]:
    """The session's nearest messages by cosine: the search layer's "messages" corpus."""
    from apps.memory.search import message_vector_hits

    return message_vector_hits(
        agent=request.agent, session=request.session, vector=vector, limit=limit
    )
