"""fact_save: seed 001's memory_save (structured half) with dedup on write."""

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps.agents.config import AgentConfig
from apps.agents.models import Agent
from apps.conversations.models import Session
from apps.core.errors import InvalidInput
from apps.entries.services import lock_agent
from apps.facts import selectors, text
from apps.facts.models import Category, Fact, Source
from apps.facts.services.categories import auto_category, category_get_or_create
from apps.facts.services.embedding import embed, schedule_embedding
from apps.facts.services.salience import fact_salience
from apps.facts.services.validation import clean_importance, clean_key, clean_value
from apps.facts.services.versions import add_version, change_value


@dataclass(frozen=True)
class SaveResult:
    fact: Fact
    action: str  # created | updated | reinforced
    similarity: float | None  # cosine to the existing fact, for a semantic dedup

    @property
    def deduped(self) -> bool:
        return self.action != "created"


def _unique_key(agent: Agent, category: Category, key: str) -> str:
    taken = set(
        Fact.objects.current()
        .filter(agent=agent, category=category, key__startswith=key)
        .values_list("key", flat=True)
    )
    if key not in taken:
        return key
    n = 2
    while f"{key}-{n}" in taken:
        n += 1
    return f"{key}-{n}"


def _reinforce(fact: Fact, *, config: AgentConfig, importance: float | None, now: datetime) -> Fact:
    fact.access_count += 1
    fact.last_accessed_at = now
    if importance is not None:
        fact.importance = max(fact.importance, importance)
    fact.updated_at = now
    fact.salience = fact_salience(fact, config=config, now=now)
    fact.save(
        update_fields=["access_count", "last_accessed_at", "importance", "updated_at", "salience"]
    )
    return fact


def fact_save(
    *,
    agent: Agent,
    content: str,
    category: str | None = None,
    key: str | None = None,
    importance: float | None = None,
    source: str = Source.AGENT,
    session: Session | None = None,
) -> SaveResult:
    """Save a fact with dedup on write (seed 001's memory_save, structured half).

    Same key in the category: the value is updated (a new version). Same normalised value,
    or cosine >= fact_dedup_threshold within the category: the existing fact is reinforced
    (same value) or updated to the new wording (paraphrase). Otherwise a new fact.
    """
    config = agent.config
    value = clean_value(agent, content, loc=["body", "content"])
    key = clean_key(key, loc=["body", "key"]) if key is not None else None
    if importance is not None:
        importance = clean_importance(importance, 0.0, loc=["body", "importance"])
    if source not in Source.values:
        raise InvalidInput(f"unknown source '{source}'", loc=["body", "source"])
    emb = embed(value)
    with transaction.atomic():
        lock_agent(agent)
        cat = (
            category_get_or_create(agent=agent, name=category)
            if category is not None
            else auto_category(agent, emb.vector)
        )
        now = timezone.now()
        current = Fact.objects.current().filter(agent=agent, category=cat)
        norm = text.normalized_hash(value)
        existing = current.filter(key=key).first() if key else None
        if existing is not None:
            if existing.normalized == norm:
                return SaveResult(
                    _reinforce(existing, config=config, importance=importance, now=now),
                    "reinforced",
                    None,
                )
            change_value(
                existing,
                agent=agent,
                value=value,
                emb=emb,
                by=source,
                reason="saved again under the same key",
                now=now,
            )
            return SaveResult(
                _reinforce(existing, config=config, importance=importance, now=now), "updated", None
            )
        same = current.filter(normalized=norm).order_by("id").first()
        if same is not None:
            return SaveResult(
                _reinforce(same, config=config, importance=importance, now=now), "reinforced", 1.0
            )
        if emb.vector is not None:
            near = selectors.facts_nearest(
                agent=agent, vector=emb.vector, category_ids=[cat.pk], k=1
            )
            if near and near[0][1] >= config.fact_dedup_threshold:
                fact, similarity = near[0]
                reason = f"paraphrase saved (cosine {similarity:.3f})"
                change_value(
                    fact, agent=agent, value=value, emb=emb, by=source, reason=reason, now=now
                )
                return SaveResult(
                    _reinforce(fact, config=config, importance=importance, now=now),
                    "updated",
                    similarity,
                )
        fact = Fact(
            agent=agent,
            category=cat,
            key=_unique_key(agent, cat, key or text.derive_key(value)),
            value=value,
            normalized=norm,
            source=source,
            importance=importance if importance is not None else config.fact_default_importance,
            embedding=emb.vector,
            embedding_model=emb.model,
            embedding_error=emb.error,
            session=session,
            valid_from=now,
            created_at=now,
            updated_at=now,
        )
        fact.salience = fact_salience(fact, config=config, now=now)
        fact.save()
        add_version(fact, old="", new=value, by=source, reason="created", at=now)
        if emb.vector is None:
            schedule_embedding(fact.pk)
    return SaveResult(fact, "created", None)
