# ruff: noqa: S608 - raw SQL interpolates only the model's table name, ints and fixed words.
"""search_chat_history (seed 000): message search for one agent, with context windows."""

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache

from django.conf import settings
from django.db import connection
from django.db.models import F, Q, QuerySet

from apps.agents.models import Agent
from apps.conversations.models import Message, Role, Session
from apps.core.errors import InvalidInput
from apps.providers.embeddings import get_embedder
from apps.search.legs import contains_search, keyword_search, vector_search
from apps.search.ranking import FusedHit, Hit, LegRank, rrf

CORPUS = "messages"
MODES = ("semantic", "keyword", "hybrid", "contains")
# Hybrid (docs/search.md, "What got LoCoMo to 0.66"): each leg is read 50 deep, fused by
# RRF with a rank constant of 10 (60 was tuned for 1000-deep TREC runs; with short lists it
# flattens the difference between rank 1 and rank 20), then every hit passes a fifth of its
# score to the messages right before and after it: in a conversation the evidence for a
# question is usually an exchange, not one message.
HYBRID_DEPTH = 50
HYBRID_RRF_K = 10
HYBRID_NEIGHBOUR_WEIGHT = 0.2
_METADATA_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")


@dataclass(frozen=True)
class SearchHit:
    message: Message
    score: float
    legs: dict[str, LegRank]
    window: int


@dataclass(frozen=True)
class ContextWindow:
    session_id: object
    messages: list[Message]


@dataclass(frozen=True)
class SearchResult:
    query: str
    mode: str
    hits: list[SearchHit]
    windows: list[ContextWindow] = field(default_factory=list)


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="search-embed")


def _validate(query: str, mode: str, k: int, metadata: dict | None) -> None:
    if not query or not query.strip():
        raise InvalidInput("query must not be empty", loc=["body", "query"])
    limit = settings.MEMORYHUB_SEARCH_MAX_QUERY_BYTES
    if len(query.encode("utf-8")) > limit:
        raise InvalidInput(f"query is over {limit} bytes", loc=["body", "query"])
    if mode not in MODES:
        raise InvalidInput(f"unknown mode {mode!r}", loc=["body", "mode"])
    if not 1 <= k <= 100:
        raise InvalidInput("k must be between 1 and 100", loc=["body", "k"])
    for key in metadata or {}:
        # Keys become JSON path lookups: no "__", no odd characters.
        if not _METADATA_KEY.match(key) or "__" in key:
            raise InvalidInput(f"invalid metadata key {key!r}", loc=["body", "metadata", key])


def _scope(
    *,
    agent: Agent,
    session: Session | None,
    roles: Sequence[str] | None,
    after: datetime | None,
    before: datetime | None,
    metadata: dict | None,
) -> QuerySet[Message] | None:
    """The filters as a queryset, or None when the search is agent-wide and unfiltered."""
    q = Q()
    if session is not None:
        q &= Q(session=session)
    if roles:
        for role in roles:
            if role not in Role.values:
                raise InvalidInput(f"unknown role {role!r}", loc=["body", "role"])
        q &= Q(role__in=list(roles))
    if after is not None:
        q &= Q(created_at__gt=after)
    if before is not None:
        q &= Q(created_at__lt=before)
    for key, value in (metadata or {}).items():
        q &= Q(**{f"metadata__{key}": value})
    if not q:
        return None
    return Message.objects.filter(q, agent=agent)


def _and(qs: QuerySet[Message] | None, agent: Agent, q: Q) -> QuerySet[Message]:
    base = qs if qs is not None else Message.objects.filter(agent=agent)
    return base.filter(q)


def _single(hits: Sequence[Hit]) -> list[FusedHit]:
    return [
        FusedHit(object_id=h.object_id, score=h.score, legs={h.leg: LegRank(rank=i, score=h.score)})
        for i, h in enumerate(hits, start=1)
    ]


