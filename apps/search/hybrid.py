"""The one hybrid ranking: BM25 and vector legs over one or more corpora, fused by RRF,
then (optionally) neighbour smoothing along each session and reranking of the top hits.

`/search` (seed 000's search_chat_history), `/memory/search` (seed 001) and get_context's
relevance leg all go through this module and apps/search/legs.py.
"""

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import cache

from django.db.models import QuerySet

from apps.providers.embeddings import EmbeddingError, embed_query
from apps.search.adjacency import adjacent, order_only
from apps.search.corpora import Corpus, get_corpus
from apps.search.legs import keyword_search, vector_search
from apps.search.ranking import RRF_K, FusedHit, Hit, LegRank, rrf
from apps.search.rerank import rerank_hits

DEPTH = 50  # each leg is read this deep (at least `limit`)


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
    depth: int = DEPTH,
    rrf_k: int = RRF_K,
    neighbour_weight: float = 0.0,
    require_vector: bool = True,
    rerank_depth: int = 0,
) -> HybridResult:
    """RRF over each scope's BM25 leg then vector leg (in scope order), best first.

    The query is embedded in another thread while the BM25 legs run: onnxruntime and the
    database driver both release the GIL, so the two overlap. When the query cannot be
    embedded: EmbeddingError if `require_vector`, else the keyword legs alone. With
    `rerank_depth`, that many top hits are reranked (apps/search/rerank.py).
    """
    depth = max(depth, limit)
    corpora = [get_corpus(s.corpus) for s in scopes]
    pending = _pool().submit(embed_query, query) if any(c.embeds for c in corpora) else None
    try:
        keyword = [
            _keyword_leg(c, s, agent_id, query, depth) for c, s in zip(corpora, scopes, strict=True)
        ]
    finally:
        if pending is not None:
            wait([pending])  # a failing BM25 leg must not leave the embedding running unseen
    vector, error = _vector_or_error(pending, require_vector)
    rankings: list[list[Hit]] = []
    for corpus, scope, bm25 in zip(corpora, scopes, keyword, strict=True):
        rankings.append(bm25)
        if corpus.embeds and vector is not None:
            rankings.append(
                vector_search(
                    corpus,
                    agent_id=agent_id,
                    vector=vector,
                    limit=depth,
                    queryset=scope.queryset,
                    exact=scope.exact,
                )
            )
    fused = rrf(*(r for r in rankings if r), k=rrf_k)
    if neighbour_weight > 0:
        fused = smooth(fused, neighbour_weight)
    rerank_error = ""
    if rerank_depth > 0:
        reranked = rerank_hits(query, fused, rerank_depth)
        fused, rerank_error = reranked.hits, reranked.error
    return HybridResult(hits=fused[:limit], vector_error=error, rerank_error=rerank_error)


def _keyword_leg(corpus: Corpus, scope: Scope, agent_id: int, query: str, depth: int):
    if not corpus.text_fields:
        return []
    return keyword_search(
        corpus, agent_id=agent_id, query=query, limit=depth, queryset=scope.queryset
    )


def _vector_or_error(pending, require_vector: bool):
    if pending is None:
        return None, ""
    try:
        return pending.result(), ""
    except EmbeddingError as exc:
        if require_vector:
            raise
        return None, str(exc) or type(exc).__name__


def smooth(fused: list[FusedHit], weight: float) -> list[FusedHit]:
    """Conversation locality: each hit of a corpus with sessions passes `weight` x its score
    to the rows right before and after it in its session (which may then enter the results
    themselves). Evidence for a question is usually an exchange, not one message."""
    scores = {(h.corpus, h.object_id): h.score for h in fused}
    legs = {(h.corpus, h.object_id): dict(h.legs) for h in fused}
    rank = {(h.corpus, h.object_id): i for i, h in enumerate(fused, start=1)}
    extra: dict = {}
    for name in dict.fromkeys(h.corpus for h in fused):
        corpus = get_corpus(name)
        if corpus.session_field is None:
            continue
        ids = [h.object_id for h in fused if h.corpus == name]
        rows = list(corpus.model._default_manager.filter(pk__in=ids).only(*order_only(corpus)))
        for pk, (prev, nxt) in adjacent(corpus, rows, 1, 1).items():
            for neighbour in prev + nxt:
                key = (name, neighbour)
                extra[key] = extra.get(key, 0.0) + weight * scores[(name, pk)]
                best = legs.setdefault(key, {}).get("neighbour")
                if best is None or rank[(name, pk)] < best.rank:
                    legs[key]["neighbour"] = LegRank(
                        rank=rank[(name, pk)], score=scores[(name, pk)]
                    )
    for key, add in extra.items():
        scores[key] = scores.get(key, 0.0) + add
    order = sorted(scores, key=lambda key: (-scores[key], rank.get(key, len(rank) + 1)))
    return [FusedHit(object_id=k[1], score=scores[k], legs=legs[k], corpus=k[0]) for k in order]
