"""Seed 002's tri-hybrid retrieval legs over the session's messages, and issue 24's memory
leg over the agent's whole history."""

from datetime import date

import numpy as np
from django.conf import settings

from apps.agents.config import MAX_K, AgentConfig
from apps.conversations.models import Message, Session
from apps.conversations.selectors import SearchResult, message_search, window_messages
from apps.core.replicas import on_replica
from apps.memory.context.dates import WEEKDAYS, day_text, resolve_relative
from apps.memory.context.types import (
    Candidate,
    ContextRequest,
    MemoryHit,
    MemoryLeg,
    MemoryWindow,
)
from apps.providers.embeddings import EmbeddingError, embed_query
from apps.providers.token_counts import count_tokens_batch
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


@on_replica
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


def query_vector(request: ContextRequest) -> tuple[np.ndarray | None, str]:
    """The query's embedding, computed once per call (facts and messages share it); or None
    and why, when the embedder fails."""
    assert request.query is not None  # its callers embed only a given query
    if "query_vector" not in request.memo:
        try:
            request.memo["query_vector"] = (embed_query(request.query), "")
        except EmbeddingError as exc:
            request.memo["query_vector"] = (None, str(exc)[:1000] or "embedding failed")
    return request.memo["query_vector"]


@on_replica
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


def pending(message: Message) -> bool:
    """Waiting for its first embedding (no vector, no failure recorded: /search/status's
    "pending"). The memory leg takes a message once the pipeline has handled it."""
    return not message.embedding_model and not message.embedding_error


@on_replica
def memory(request: ContextRequest, held: set) -> MemoryLeg:
    """The query against the agent's whole history, ranked as /search ranks it (hybrid): the
    best `context_memory_limit` hits that no other leg holds and that are not pending, best
    first, each with its span of /search's context window."""
    config = request.config
    if not config.context_memory or config.context_memory_limit <= 0:
        return MemoryLeg()
    if not request.query or not request.query.strip():
        return MemoryLeg()
    query, warning = _search_query(request.query)
    # Held hits are skipped, so ask for enough that `limit` remain when they all rank.
    k = min(MAX_K, config.context_memory_limit + len(held))
    result = message_search(
        agent=request.agent, query=query, mode="hybrid", k=k, audience=request.audience
    )
    request.memo["memory_degraded"] = result.degraded
    leg = _spans(result, held, config)
    leg.warning = warning
    return leg


def _search_query(query: str) -> tuple[str, str]:
    """The query within /search's byte limit (cut at a character), and a warning if cut."""
    limit = settings.MEMORYHUB_SEARCH_MAX_QUERY_BYTES
    raw = query.encode("utf-8")
    if len(raw) <= limit:
        return query, ""
    cut = raw[:limit].decode("utf-8", errors="ignore")
    return cut, f"memory leg: the query was cut to its first {limit} bytes"


def _spans(result: SearchResult, held: set, config: AgentConfig) -> MemoryLeg:
    """Each usable hit's span within its merged window (windows are contiguous runs of a
    session, so the messages next to the hit there are its neighbours in the session)."""
    before, after = config.search_context_before, config.search_context_after
    sessions = Session.objects.in_bulk({w.session_id for w in result.windows})
    found: dict = {}  # message id -> its one Candidate (a hit may sit in another's span)
    windows: dict[int, int] = {}  # search window index -> MemoryLeg.windows index
    hits: list[MemoryHit] = []

    def candidate(m: Message) -> Candidate:
        if m.id not in found:
            found[m.id] = Candidate(m, legs=["memory"], tokens=m.token_count, content=m.content)
        return found[m.id]

    for rank, hit in enumerate(result.hits, start=1):
        m = hit.message
        if m.id in held or pending(m) or m.session_id not in sessions:  # (removed meanwhile)
            continue
        if len(hits) == config.context_memory_limit:
            break
        run = result.windows[hit.window].messages
        i = next(n for n, x in enumerate(run) if x.id == m.id)
        span = run[max(0, i - before) : i + after + 1]
        c = candidate(m)
        c.rank, c.score, c.search_legs = rank, hit.score, hit.legs
        windows.setdefault(hit.window, len(windows))
        hits.append(
            MemoryHit(
                candidate=c,
                span=[candidate(x) for x in span if x.id not in held and not pending(x)],
                window=windows[hit.window],
            )
        )
    if config.context_memory_resolve_dates:
        _resolve_dates(list(found.values()))
    return MemoryLeg(hits=hits, windows=_windows(hits, len(windows), sessions))


def _resolve_dates(candidates: list[Candidate]) -> None:
    """Relative dates in each message resolved against its own day, re-counted."""
    changed = []
    for c in candidates:
        c.content, n = resolve_relative(c.content, c.message.created_at.date())
        if n:
            changed.append(c)
    for c, tokens in zip(changed, count_tokens_batch([c.content for c in changed]), strict=True):
        c.tokens = tokens


def _windows(hits: list[MemoryHit], count: int, sessions: dict) -> list[MemoryWindow]:
    """One MemoryWindow per merged window the hits use, with every span message of it and
    a header line naming the session and the date of its first message."""
    members: list[dict] = [{} for _ in range(count)]
    for hit in hits:
        for c in hit.span:
            members[hit.window][c.message.id] = c
    out = []
    for by_id in members:
        found = sorted(by_id.values(), key=lambda c: (c.message.created_at, str(c.message.id)))
        session = sessions[found[0].message.session_id]
        day = found[0].message.created_at.date()
        out.append(
            MemoryWindow(
                session=session,
                date=day,
                header=header(session, day),
                header_tokens=0,
                messages=found,
            )
        )
    for window, tokens in zip(out, count_tokens_batch([w.header for w in out]), strict=True):
        window.header_tokens = tokens
    return out


def header(session: Session, day: date) -> str:
    """The line above a memory window: which conversation, and when (its UTC date)."""
    label = " ".join((session.title or session.key).split())[:80]
    return f"Session {label}, {WEEKDAYS[day.weekday()]} {day_text(day)}"
