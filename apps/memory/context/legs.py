"""Seed 002's tri-hybrid retrieval legs over the session's messages."""

from typing import Any

from apps.conversations.models import Message
from apps.conversations.selectors import window_messages
from apps.memory.context.types import ContextRequest
from apps.providers.embeddings import EmbeddingError, embed_query
from apps.search.legs import vector_search


def recency(request: ContextRequest) -> list[Message]:
    """The last `recency_limit` hot messages, oldest first (from working memory), reaching
    back over those that left the window unsummarised (window_messages); read once per call
    (the recap provider shares it)."""
    if "recency" not in request.memo:
        request.memo["recency"] = window_messages(
            session=request.session, limit=request.config.recency_limit
        )
    return request.memo["recency"]


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


def query_vector(request: ContextRequest) -> tuple[Any, str]:
    """The query's embedding, computed once per call (facts and messages share it); or None
    and why, when the embedder fails."""
    if "query_vector" not in request.memo:
        try:
            request.memo["query_vector"] = (embed_query(request.query), "")
        except EmbeddingError as exc:
            request.memo["query_vector"] = (None, str(exc)[:1000] or "embedding failed")
    return request.memo["query_vector"]


def relevance(request: ContextRequest) -> tuple[list[tuple[Message, float]], str]:
    """Messages with cosine > relevance_threshold to the query, best first; and any error.

    The search layer's vector leg over the "messages" corpus, scanning the session's rows
    exactly: one session is a few thousand rows at most, and scanning them beats walking the
    agent's whole HNSW graph.
    """
    limit = request.config.context_relevance_limit
    if not request.query or not request.query.strip() or limit <= 0:
        return [], ""
    vector, error = query_vector(request)
    if vector is None:
        return [], f"relevance leg skipped: {error}"
    session_messages = Message.objects.filter(session=request.session)
    hits = vector_search(
        "messages",
        agent_id=request.agent.pk,
        vector=vector,
        limit=limit,
        queryset=session_messages,
        exact=True,
    )
    rows = session_messages.defer("embedding").in_bulk([h.object_id for h in hits])
    threshold = request.config.relevance_threshold
    return [
        (rows[h.object_id], float(h.score))
        for h in hits
        if h.object_id in rows and h.score > threshold
    ], ""
