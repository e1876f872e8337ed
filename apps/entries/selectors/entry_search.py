"""Searches of entries (GET /entries/search): BM25 (keyword), cosine to the embedded query
(semantic) or the hybrid ranking /memory/search uses (hybrid), over the indexed entries an
audience sees, optionally only those whose name starts with a prefix."""

from dataclasses import dataclass, field

from django.db.models import QuerySet

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.core.errors import InvalidInput
from apps.core.replicas import on_replica
from apps.entries.models import Entry
from apps.entries.selectors.entry_lookup import entries_searchable, with_aliases
from apps.providers.embeddings import EmbeddingError
from apps.search.hybrid import Scope, agent_ranking, hybrid_search
from apps.search.legs import keyword_search, vector_search
from apps.search.ranking import Hit

MODES = ("keyword", "semantic", "hybrid")
SEMANTIC = "semantic"  # degraded: the query could not be embedded, keyword answered


@dataclass(frozen=True)
class EntryHit:
    entry: Entry
    score: float


@dataclass(frozen=True)
class EntrySearch:
    items: list[EntryHit]
    degraded: list[str] = field(default_factory=list)


@on_replica
def entries_search(
    *,
    agent: Agent,
    query: str,
    limit: int,
    audience: Audience,
    mode: str = "keyword",
    prefix: str | None = None,
) -> EntrySearch:
    """The indexed entries `audience` sees (named `prefix`... when given), best first with
    scores: BM25 over name + content (seed 003), cosine similarity of their vectors, or the
    hybrid ranking's fused score. Semantic and hybrid fall back to BM25 when the query cannot
    be embedded (`degraded` ["semantic"]). The caller picks a cutoff."""
    if mode not in MODES:
        raise InvalidInput(
            f"unknown mode {mode!r}; one of {', '.join(MODES)}", loc=["query", "mode"]
        )
    scope = entries_searchable(agent=agent, audience=audience)
    if prefix:
        scope = scope.filter(name__startswith=prefix)
    hits, degraded = _ranked(agent, query, limit, mode, scope)
    seen = Entry.objects.filter(audience.q(), agent=agent)
    by_id = with_aliases(seen).in_bulk([pk for pk, _ in hits])
    items = [EntryHit(entry=by_id[pk], score=score) for pk, score in hits if pk in by_id]
    return EntrySearch(items=items, degraded=degraded)


def _ranked(
    agent: Agent, query: str, limit: int, mode: str, scope: QuerySet[Entry]
) -> tuple[list[tuple[int, float]], list[str]]:
    """(entry id, score) best first, and what was degraded."""
    if mode == "hybrid":
        result = hybrid_search(
            agent_id=agent.pk,
            query=query,
            scopes=[Scope("entries", queryset=scope)],
            limit=limit,
            ranking=agent_ranking(agent.config),
            require_vector=False,
        )
        degraded = [SEMANTIC] if result.vector_error else []
        return [(h.object_id, h.score) for h in result.hits], degraded
    if mode == SEMANTIC:
        try:
            found = vector_search(
                "entries", agent_id=agent.pk, query=query, limit=limit, queryset=scope
            )
            return _pairs(found), []
        except EmbeddingError:
            return _pairs(_keyword(agent, query, limit, scope)), [SEMANTIC]
    return _pairs(_keyword(agent, query, limit, scope)), []


def _keyword(agent: Agent, query: str, limit: int, scope: QuerySet[Entry]) -> list[Hit]:
    return keyword_search("entries", agent_id=agent.pk, query=query, limit=limit, queryset=scope)


def _pairs(hits: list[Hit]) -> list[tuple[int, float]]:
    return [(int(h.object_id), h.score) for h in hits]