def message_search(
    *,
    agent: Agent,
    query: str,
    mode: str = "semantic",
    k: int = 10,
    session: Session | None = None,
    roles: Sequence[str] | None = None,
    after: datetime | None = None,
    before: datetime | None = None,
    metadata: dict | None = None,
    min_score: float | None = None,
) -> SearchResult:
    """Search the agent's messages (or one session's); hits carry merged context windows.

    semantic: cosine to the query; keyword: BM25 over the archive (before each session's
    compaction cutoff) plus substring matches in the hot window; hybrid: RRF of BM25 and
    vector over everything; contains: substring, newest first. No score cutoff unless
    `min_score` is given. Raises InvalidInput, or EmbeddingError for an unembeddable query.
    """
    _validate(query, mode, k, metadata)
    scope = _scope(
        agent=agent, session=session, roles=roles, after=after, before=before, metadata=metadata
    )
    # One session is small: an exact scan of its rows beats the agent-wide ANN index.
    common = {"agent_id": agent.id}
    exact = session is not None
    if mode == "semantic":
        fused = _single(
            vector_search(CORPUS, query=query, limit=k, queryset=scope, exact=exact, **common)
        )
    elif mode == "contains":
        fused = _single(
            contains_search(
                CORPUS,
                text=query,
                limit=k,
                queryset=scope,
                order_by=("-created_at", "-id"),
                **common,
            )
        )
    elif mode == "hybrid":
        depth = max(HYBRID_DEPTH, k)
        # The query is embedded in another thread while the BM25 leg runs: onnxruntime and
        # the database driver both release the GIL, so the two overlap on two cores.
        embedder = get_embedder()
        pending = _pool().submit(embedder.embed, [query])
        try:
            bm25 = keyword_search(CORPUS, query=query, limit=depth, queryset=scope, **common)
        finally:
            vector = pending.result()[0]
        dense = vector_search(
            CORPUS, vector=vector, limit=depth, queryset=scope, exact=exact, **common
        )
        fused = rrf(bm25, dense, k=HYBRID_RRF_K)
        fused = _smooth(fused, HYBRID_NEIGHBOUR_WEIGHT)[:k]
    else:
        # Seed 000: hot window by substring, archive by full-text; a message is in exactly one.
        cutoff = F("session__meta__start_at")
        archived = Q(session__meta__start_at__isnull=False, created_at__lt=cutoff)
        hot = contains_search(
            CORPUS,
            text=query.strip(),
            limit=k,
            queryset=_and(scope, agent, ~archived),
            order_by=("-created_at", "-id"),
            **common,
        )
        archive = keyword_search(
            CORPUS, query=query, limit=k, queryset=_and(scope, agent, archived), **common
        )
        fused = (_single(hot) + _single(archive))[:k]
    if min_score is not None:
        fused = [h for h in fused if h.score >= min_score]
    return _with_windows(agent, query, mode, fused)


def _adjacent(messages: Sequence[Message], before: int, after: int) -> dict:
    """For each message, the ids of up to `before` earlier and `after` later messages of its
    session, nearest first, in one statement (row-value comparisons on the session index)."""
    if not messages or (before == 0 and after == 0):
        return {m.id: ([], []) for m in messages}
    table = Message._meta.db_table
    pk_field, time_field = Message._meta.pk, Message._meta.get_field("created_at")
    if connection.vendor == "postgresql":
        # One plan with an index probe per message; a UNION of hundreds of subqueries
        # spends more time planning than running.
        sql = (
            f"SELECT c.i, n.side, n.id FROM unnest(%s::uuid[], %s::uuid[], %s::timestamptz[]) "
            f"WITH ORDINALITY AS c(id, session_id, created_at, i) CROSS JOIN LATERAL ("
            f"(SELECT 'b' AS side, m.id FROM {table} m WHERE m.session_id = c.session_id "
            f"AND (m.created_at, m.id) < (c.created_at, c.id) "
            f"ORDER BY m.created_at DESC, m.id DESC LIMIT %s) UNION ALL "
            f"(SELECT 'a' AS side, m.id FROM {table} m WHERE m.session_id = c.session_id "
            f"AND (m.created_at, m.id) > (c.created_at, c.id) "
            f"ORDER BY m.created_at, m.id LIMIT %s)) n"
        )
        params = [
            [m.id for m in messages],
            [m.session_id for m in messages],
            [m.created_at for m in messages],
            before,
            after,
        ]
        offset = 1  # WITH ORDINALITY counts from 1
    else:
        parts, params = [], []
        for i, m in enumerate(messages):
            key = [
                m.session_id.hex,
                time_field.get_db_prep_value(m.created_at, connection),
                pk_field.get_db_prep_value(m.id, connection),
            ]
            for side, op, order, n in (("b", "<", "DESC", before), ("a", ">", "ASC", after)):
                if n:
                    parts.append(
                        # Only ints and fixed words are interpolated; values are parameters.
                        f"SELECT * FROM (SELECT {i} AS i, '{side}' AS side, id FROM {table} "
                        f"WHERE session_id = %s AND (created_at, id) {op} (%s, %s) "
                        f"ORDER BY created_at {order}, id {order} LIMIT {n}) AS x{i}{side}"
                    )
                    params.extend(key)
        sql = " UNION ALL ".join(parts)
        offset = 0
    out: dict = {m.id: ([], []) for m in messages}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    for i, side, raw in rows:
        out[messages[i - offset].id][0 if side == "b" else 1].append(pk_field.to_python(raw))
    return out


