"""Rank fusion and the BM25 formula shared by the backends."""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# Okapi BM25 parameters (the issue fixes them; FTS5's bm25() uses the same defaults).
K1 = 1.2
B = 0.75
# Reciprocal-rank-fusion constant (Cormack et al. 2009; pgvector's hybrid example).
RRF_K = 60


@dataclass(frozen=True)
class Hit:
    """One result of one leg: the object's primary key, its score in that leg, the leg name."""

    object_id: Any  # Any: the primary key of whichever model the corpus names (int or UUID)
    score: float
    leg: str  # "bm25" | "vector" | "contains"
    corpus: str = ""


@dataclass(frozen=True)
class LegRank:
    rank: int  # 1-based rank inside the leg
    score: float  # the leg's own score (BM25, cosine, 1.0 for contains)


@dataclass(frozen=True)
class FusedHit:
    """A hit after fusion: the fused score and, per leg that found it, its rank and score."""

    object_id: Any  # Any: the primary key of whichever model the corpus names (int or UUID)
    score: float
    legs: dict[str, LegRank] = field(default_factory=dict)
    corpus: str = ""


def bm25_idf(n_docs: int, doc_freq: int) -> float:
    """Lucene's idf, ln(1 + (N - n + 0.5) / (n + 0.5)): positive for every term (one in half
    the documents weighs ln 2), where FTS5's, ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6,
    scores a term in half the documents or more (any match in a tiny corpus) as ~0."""
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def bm25_term(idf: float, tf: float, doc_len: float, avg_len: float) -> float:
    """One term's BM25 contribution (k1 = 1.2, b = 0.75)."""
    if tf <= 0:
        return 0.0
    return idf * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * doc_len / avg_len))


def rrf(
    *rankings: Sequence[Hit], k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[FusedHit]:
    """Reciprocal-rank fusion: score = sum over legs of weight / (k + rank), best first.

    Each ranking is one leg's hits, best first; a hit is identified by (corpus, object_id).
    Ties keep the order of first appearance.
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    scores: dict[tuple[str, Any], float] = {}  # Any: Hit.object_id's primary keys
    legs: dict[tuple[str, Any], dict[str, LegRank]] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, hit in enumerate(ranking, start=1):
            key = (hit.corpus, hit.object_id)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            legs.setdefault(key, {})[hit.leg] = LegRank(rank=rank, score=hit.score)
    order = sorted(scores, key=lambda key: -scores[key])  # stable: first appearance on ties
    return [
        FusedHit(object_id=key[1], score=scores[key], legs=legs[key], corpus=key[0])
        for key in order
    ]


def single(hits: Sequence[Hit]) -> list[FusedHit]:
    """One leg's hits as fused hits: its own scores, ranks from 1."""
    return [
        FusedHit(
            object_id=h.object_id,
            score=h.score,
            legs={h.leg: LegRank(rank=i, score=h.score)},
            corpus=h.corpus,
        )
        for i, h in enumerate(hits, start=1)
    ]
