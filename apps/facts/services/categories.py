"""Categories: created on first use with the embedding of their name; auto-categorisation."""

import numpy as np

from apps.agents.models import Agent
from apps.facts import selectors
from apps.facts.models import GENERAL, Category
from apps.facts.services.embedding import embed
from apps.facts.services.validation import clean_category


def category_get_or_create(*, agent: Agent, name: str) -> Category:
    """The agent's category by name, created (with the embedding of its name) if missing."""
    name = clean_category(name, loc=["body", "category"])
    category = Category.objects.filter(agent=agent, name=name).first()
    if category is not None:
        return category
    emb = embed(name)
    category, _ = Category.objects.get_or_create(
        agent=agent,
        name=name,
        defaults={
            "embedding": emb.vector,
            "embedding_model": emb.model,
            "embedding_error": emb.error,
        },
    )
    return category


def auto_category(agent: Agent, vector: np.ndarray | None) -> Category:
    """Seed 001's auto-categorisation: the nearest existing category by embedding, or general."""
    if vector is not None:
        nearest = selectors.categories_nearest(
            agent=agent, vector=vector, threshold=agent.config.category_match_threshold, limit=1
        )
        if nearest:
            return nearest[0][0]
    return category_get_or_create(agent=agent, name=GENERAL)
