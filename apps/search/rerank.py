"""The reranking stage of hybrid search: weighted MaxSim between the query's token states and
the candidates' stored ones, blended with the fused score. No model runs here: the query's
states come from its own embedding (one model run, cached), the candidates' from their rows.

MaxSim (ColBERT's late interaction): for each content word of the query, its best cosine
among a candidate's tokens; the candidate's score is their weighted mean, each word weighted
by exp(-DECAY x its mean best match over the candidates), normalised, so a word every
candidate matches (a speaker's name) counts for less, as a common term does in BM25. A
candidate's tokens are its own and, discounted by WINDOW_DISCOUNT, those of the rows right
before and after it in its session: evidence is usually an exchange, and a question's word
is often answered in the turn next to the one that names it.
Blend: z(fused) + RERANK_WEIGHT x z(MaxSim) over the candidates (z: standardised within this
query's candidates, so neither scale needs calibrating). A candidate without stored states
(not backfilled yet) is given the candidates' mean MaxSim (z = 0): it keeps its place by its
fused score alone, neither raised nor sunk by a score it does not have.

The constants were measured on the LoCoMo dev conversations, the weight and the discount
chosen by leave-one-conversation-out (docs/search.md, "Reranking").
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from apps.providers.embeddings import QueryEmbedding
from apps.search.adjacency import Neighbours, neighbours
from apps.search.corpora import get_corpus
from apps.search.ranking import FusedHit, LegRank
from apps.search.token_states import states_load

logger = logging.getLogger(__name__)

RERANK_WEIGHT = 2.0
DECAY = 5.0  # LoCoMo dev R@10 is flat for 3..7 (docs/search.md, "Reranking")
WINDOW_DISCOUNT = 0.8  # a match in a session neighbour counts 0.8 of one in the row itself


@dataclass(frozen=True)
class Reranked:
    hits: list[FusedHit]
    error: str = ""  # set when the query's token states were missing (hits in fused order)


def maxsim(query: np.ndarray, docs: list[np.ndarray], decay: float = DECAY) -> np.ndarray:
    """Weighted MaxSim of each document (unit token rows) against the query's unit word rows;
    the word weights depend on all the documents given. A document without tokens scores -1."""
    if not docs:
        return np.zeros(0)
    if len(query) == 0:
        return np.zeros(len(docs))
    best = np.full((len(docs), len(query)), -1.0, dtype=np.float32)
    for i, d in enumerate(docs):
        if len(d):
            best[i] = (query @ d.T).max(axis=1)
    return weighted(best, decay)


def weighted(best: np.ndarray, decay: float = DECAY) -> np.ndarray:
    """Each document's weighted mean of its best match per query word (documents x words):
    a word's weight falls as exp(-decay x its mean best match over the documents)."""
    if best.shape[1] == 0:
        return np.zeros(len(best))
    logits = -decay * best.mean(axis=0)
    weights = np.exp(logits - logits.max())
    return best @ (weights / weights.sum())


def rerank_hits(
    query: QueryEmbedding | None,
    fused: list[FusedHit],
    depth: int,
    around: Neighbours | None = None,
) -> Reranked:
    """The first `depth` hits re-ordered by the blend, then the rest in fused order.

    Reranked hits carry the blend as their score, and those with stored states a "rerank"
    leg (rank and MaxSim among the candidates); later hits are scored one apart below them.
    `around` holds neighbours already looked up (by smoothing); the others are read here.
    Without the query's token states the fused order is returned, with the reason as error.
    """
    head, tail = fused[:depth], fused[depth:]
    if query is None or query.tokens is None:
        error = query.token_error if query is not None else ""
        if error:
            logger.warning("reranking skipped, fused order kept: %s", error)
        return Reranked(hits=fused, error=error)
    if len(head) < 2:
        return Reranked(hits=fused)
    keys = [(h.corpus, h.object_id) for h in head]
    scored, found = _scores(query, keys, neighbours(head, around or {}))
    if not scored:
        return Reranked(hits=fused)
    rerank = np.zeros(len(head))
    rerank[scored] = _z(found)
    blend = _z(np.array([h.score for h in head])) + RERANK_WEIGHT * rerank
    return Reranked(hits=_ordered(head, tail, blend, scored, found))


def _scores(query: QueryEmbedding, keys: list, around: Neighbours) -> tuple[list[int], np.ndarray]:
    """The candidates that have stored states (their positions) and their window MaxSim."""
    assert query.tokens is not None  # rerank_hits returns before this without them
    wanted = list(dict.fromkeys([*keys, *((k[0], n) for k in keys for n in around.get(k, []))]))
    best = _best_per_row(query.tokens, wanted, query.token_space)
    scored = [i for i, key in enumerate(keys) if key in best]
    if not scored:
        return [], np.zeros(0)
    return scored, weighted(np.stack([_window(keys[i], best, around) for i in scored]))


def _ordered(
    head: Sequence[FusedHit],
    tail: Sequence[FusedHit],
    blend: np.ndarray,
    scored: list[int],
    found: np.ndarray,
) -> list[FusedHit]:
    """The candidates by blend, with their rerank legs, then the tail one apart below."""
    legs = {
        scored[j]: LegRank(rank=r, score=float(found[j]))
        for r, j in enumerate(np.argsort(-found, kind="stable"), start=1)
    }
    out = [
        FusedHit(
            object_id=head[i].object_id,
            score=float(blend[i]),
            legs={**head[i].legs, "rerank": legs[i]} if i in legs else head[i].legs,
            corpus=head[i].corpus,
        )
        for i in np.argsort(-blend, kind="stable")
    ]
    floor = float(blend.min())
    out += [
        FusedHit(object_id=h.object_id, score=floor - n, legs=h.legs, corpus=h.corpus)
        for n, h in enumerate(tail, start=1)
    ]
    return out


def _z(values: np.ndarray) -> np.ndarray:
    std = values.std()
    return (values - values.mean()) / std if std > 0 else np.zeros_like(values)


def _window(key: tuple[str, object], best: dict, around: Neighbours) -> np.ndarray:
    """A candidate's best match per query word in its window: its own tokens, and its
    neighbours' (those with states) at WINDOW_DISCOUNT (the max over a union of token sets
    is the max of their maxima)."""
    out = best[key]
    for n in around.get(key, []):
        if (key[0], n) in best:
            out = np.maximum(out, WINDOW_DISCOUNT * best[(key[0], n)])
    return out


def _best_per_row(
    query: np.ndarray, keys: list[tuple[str, object]], space: str
) -> dict[tuple[str, object], np.ndarray]:
    """Each stored row's best cosine per query word ((corpus, pk) -> words), for the rows
    that have states; a row without tokens gets -1. One statement per corpus and one
    matrix product for all the rows' tokens."""
    out = {}
    for name in dict.fromkeys(k[0] for k in keys):
        loaded = states_load(get_corpus(name), [pk for c, pk in keys if c == name], space)
        if not loaded.ids:
            continue
        best = np.full((len(loaded.ids), len(query)), -1.0, dtype=np.float32)
        filled = loaded.counts > 0
        if filled.any() and len(query):
            sims = loaded.rows @ query.T
            best[filled] = np.maximum.reduceat(sims, loaded.starts[filled], axis=0)
        out.update({(name, pk): best[i] for i, pk in enumerate(loaded.ids)})
    return out
