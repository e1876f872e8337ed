"""facts_recall: seed 001's memory_recall (categories -> scoped facts -> flat fallback)."""

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.utils import timezone

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.core.errors import InvalidInput, NotFound
from apps.core.replicas import on_replica
from apps.facts import selectors
from apps.facts.models import Category, Fact, FactStatus
from apps.facts.services.fact_validation import clean_category
from apps.facts.services.salience_update import fact_salience, facts_touch
from apps.providers.embeddings import EmbeddingError, embed_query


@dataclass(frozen=True)
class RecallHit:
    fact: Fact
    similarity: float
    score: float
    tier: str  # scoped | flat | category


@dataclass(frozen=True)
class RecallResult:
    hits: list[RecallHit]
    categories: list[str]  # tier 1: the matching categories, best first
    fell_back: bool  # tier 3 ran
    degraded: list[str] = field(default_factory=list)  # ["semantic"]: by keyword, no embedder


@dataclass
class _Recall:
    """One recall's inputs and what its tiers have found so far."""

    agent: Agent
    query: str
    vector: np.ndarray | None
    k: int
    now: datetime
    audience: Audience
    hits: dict[int, RecallHit] = field(default_factory=dict)
    categories: list[str] = field(default_factory=list)
    fell_back: bool = False

    def add(self, found: list[tuple[Fact, float]], tier: str, *, replace: bool = True) -> None:
        config = self.agent.config
        w = config.recall_salience_weight
        for fact, sim in found:
            if fact.status != FactStatus.ACTIVE:
                continue  # waiting for review
            score = (1 - w) * sim + w * fact_salience(fact, config=config, now=self.now)
            if replace or fact.pk not in self.hits:
                self.hits[fact.pk] = RecallHit(fact, sim, score, tier)


def _in_category(r: _Recall, category: str) -> None:
    """An explicit category: only its facts, by meaning (by keyword without an embedder)."""
    name = clean_category(category, loc=["body", "category"])
    cat = Category.objects.filter(agent=r.agent, name=name).first()
    if cat is None:
        raise NotFound(f"no category '{name}'", loc=["body", "category"])
    r.categories = [cat.name]
    found = selectors.facts_found(
        agent=r.agent,
        audience=r.audience,
        vector=r.vector,
        query=r.query,
        category_ids=[cat.pk],
        k=r.k,
    )
    r.add(found, "category")


def _by_keyword(r: _Recall) -> None:
    """No embedder: keyword match keeps recall working on what was saved."""
    r.add(
        selectors.facts_found(
            agent=r.agent, audience=r.audience, query=r.query, category_ids=None, k=r.k
        ),
        "flat",
    )
    r.fell_back = True


def _three_tiers(r: _Recall, vector: np.ndarray) -> None:
    """Seed 001: matching categories (tier 1), their facts (tier 2), a flat fallback (tier 3)
    when fewer than recall_scoped_min scoped hits are similar enough."""
    config = r.agent.config
    matched = selectors.categories_nearest(
        agent=r.agent,
        vector=vector,
        threshold=config.category_match_threshold,
        limit=config.recall_max_categories,
    )
    r.categories = [c.name for c, _ in matched]
    if matched:
        ids = [c.pk for c, _ in matched]
        scoped = selectors.facts_found(
            agent=r.agent, audience=r.audience, vector=vector, category_ids=ids, k=r.k
        )
        r.add(scoped, "scoped")
    good = sum(1 for h in r.hits.values() if h.similarity >= config.recall_min_similarity)
    if good < min(r.k, config.recall_scoped_min):
        r.fell_back = True
        flat = selectors.facts_found(
            agent=r.agent, audience=r.audience, vector=vector, category_ids=None, k=r.k
        )
        r.add(flat, "flat", replace=False)


@on_replica
def _tiers(r: _Recall, category: str | None) -> None:
    """The tiers' reads, from a replica when there is one (recall finds what was saved
    before it). The reinforcement of the hits and their reload, after, are on the primary."""
    r.hits.clear()  # on_replica runs this again on the primary when its replica fails
    r.fell_back = False
    if category is not None:
        _in_category(r, category)
    elif r.vector is None:
        _by_keyword(r)
    else:
        _three_tiers(r, r.vector)


def facts_recall(
    *,
    agent: Agent,
    query: str,
    category: str | None = None,
    k: int | None = None,
    audience: Audience,
) -> RecallResult:
    """Seed 001's memory_recall over the facts `audience` sees: categories -> scoped facts
    -> flat fallback, reinforced."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must not be empty", loc=["body", "query"])
    try:
        vector = embed_query(query)
    except EmbeddingError:
        vector = None  # keyword recall keeps working on what was saved
    r = _Recall(agent, query, vector, k or agent.config.recall_k, timezone.now(), audience)
    _tiers(r, category)
    ranked = sorted(r.hits.values(), key=lambda h: (-h.score, h.fact.pk))[: r.k]
    ids = [h.fact.pk for h in ranked]
    facts_touch(agent=agent, fact_ids=ids)
    fresh = Fact.objects.select_related("category").defer(*selectors.VECTORS).in_bulk(ids)
    ranked = [RecallHit(fresh[h.fact.pk], h.similarity, h.score, h.tier) for h in ranked]
    return RecallResult(
        hits=ranked,
        categories=r.categories,
        fell_back=r.fell_back,
        degraded=["semantic"] if vector is None else [],
    )
