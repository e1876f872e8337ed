"""The one hybrid ranking: BM25 and vector legs over one or more corpora, fused by RRF,
then neighbour smoothing along each session and reranking of the top hits by their stored
token states.

`/search` (seed 000's search_chat_history, hybrid mode), `/memory/search` (seed 001),
get_context's memory leg (through `message_search`) and the MCP tools (which call those
endpoints) all rank with `hybrid_search` and the agent's `agent_ranking`.
"""

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import cache

from django.db.models import QuerySet

from apps.agents.config import AgentConfig
from apps.providers.embeddings import EmbeddingError, QueryEmbedding, embed_query_tokens
from apps.search.adjacency import Neighbours, neighbours
from apps.search.corpora import Corpus, get_corpus
from apps.search.legs import keyword_search, vector_search
from apps.search.ranking import FusedHit, Hit, LegRank, rrf
from apps.search.rerank import rerank_hits


@dataclass(frozen=True)
class Ranking:
    """How hybrid search ranks (docs/search.md, "Hybrid" and "Reranking"). Each leg is read
    `depth` deep (at least the limit) and fused by RRF with rank constant `rrf_k` (60 was
    tuned for 1000-deep TREC runs; with short lists it flattens rank 1 against rank 20);
    every hit then passes `neighbour_weight` x its score to the rows right before and after
    it in its session; the top `rerank_depth` are reranked (0: not reranked)."""

    depth: int = 50
    rrf_k: int = 10
    neighbour_weight: float = 0.2
    rerank_depth: int = 0


def agent_ranking(config: AgentConfig) -> Ranking:
    """The ranking every hybrid search of an agent uses: its `rerank` settings on the
    global constants."""
    return Ranking(rerank_depth=config.rerank_candidates if config.rerank else 0)


@dataclass(frozen=True)
class Scope:
    """One corpus to search, optionally narrowed; `exact` scans its vectors exactly."""

    corpus: str
    queryset: QuerySet | None = None
    exact: bool = False


@dataclass(frozen=True)
class HybridResult:
    hits: list[FusedHit]  # best first; FusedHit.corpus names each hit's corpus
    vector_error: str = ""  # set when the query could not be embedded (vector legs skipped)
    rerank_error: str = ""  # set when the reranker failed (hits are in fused order)


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="search-embed")


def hybrid_search(
    *,
    agent_id: int,
    query: str,
    scopes: Sequence[Scope],
    limit: int,
    ranking: Ranking = Ranking(),
    require_vector: bool = True,
) -> HybridResult:
    """RRF over each scope's BM25 leg then vector leg (in scope order), smoothed and
    reranked as `ranking` says, best first.

    The query is embedded in another thread while the BM25 legs run: onnxruntime and the
    database driver both release the GIL, so the two overlap. When the query cannot be
    embedded: EmbeddingError if `require_vector`, else the keyword legs alone (and no
    reranking, which needs the query's token states).
    """
    depth = max(ranking.depth, limit)
    corpora = [get_corpus(s.corpus) for s in scopes]
    pending = _pool().submit(embed_query_tokens, query) if any(c.embeds for c in corpora) else None
    try:
        keyword = [
            _keyword_leg(c, s, agent_id, query, depth) for c, s in zip(corpora, scopes, strict=True)
        ]
    finally:
        if pending is not None:
            wait([pending])  # a failing BM25 leg must not leave the embedding running unseen
    embedded, error = _vector_or_error(pending, require_vector)
    rankings: list[list[Hit]] = []
    for corpus, scope, bm25 in zip(corpora, scopes, keyword, strict=True):
        rankings.append(bm25)
        if corpus.embeds and embedded is not None:
            rankings.append(_vector_leg(corpus, scope, agent_id, embedded, depth))
    fused = rrf(*(r for r in rankings if r), k=ranking.rrf_k)
    around: Neighbours = {}
    if ranking.neighbour_weight > 0:
        fused, around = smooth(fused, ranking.neighbour_weight)
        fused = within_scopes(fused, scopes)
    rerank_error = ""
    if ranking.rerank_depth > 0 and embedded is not None:
        reranked = rerank_hits(embedded, fused, ranking.rerank_depth, around)
        fused, rerank_error = reranked.hits, reranked.error
    return HybridResult(hits=fused[:limit], vector_error=error, rerank_error=rerank_error)


def _keyword_leg(corpus: Corpus, scope: Scope, agent_id: int, query: str, depth: int) -> list[Hit]:
    if not corpus.text_fields:
        return []
    return keyword_search(
        corpus, agent_id=agent_id, query=query, limit=depth, queryset=scope.queryset
    )


def _vector_leg(
    corpus: Corpus, scope: Scope, agent_id: int, embedded: QueryEmbedding, depth: int
) -> list[Hit]:
    return vector_search(
        corpus,
        agent_id=agent_id,
        vector=embedded.vector,
        limit=depth,
        queryset=scope.queryset,
        exact=scope.exact,
    )


def _vector_or_error(
    pending: Future[QueryEmbedding] | None, require_vector: bool
) -> tuple[QueryEmbedding | None, str]:
    if pending is None:
        return None, ""
    try:
        return pending.result(), ""
    except EmbeddingError as exc:
        if require_vector:
            raise
        return None, str(exc) or type(exc).__name__


def within_scopes(hits: list[FusedHit], scopes: Sequence[Scope]) -> list[FusedHit]:
    """`hits` without the rows smoothing brought in from outside their scope's queryset: a
    neighbour in the same session may be another user's (issue 26), pending or archived."""
    narrowed = {s.corpus: s.queryset for s in scopes if s.queryset is not None}
    entered = [h for h in hits if h.corpus in narrowed and set(h.legs) == {"neighbour"}]
    if not entered:
        return hits
    outside = set()
    for corpus, queryset in narrowed.items():
        ids = [h.object_id for h in entered if h.corpus == corpus]
        if ids:
            kept = set(queryset.filter(pk__in=ids).values_list("pk", flat=True))
            outside |= {(corpus, pk) for pk in ids if pk not in kept}
    return [h for h in hits if (h.corpus, h.object_id) not in outside]


def smooth(fused: list[FusedHit], weight: float) -> tuple[list[FusedHit], Neighbours]:
    """Conversation locality: each hit of a corpus with sessions passes `weight` x its score
    to the rows right before and after it in its session (which may then enter the results
    themselves). Evidence for a question is usually an exchange, not one message.

    Also returns the neighbours it looked up, {(corpus, pk): [pks]}, for the rerank stage."""
    scores = {(h.corpus, h.object_id): h.score for h in fused}
    legs = {(h.corpus, h.object_id): dict(h.legs) for h in fused}
    rank = {(h.corpus, h.object_id): i for i, h in enumerate(fused, start=1)}
    extra: dict = {}
    around = neighbours(fused, {})
    for source in rank:
        name = source[0]
        for neighbour in around.get(source, []):
            key = (name, neighbour)
            extra[key] = extra.get(key, 0.0) + weight * scores[source]
            best = legs.setdefault(key, {}).get("neighbour")
            if best is None or rank[source] < best.rank:
                legs[key]["neighbour"] = LegRank(rank=rank[source], score=scores[source])
    for key, add in extra.items():
        scores[key] = scores.get(key, 0.0) + add
    order = sorted(scores, key=lambda key: (-scores[key], rank.get(key, len(rank) + 1)))
    hits = [FusedHit(object_id=k[1], score=scores[k], legs=legs[k], corpus=k[0]) for k in order]
    return hits, around
