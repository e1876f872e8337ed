"""Value history: every change records a FactVersion; edit in place, supersede, delete."""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps.agents.models import Agent
from apps.core.errors import Conflict
from apps.entries.services import lock_agent
from apps.facts import text
from apps.facts.models import Fact, FactVersion
from apps.facts.services.categories import category_get_or_create
from apps.facts.services.embedding import Embedding, embed, schedule_embedding
from apps.facts.services.salience import fact_salience
from apps.facts.services.validation import clean_importance, clean_key, clean_value


def add_version(fact: Fact, *, old: str, new: str, by: str, reason: str, at: datetime) -> None:
    last = fact.versions.order_by("-number").values_list("number", flat=True).first() or 0
    FactVersion.objects.create(
        fact=fact,
        number=last + 1,
        old_value=old,
        new_value=new,
        changed_by=by,
        reason=reason,
        changed_at=at,
    )


def change_value(
    fact: Fact, *, agent: Agent, value: str, emb: Embedding, by: str, reason: str, now: datetime
) -> Fact:
    """Set a new value with its embedding and record the version (old -> new, who, why)."""
    old = fact.value
    fact.value = value
    fact.normalized = text.normalized_hash(value)
    fact.embedding, fact.embedding_model, fact.embedding_error = emb.vector, emb.model, emb.error
    fact.updated_at = now
    fact.save(
        update_fields=[
            "value",
            "normalized",
            "embedding",
            "embedding_model",
            "embedding_error",
            "updated_at",
        ]
    )
    add_version(fact, old=old, new=value, by=by, reason=reason, at=now)
    return fact


@transaction.atomic
def fact_update(
    *,
    agent: Agent,
    fact: Fact,
    changed_by: str,
    reason: str = "",
    value: str | None = None,
    key: str | None = None,
    category: str | None = None,
    importance: float | None = None,
) -> Fact:
    """Edit a current fact in place; a value change records a version (old value, who, why)."""
    if fact.valid_to is not None:
        raise Conflict("a superseded fact is history and cannot be edited")
    lock_agent(agent)
    now = timezone.now()
    fields: list[str] = []
    if category is not None:
        fact.category = category_get_or_create(agent=agent, name=category)
        fields.append("category")
    if key is not None:
        fact.key = clean_key(key, loc=["body", "key"])
        fields.append("key")
    if key is not None or category is not None:
        clash = (
            Fact.objects.current()
            .filter(agent=agent, category=fact.category, key=fact.key)
            .exclude(pk=fact.pk)
        )
        if clash.exists():
            raise Conflict(
                f"key '{fact.key}' already exists in category '{fact.category.name}'",
                loc=["body", "key"],
            )
    if importance is not None:
        fact.importance = clean_importance(importance, fact.importance, loc=["body", "importance"])
        fields.append("importance")
    if fields:
        fact.salience = fact_salience(fact, config=agent.config, now=now)
        fact.updated_at = now
        fact.save(update_fields=[*fields, "salience", "updated_at"])
    if value is not None:
        value = clean_value(agent, value, loc=["body", "value"])
        if value != fact.value:
            change_value(
                fact,
                agent=agent,
                value=value,
                emb=embed(value),
                by=changed_by,
                reason=reason or "edited",
                now=now,
            )
            if fact.embedding is None:
                schedule_embedding(fact.pk)
    return fact


@transaction.atomic
def fact_supersede(
    *, agent: Agent, fact: Fact, value: str, changed_by: str, reason: str = ""
) -> Fact:
    """Close `fact` (valid_to = now) and start its successor with the same category and key."""
    value = clean_value(agent, value, loc=["body", "value"])
    lock_agent(agent)
    fact = Fact.objects.select_related("category").get(pk=fact.pk)
    if fact.valid_to is not None:
        raise Conflict("the fact is already superseded", loc=["path", "fact_id"])
    now = timezone.now()
    emb = embed(value)
    Fact.objects.filter(pk=fact.pk).update(valid_to=now, updated_at=now)
    successor = Fact.objects.create(
        agent=agent,
        category=fact.category,
        key=fact.key,
        value=value,
        normalized=text.normalized_hash(value),
        source=fact.source,
        importance=fact.importance,
        embedding=emb.vector,
        embedding_model=emb.model,
        embedding_error=emb.error,
        session=fact.session,
        valid_from=now,
        created_at=now,
        updated_at=now,
    )
    successor.salience = fact_salience(successor, config=agent.config, now=now)
    successor.save(update_fields=["salience"])
    Fact.objects.filter(pk=fact.pk).update(superseded_by=successor)
    add_version(
        fact,
        old=fact.value,
        new=value,
        by=changed_by,
        reason=reason or f"superseded by #{successor.pk}",
        at=now,
    )
    add_version(
        successor,
        old=fact.value,
        new=value,
        by=changed_by,
        reason=reason or f"supersedes #{fact.pk}",
        at=now,
    )
    if emb.vector is None:
        schedule_embedding(successor.pk)
    fact.refresh_from_db()
    return successor


@transaction.atomic
def fact_delete(*, agent: Agent, fact: Fact) -> None:
    """Delete a fact and its versions; successors keep standing on their own."""
    lock_agent(agent)
    Fact.objects.filter(pk=fact.pk, agent=agent).delete()
