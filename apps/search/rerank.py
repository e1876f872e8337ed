"""The reranking stage of hybrid search: the configured reranker re-scores the top fused
candidates, and its score is blended with the fused one.

Blend: z(fused) + RERANK_WEIGHT x z(reranker) over the candidates (z: standardised within
this query's candidates, so neither scale needs calibrating). On LoCoMo dev the weight has a
flat optimum between 1 and 3 (docs/search.md, "Reranking"). A failing reranker leaves the
fused order as it was.
"""

import logging
from dataclasses import dataclass

import numpy as np

from apps.providers.rerank import RerankError, get_reranker
from apps.search.corpora import get_corpus
from apps.search.ranking import FusedHit, LegRank

logger = logging.getLogger(__name__)

RERANK_WEIGHT = 2.0


@dataclass(frozen=True)
class Reranked:
    hits: list[FusedHit]
    error: str = ""  # set when the reranker failed (hits are then the fused order)


def rerank_hits(query: str, fused: list[FusedHit], depth: int) -> Reranked:
    """The first `depth` hits re-ordered by the blend, then the rest in fused order.

    Reranked hits carry the blend as their score and a "rerank" leg (rank and score among the
    candidates); later hits are scored one apart below them. Call outside transactions.
    """
    head, tail = fused[:depth], fused[depth:]
    if len(head) < 2:
        return Reranked(hits=fused)
    try:
        reranker = get_reranker()
        scores = np.asarray(reranker.score(query, _texts(head)), dtype=np.float64)
    except RerankError as exc:
        logger.warning("reranking failed, fused order kept: %s", exc)
        return Reranked(hits=fused, error=str(exc) or type(exc).__name__)
    blend = _z(np.array([h.score for h in head])) + RERANK_WEIGHT * _z(scores)
    by_reranker = {i: r for r, i in enumerate(np.argsort(-scores, kind="stable"), start=1)}
    order = np.argsort(-blend, kind="stable")
    out = [
        FusedHit(
            object_id=head[i].object_id,
            score=float(blend[i]),
            legs={**head[i].legs, "rerank": LegRank(rank=by_reranker[i], score=float(scores[i]))},
            corpus=head[i].corpus,
        )
        for i in order
    ]
    floor = float(blend.min())
    out += [
        FusedHit(object_id=h.object_id, score=floor - n, legs=h.legs, corpus=h.corpus)
        for n, h in enumerate(tail, start=1)
    ]
    return Reranked(hits=out)


def _z(values: np.ndarray) -> np.ndarray:
    std = values.std()
    return (values - values.mean()) / std if std > 0 else np.zeros_like(values)


def _texts(hits: list[FusedHit]) -> list[str]:
    """Each hit's text as its corpus embeds it (or its indexed text fields); "" if deleted."""
    texts: dict[tuple[str, object], str] = {}
    for name in dict.fromkeys(h.corpus for h in hits):
        corpus = get_corpus(name)
        fields = corpus.embed_fields if corpus.embeds else corpus.text_fields
        ids = [h.object_id for h in hits if h.corpus == name]
        rows = corpus.model._default_manager.filter(pk__in=ids).only(*fields)
        for row in rows:
            if corpus.embeds:
                text = corpus.embed(row) or ""
            else:
                text = " ".join(str(getattr(row, f) or "") for f in fields)
            texts[(name, row.pk)] = text
    return [texts.get((h.corpus, h.object_id), "") for h in hits]