def _smooth(fused: list[FusedHit], weight: float) -> list[FusedHit]:
    """Conversation locality: each hit passes `weight` x its score to the messages right
    before and after it in its session (which may then enter the results themselves)."""
    if not fused or weight <= 0:
        return fused
    messages = list(
        Message.objects.filter(pk__in=[h.object_id for h in fused]).only(
            "id", "session_id", "created_at"
        )
    )
    adjacent = _adjacent(messages, 1, 1)
    scores = {h.object_id: h.score for h in fused}
    legs = {h.object_id: dict(h.legs) for h in fused}
    rank = {h.object_id: i for i, h in enumerate(fused, start=1)}
    extra: dict = {}
    for m in messages:
        prev, nxt = adjacent[m.id]
        for neighbour in prev + nxt:
            extra[neighbour] = extra.get(neighbour, 0.0) + weight * scores[m.id]
            best = legs.setdefault(neighbour, {}).get("neighbour")
            if best is None or rank[m.id] < best.rank:
                legs[neighbour]["neighbour"] = LegRank(rank=rank[m.id], score=scores[m.id])
    for oid, add in extra.items():
        scores[oid] = scores.get(oid, 0.0) + add
    order = sorted(scores, key=lambda oid: (-scores[oid], rank.get(oid, len(rank) + 1)))
    return [FusedHit(object_id=oid, score=scores[oid], legs=legs[oid]) for oid in order]


def _with_windows(agent: Agent, query: str, mode: str, fused: list[FusedHit]) -> SearchResult:
    ids = [h.object_id for h in fused]
    by_id = {m.id: m for m in Message.objects.filter(pk__in=ids, agent=agent).defer("embedding")}
    config = agent.config
    windows: list[list[Message]] = []
    owner: dict[object, int] = {}  # message id -> window index
    hits = []
    found = [by_id[fh.object_id] for fh in fused if fh.object_id in by_id]
    adjacent = _adjacent(found, config.search_context_before, config.search_context_after)
    around = {i for prev, nxt in adjacent.values() for i in prev + nxt} - set(by_id)
    by_id.update({m.id: m for m in Message.objects.filter(pk__in=around).defer("embedding")})
    for fh in fused:
        message = by_id.get(fh.object_id)
        if message is None:  # deleted between the legs and now
            continue
        prev, nxt = adjacent[message.id]
        span = [by_id[i] for i in reversed(prev)] + [message] + [by_id[i] for i in nxt]
        touching = sorted({owner[m.id] for m in span if m.id in owner})
        if not touching:
            index = len(windows)
            windows.append([])
        else:
            # Overlapping windows merge into the first; later ones are emptied and dropped.
            index = touching[0]
            for other in touching[1:]:
                windows[index].extend(windows[other])
                for m in windows[other]:
                    owner[m.id] = index
                windows[other] = []
        for m in span:
            if m.id not in owner or owner[m.id] != index:
                if m.id not in owner:
                    windows[index].append(m)
                owner[m.id] = index
        hits.append((message, fh, index))
    # Renumber after merges: drop emptied windows, order each by time.
    remap, kept = {}, []
    for i, w in enumerate(windows):
        if w:
            remap[i] = len(kept)
            unique = {m.id: m for m in w}
            kept.append(sorted(unique.values(), key=lambda m: (m.created_at, str(m.id))))
    out_hits = [
        SearchHit(message=m, score=fh.score, legs=fh.legs, window=remap[owner[m.id]])
        for m, fh, _i in hits
    ]
    out_windows = [ContextWindow(session_id=w[0].session_id, messages=w) for w in kept]
    return SearchResult(query=query, mode=mode, hits=out_hits, windows=out_windows)
