"""Value history: every change records a FactVersion; edit in place, supersede, delete.

Each service embeds (a new value, a new category's name) before its transaction, then takes
the agent lock and the fact's row lock, re-reads the fact and writes.
"""

import uuid
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.agents.users import AGENT, EVERYONE
from apps.core.errors import Conflict
from apps.facts import text
from apps.facts.models import Category, Fact, FactStatus, FactVersion
from apps.facts.selectors import fact_get
from apps.facts.services.categories import category_get_or_create, category_vectors
from apps.facts.services.fact_validation import (
    clean_category,
    clean_importance,
    clean_key,
    clean_value,
)
from apps.facts.services.salience_update import fact_salience, lock_facts
from apps.search.embedding import Embedding, embed_text
from apps.search.embedding_queue import schedule_embedding
from apps.search.services import states_replace


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
    fact: Fact, *, value: str, emb: Embedding, by: str, reason: str, now: datetime
) -> Fact:
    """Set a new value with its (precomputed) embedding and record the version (old -> new,
    who, why); a missing vector is left to the search pipeline."""
    old = fact.value
    fact.value = value
    fact.normalized = text.normalized_hash(value)
    columns = emb.columns()
    for name, column_value in columns.items():
        setattr(fact, name, column_value)
    fact.updated_at = now
    fact.save(update_fields=["value", "normalized", *columns, "updated_at"])
    add_version(fact, old=old, new=value, by=by, reason=reason, at=now)
    states_replace(corpus="facts", pk=fact.pk, emb=emb)
    if emb.vector is None:
        schedule_embedding(corpus="facts", agent_id=fact.agent_id)
    return fact


def _locked(agent: Agent, fact: Fact) -> Fact:
    """The agent lock, then the fact's row lock; the fact as it is now."""
    lock_agent(agent)
    lock_facts([fact.pk])
    return fact_get(agent=agent, fact_id=fact.pk, audience=EVERYONE)  # the caller found it


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
    embed_now: bool = True,
) -> Fact:
    """Edit a current fact in place; a value change records a version (old value, who, why).

    A new value is embedded before the transaction opens; with `embed_now=False` (callers
    already inside a transaction, such as the admin) the search pipeline embeds it after
    commit instead.
    """
    value = clean_value(agent, value, loc=["body", "value"]) if value is not None else None
    key = clean_key(key, loc=["body", "key"]) if key is not None else None
    if category is not None:
        category = clean_category(category, loc=["body", "category"])
    if importance is not None:
        importance = clean_importance(importance, 0.0, loc=["body", "importance"])
    # Computed before the transaction: a changed value's vector, a new category's.
    changed = value is not None and value != fact.value
    emb = embed_text(value, corpus="facts") if value is not None and changed and embed_now else None
    names = category_vectors(agent=agent, names=[category]) if category is not None else {}
    with transaction.atomic():
        fact = _locked(agent, fact)
        if fact.valid_to is not None:
            raise Conflict("a superseded fact is history and cannot be edited")
        now = timezone.now()
        _update_fields(agent, fact, key=key, category=category, importance=importance,
                       names=names, now=now)  # fmt: skip
        if value is not None and value != fact.value:
            # Changed again since `emb` was computed (or not computed): the pipeline embeds it.
            emb = emb or Embedding(vector=None, model="", error="")
            change_value(fact, value=value, emb=emb, by=changed_by, reason=reason or "edited",
                         now=now)  # fmt: skip
    return fact


def _update_fields(
    agent: Agent,
    fact: Fact,
    *,
    key: str | None,
    category: str | None,
    importance: float | None,
    names: dict[str, Embedding],
    now: datetime,
) -> None:
    fields: list[str] = []
    if category is not None:
        fact.category = category_get_or_create(agent=agent, name=category, vectors=names)
        fields.append("category")
    if key is not None:
        fact.key = key
        fields.append("key")
    if key is not None or category is not None:
        clash = (
            Fact.objects.current()
            .filter(agent=agent, user=fact.user, category=fact.category, key=fact.key)
            .exclude(pk=fact.pk)
        )
        if clash.exists():
            raise Conflict(
                f"key '{fact.key}' already exists in category '{fact.category.name}'",
                loc=["body", "key"],
            )
    if importance is not None:
        fact.importance = importance
        fields.append("importance")
    if fields:
        fact.salience = fact_salience(fact, config=agent.config, now=now)
        fact.updated_at = now
        fact.save(update_fields=[*fields, "salience", "updated_at"])


def fact_supersede(
    *, agent: Agent, fact: Fact, value: str, changed_by: str, reason: str = ""
) -> Fact:
    """Close `fact` (valid_to = now) and start its successor with the same category and key."""
    value = clean_value(agent, value, loc=["body", "value"])
    emb = embed_text(value, corpus="facts")
    with transaction.atomic():
        fact = _locked(agent, fact)
        if fact.valid_to is not None:
            raise Conflict("the fact is already superseded", loc=["path", "fact_id"])
        now = timezone.now()
        Fact.objects.filter(pk=fact.pk).update(valid_to=now, updated_at=now)
        successor = fact_insert(
            agent=agent, category=fact.category, key=fact.key, value=value, source=fact.source,
            importance=fact.importance, emb=emb, session_id=fact.session_id, now=now,
            status=fact.status,  # a pending fact's successor waits for review too
            user=fact.user,
        )  # fmt: skip
        Fact.objects.filter(pk=fact.pk).update(superseded_by=successor)
        for row, why in (
            (fact, f"superseded by #{successor.pk}"),
            (successor, f"supersedes #{fact.pk}"),
        ):
            add_version(row, old=fact.value, new=value, by=changed_by, reason=reason or why, at=now)
    return successor


def fact_insert(
    *,
    agent: Agent,
    category: Category,
    key: str,
    value: str,
    source: str,
    importance: float,
    emb: Embedding,
    session_id: uuid.UUID | None,
    now: datetime,
    status: str = FactStatus.ACTIVE,
    user: str = AGENT,
) -> Fact:
    """Insert a current fact with its salience and precomputed embedding (caller holds the
    agent lock); a missing vector is left to the search pipeline."""
    fact = Fact(
        agent=agent,
        user=user,
        category=category,
        key=key,
        value=value,
        normalized=text.normalized_hash(value),
        source=source,
        status=status,
        importance=importance,
        **emb.columns(),
        session_id=session_id,
        valid_from=now,
        created_at=now,
        updated_at=now,
    )
    fact.salience = fact_salience(fact, config=agent.config, now=now)
    fact.save()
    states_replace(corpus="facts", pk=fact.pk, emb=emb)
    if emb.vector is None:
        schedule_embedding(corpus="facts", agent_id=fact.agent_id)
    return fact


def fact_delete(*, agent: Agent, fact: Fact) -> None:
    """Delete a fact and its versions; successors keep standing on their own."""
    with transaction.atomic():
        lock_agent(agent)
        lock_facts([fact.pk])
        Fact.objects.filter(pk=fact.pk, agent=agent).delete()
