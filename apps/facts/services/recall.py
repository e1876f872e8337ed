"""facts_recall: seed 001's memory_recall (categories -> scoped facts -> flat fallback)."""

from dataclasses import dataclass

from django.utils import timezone

from apps.agents.models import Agent
from apps.core.errors import InvalidInput, NotFound
from apps.facts import selectors
from apps.facts.models import Category, Fact
from apps.facts.services.salience import fact_salience, facts_touch
from apps.facts.services.validation import clean_category
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


def facts_recall(
    *, agent: Agent, query: str, category: str | None = None, k: int | None = None
) -> RecallResult:
    """Seed 001's memory_recall: categories -> scoped facts -> flat fallback, reinforced."""
    config = agent.config
    k = k or config.recall_k
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must not be empty", loc=["body", "query"])
    try:
        vector = embed_query(query)
    except EmbeddingError:
        vector = None  # keyword recall keeps working on what was saved
    w = config.recall_salience_weight
    now = timezone.now()

    def score(fact: Fact, similarity: float) -> float:
        return (1 - w) * similarity + w * fact_salience(fact, config=config, now=now)

    hits: dict[int, RecallHit] = {}
    categories: list[str] = []
    fell_back = False
    if category is not None:
        name = clean_category(category, loc=["body", "category"])
        cat = Category.objects.filter(agent=agent, name=name).first()
        if cat is None:
            raise NotFound(f"no category '{name}'", loc=["body", "category"])
        categories = [cat.name]
        found = (
            selectors.facts_nearest(agent=agent, vector=vector, category_ids=[cat.pk], k=k)
            if vector is not None
            else selectors.facts_keyword(agent=agent, query=query, category_ids=[cat.pk], k=k)
        )
        for fact, sim in found:
            hits[fact.pk] = RecallHit(fact, sim, score(fact, sim), "category")
    elif vector is None:
        # No embedder: keyword match keeps recall working on what was saved.
        for fact, sim in selectors.facts_keyword(agent=agent, query=query, category_ids=None, k=k):
            hits[fact.pk] = RecallHit(fact, sim, score(fact, sim), "flat")
        fell_back = True
    else:
        matched = selectors.categories_nearest(
            agent=agent,
            vector=vector,
            threshold=config.category_match_threshold,
            limit=config.recall_max_categories,
        )
        categories = [c.name for c, _ in matched]
        if matched:
            scoped = selectors.facts_nearest(
                agent=agent, vector=vector, category_ids=[c.pk for c, _ in matched], k=k
            )
            for fact, sim in scoped:
                hits[fact.pk] = RecallHit(fact, sim, score(fact, sim), "scoped")
        good = sum(1 for h in hits.values() if h.similarity >= config.recall_min_similarity)
        if good < min(k, config.recall_scoped_min):
            fell_back = True
            for fact, sim in selectors.facts_nearest(
                agent=agent, vector=vector, category_ids=None, k=k
            ):
                hits.setdefault(fact.pk, RecallHit(fact, sim, score(fact, sim), "flat"))
    ranked = sorted(hits.values(), key=lambda h: (-h.score, h.fact.pk))[:k]
    ids = [h.fact.pk for h in ranked]
    facts_touch(agent=agent, fact_ids=ids)
    fresh = Fact.objects.select_related("category").defer(*selectors.VECTORS).in_bulk(ids)
    ranked = [RecallHit(fresh[h.fact.pk], h.similarity, h.score, h.tier) for h in ranked]
    return RecallResult(hits=ranked, categories=categories, fell_back=fell_back)
