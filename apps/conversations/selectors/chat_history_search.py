"""search_chat_history (seed 000): message search for one agent, with context windows.

The legs, hybrid ranking and neighbours are the search layer's (apps/search); this module
adds what is particular to conversations: the filters, keyword mode's split between the
archive and the hot window, and merged context windows around the hits.
"""

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.conf import settings
from django.db.models import F, Q, QuerySet

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.conversations.hot_window import hot_matches
from apps.conversations.models import Message, Role, Session
from apps.core.errors import InvalidInput
from apps.core.replicas import on_replica
from apps.providers.embeddings import EmbeddingError
from apps.search.adjacency import adjacent, adjacent_ids
from apps.search.corpora import get_corpus
from apps.search.hybrid import Scope, agent_ranking, hybrid_search
from apps.search.legs import contains_search, keyword_search, vector_search
from apps.search.ranking import FusedHit, Hit, LegRank, single

CORPUS = "messages"
MODES = ("semantic", "keyword", "hybrid", "contains")
SEMANTIC = "semantic"  # named in `degraded` when the query could not be embedded
RERANK = "rerank"  # named in `degraded` when reranking was asked for and could not run
_METADATA_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")


@dataclass(frozen=True)
class SearchHit:
    message: Message
    score: float
    legs: dict[str, LegRank]
    window: int


@dataclass(frozen=True)
class ContextWindow:
    session_id: uuid.UUID
    messages: list[Message]


@dataclass(frozen=True)
class SearchResult:
    query: str
    mode: str
    hits: list[SearchHit]
    windows: list[ContextWindow] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)  # ["semantic"]: keyword stood in


@dataclass(frozen=True)
class _Request:
    agent: Agent
    query: str
    k: int
    scope: QuerySet[Message] | None  # None: agent-wide and unfiltered
    exact: bool  # one session is small: an exact scan beats the agent-wide ANN index
    degraded: list[str] = field(default_factory=list)  # legs that could not run


def _validate(query: str, mode: str, k: int, metadata: Mapping[str, object] | None) -> None:
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
    session_user: str | None,
    roles: Sequence[str] | None,
    after: datetime | None,
    before: datetime | None,
    metadata: Mapping[str, object] | None,
    audience: Audience,
) -> QuerySet[Message] | None:
    """The filters as a queryset, or None when the search is agent-wide and unfiltered."""
    q = audience.q("session__user")
    if session is not None:
        q &= Q(session=session)
    if session_user is not None:
        q &= Q(session__user=session_user)
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


def _narrowed(r: _Request, q: Q) -> QuerySet[Message]:
    base = r.scope if r.scope is not None else Message.objects.filter(agent=r.agent)
    return base.filter(q)


def _archived() -> Q:
    """Messages before their session's compact cutoff (seed 000's archive)."""
    return Q(session__meta__start_at__isnull=False, created_at__lt=F("session__meta__start_at"))


def _semantic(r: _Request) -> list[FusedHit]:
    """Cosine to the query; BM25 over the same scope when the query cannot be embedded.
    With semantic_scope "recent" (seed 000), only messages after the compact cutoff."""
    if r.agent.config.semantic_scope == "recent":
        r = replace(r, scope=_narrowed(r, ~_archived()))
    try:
        hits = vector_search(
            CORPUS, agent_id=r.agent.id, query=r.query, limit=r.k, queryset=r.scope, exact=r.exact
        )
    except EmbeddingError:
        r.degraded.append(SEMANTIC)
        hits = keyword_search(
            CORPUS, agent_id=r.agent.id, query=r.query, limit=r.k, queryset=r.scope
        )
    return single(hits)


def _contains(r: _Request) -> list[FusedHit]:
    return single(
        contains_search(
            CORPUS,
            agent_id=r.agent.id,
            text=r.query,
            limit=r.k,
            queryset=r.scope,
            order_by=("-created_at", "-id"),
        )
    )


def _hybrid(r: _Request) -> list[FusedHit]:
    result = hybrid_search(
        agent_id=r.agent.id,
        query=r.query,
        scopes=[Scope(CORPUS, queryset=r.scope, exact=r.exact)],
        limit=r.k,
        ranking=agent_ranking(r.agent.config),
        require_vector=False,  # without the vector leg, BM25 (and neighbours) still rank
    )
    if result.vector_error:
        r.degraded.append(SEMANTIC)
    if result.rerank_error:
        r.degraded.append(RERANK)
    return result.hits


def _keyword(r: _Request) -> list[FusedHit]:
    """Seed 000: hot window by substring, archive by full text; a message is in exactly one."""
    # The hot leg reads each session's hot rows only (apps/conversations/hot_window.py).
    ids = hot_matches(agent_id=r.agent.id, text=r.query.strip(), limit=r.k, queryset=r.scope)
    hot = [Hit(object_id=pk, score=1.0, leg="contains", corpus=CORPUS) for pk in ids]
    archive = keyword_search(
        CORPUS, agent_id=r.agent.id, query=r.query, limit=r.k, queryset=_narrowed(r, _archived())
    )
    return (single(hot) + single(archive))[: r.k]


_MODES = {"semantic": _semantic, "contains": _contains, "hybrid": _hybrid, "keyword": _keyword}


