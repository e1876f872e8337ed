"""Categories: created on first use with the embedding of their name; auto-categorisation.

Name vectors are computed before any transaction (`category_vectors`); inside it a category
is created with the vector it was handed, or without one, for the pipeline to embed later.
"""

from collections.abc import Iterable

import numpy as np

from apps.agents.models import Agent
from apps.facts import selectors
from apps.facts.models import GENERAL, Category
from apps.search.embedding import Embedding, embed_text
from apps.search.embedding_queue import schedule_embedding


def category_vectors(*, agent: Agent, names: Iterable[str]) -> dict[str, Embedding]:
    """Embeddings of the names that are not yet the agent's categories (call outside a
    transaction: it may embed)."""
    names = list(dict.fromkeys(names))
    existing = set(
        Category.objects.filter(agent=agent, name__in=names).values_list("name", flat=True)
    )
    return {name: embed_text(name) for name in names if name not in existing}


def category_get_or_create(
    *, agent: Agent, name: str, vectors: dict[str, Embedding] | None = None
) -> Category:
    """The agent's category by (clean) name, created if missing with its vector from
    `vectors`; without one the search pipeline embeds it after commit. Never embeds."""
    category = Category.objects.filter(agent=agent, name=name).first()
    if category is not None:
        return category
    emb = (vectors or {}).get(name) or Embedding(vector=None, model="", error="")
    category, created = Category.objects.get_or_create(
        agent=agent,
        name=name,
        defaults=emb.columns(),
    )
    if created and emb.vector is None:
        schedule_embedding(corpus="categories", agent_id=agent.pk)
    return category


def auto_category_name(agent: Agent, vector: np.ndarray | None) -> str:
    """Seed 001's auto-categorisation: the nearest existing category by embedding, or general."""
    if vector is not None:
        nearest = selectors.categories_nearest(
            agent=agent, vector=vector, threshold=agent.config.category_match_threshold, limit=1
        )
        if nearest:
            return nearest[0][0].name
    return GENERAL
