"""memory_search (seed 001): one ranked list over workspace documents, entries, facts,
seed 001's learnings and seed 004's history entries, each hit labelled with its source."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.core.errors import InvalidInput
from apps.core.replicas import on_replica
from apps.entries.selectors import entries_searchable
from apps.facts.selectors import facts_usable
from apps.learnings.selectors import learnings_searchable
from apps.lifecycle.selectors import history_visible
from apps.search.corpora import get_corpus
from apps.search.hybrid import Scope, agent_ranking, hybrid_search
from apps.search.ranking import FusedHit


@dataclass(frozen=True)
class MemoryHit:
    source: str  # document | entry | fact | learning | history
    id: int
    # entry name; "category/key" for a fact; its file (learnings/errors.md, ...) for a
    # learning; "HISTORY <time>" for a history entry
    name: str
    content: str
    score: float  # the hybrid ranking's score (fused, or the rerank blend)
    legs: dict[str, float]  # each leg that found it: its own score (bm25, cosine, rerank...)


@dataclass(frozen=True)
class MemorySearch:
    items: list[MemoryHit]
    degraded: list[str] = field(default_factory=list)  # ["semantic"]: query not embedded


@on_replica
def memory_search(
    *, agent: Agent, query: str, k: int | None = None, audience: Audience
) -> MemorySearch:
    """BM25 over entries (documents and archives included, not those written with `index:
    false`) and active learnings, vector + keyword over current facts and history entries,
    ranked as every hybrid search of the agent is (apps/search/hybrid.py). Pending facts and
    pending learnings are never returned. When the query cannot be embedded the keyword legs
    answer alone, with `degraded` ["semantic"]; ["rerank"] when reranking was asked for and
    could not run. Only the memory `audience` sees (the agent's, and one user's)."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must not be empty", loc=["body", "query"])
    k = k or agent.config.memory_search_k
    result = hybrid_search(
        agent_id=agent.pk,
        query=query,
        scopes=_scopes(agent, audience),
        limit=k,
        ranking=agent_ranking(agent.config),
        require_vector=False,
    )
    found = _load(agent, result.hits)
    out = []
    for hit in result.hits:
        obj = found.get((hit.corpus, hit.object_id))
        if obj is None:  # deleted since the legs ran
            continue
        shown = get_corpus(hit.corpus).rendered(obj)
        legs = {leg: rank.score for leg, rank in hit.legs.items()}
        out.append(MemoryHit(shown.kind, obj.pk, shown.title, shown.text, hit.score, legs))
    degraded = ["semantic"] if result.vector_error else []
    return MemorySearch(items=out, degraded=degraded + (["rerank"] if result.rerank_error else []))


def _scopes(agent: Agent, audience: Audience) -> list[Scope]:
    # History is searched whole for everyone: no restriction keeps the ANN index's plan.
    # Entries (keyword only) always leave out those written with `index: false`.
    narrow = audience.user is not None
    return [
        Scope("entries", queryset=entries_searchable(agent=agent, audience=audience)),
        Scope("facts", queryset=facts_usable(agent=agent, audience=audience)),
        Scope("learnings", queryset=learnings_searchable(agent=agent, audience=audience)),
        Scope(
            "history", queryset=history_visible(agent=agent, audience=audience) if narrow else None
        ),
    ]


def _load(agent: Agent, hits: Sequence[FusedHit]) -> dict:
    """The hits' rows, one query per corpus, keyed by (corpus, pk)."""
    found = {}
    for name in dict.fromkeys(h.corpus for h in hits):
        corpus = get_corpus(name)
        ids = [h.object_id for h in hits if h.corpus == name]
        rows = corpus.hits_queryset().filter(**{f"{corpus.agent_field}_id": agent.pk})
        found.update({(name, pk): row for pk, row in rows.in_bulk(ids).items()})
    return found