@on_replica
def message_search(
    *,
    agent: Agent,
    query: str,
    mode: str = "semantic",
    k: int = 10,
    session: Session | None = None,
    session_user: str | None = None,
    roles: Sequence[str] | None = None,
    after: datetime | None = None,
    before: datetime | None = None,
    metadata: Mapping[str, object] | None = None,
    min_score: float | None = None,
    audience: Audience,
) -> SearchResult:
    """Search the agent's messages that `audience` sees (or one session's); hits carry
    merged context windows.

    semantic: cosine to the query; keyword: BM25 over the archive (before each session's
    compaction cutoff) plus substring matches in the hot window; hybrid: RRF of BM25 and
    vector over everything; contains: substring, newest first. No score cutoff unless
    `min_score` is given. When the query cannot be embedded, semantic and hybrid fall back to
    BM25 over the same scope, say so in `degraded`, and ignore `min_score` (a cosine cutoff
    means nothing on BM25 scores). `session_user` keeps the messages of that user's sessions
    only ("" the sessions without a user: the review pages' filter). Raises InvalidInput.
    """
    _validate(query, mode, k, metadata)
    scope = _scope(
        agent=agent,
        session=session,
        session_user=session_user,
        roles=roles,
        after=after,
        before=before,
        metadata=metadata,
        audience=audience,
    )
    request = _Request(agent=agent, query=query, k=k, scope=scope, exact=session is not None)
    fused = _MODES[mode](request)
    if min_score is not None and not request.degraded:
        fused = [h for h in fused if h.score >= min_score]
    result = _with_windows(agent, query, mode, fused)
    return replace(result, degraded=request.degraded)


def _load_spans(
    agent: Agent, fused: list[FusedHit]
) -> tuple[dict[object, Message], dict[object, tuple[list[object], list[object]]]]:
    """The hit messages and those around them, and for each hit the ids around it: the ids
    first (one statement on PostgreSQL, from the hits' keys), then every message at once."""
    ids = [h.object_id for h in fused]
    config = agent.config
    around = adjacent_ids(
        get_corpus(CORPUS), ids, config.search_context_before, config.search_context_after
    )
    wanted = set(ids) | {i for prev, nxt in around.values() for i in prev + nxt}
    # The hits are the agent's; so are the rows of their sessions.
    loaded = Message.objects.filter(pk__in=wanted, agent=agent).defer("embedding")
    return {m.id: m for m in loaded}, around


class _Windows:
    """Context windows that merge when they overlap, so no message appears twice."""

    def __init__(self) -> None:
        self.windows: list[list[Message]] = []
        self.owner: dict[object, int] = {}  # message id -> window index

    def add(self, span: list[Message]) -> None:
        touching = sorted({self.owner[m.id] for m in span if m.id in self.owner})
        if not touching:
            index = len(self.windows)
            self.windows.append([])
        else:
            # Overlapping windows merge into the first; later ones are emptied and dropped.
            index = touching[0]
            for other in touching[1:]:
                self.windows[index].extend(self.windows[other])
                for m in self.windows[other]:
                    self.owner[m.id] = index
                self.windows[other] = []
        for m in span:
            if m.id not in self.owner:
                self.windows[index].append(m)
            self.owner[m.id] = index

    def final(self) -> tuple[list[list[Message]], dict[int, int]]:
        """Non-empty windows in time order, and old index -> new index."""
        remap: dict[int, int] = {}
        kept: list[list[Message]] = []
        for i, w in enumerate(self.windows):
            if w:
                remap[i] = len(kept)
                unique = {m.id: m for m in w}
                kept.append(sorted(unique.values(), key=lambda m: (m.created_at, str(m.id))))
        return kept, remap


def windows_touching(windows: Sequence[ContextWindow]) -> list[tuple[int, int]]:
    """The pairs (i, j) of these context windows where window j begins with the message right
    after window i's last one in its session: the windows touch, with nothing between them.
    One statement."""
    last: dict[object, int] = {w.messages[-1].pk: i for i, w in enumerate(windows) if w.messages}
    first: dict[object, int] = {w.messages[0].pk: j for j, w in enumerate(windows) if w.messages}
    ends = [w.messages[-1] for w in windows if w.messages]
    following = adjacent(get_corpus(CORPUS), ends, 0, 1)
    return [
        (last[pk], first[nxt[0]])
        for pk, (_prev, nxt) in following.items()
        if nxt and nxt[0] in first
    ]


def _with_windows(agent: Agent, query: str, mode: str, fused: list[FusedHit]) -> SearchResult:
    by_id, around = _load_spans(agent, fused)
    windows = _Windows()
    hits = []
    for fh in fused:
        message = by_id.get(fh.object_id)
        if message is None:  # deleted between the legs and now
            continue
        prev, nxt = around.get(message.id, ([], []))
        # A neighbour deleted between the adjacency query and the load is left out.
        before = [by_id[i] for i in reversed(prev) if i in by_id]
        windows.add(before + [message] + [by_id[i] for i in nxt if i in by_id])
        hits.append((message, fh))
    kept, remap = windows.final()
    out_hits = [
        SearchHit(message=m, score=fh.score, legs=fh.legs, window=remap[windows.owner[m.id]])
        for m, fh in hits
    ]
    out_windows = [ContextWindow(session_id=w[0].session_id, messages=w) for w in kept]
    return SearchResult(query=query, mode=mode, hits=out_hits, windows=out_windows)
