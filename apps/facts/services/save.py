"""fact_save: seed 001's memory_save (structured half) with dedup on write.

Two steps, so no provider runs inside a transaction: `fact_prepare` validates and embeds
(the value, and the names of categories it may create); `fact_write` locks the agent, then
re-checks dedup against the rows as they are now, and writes. `fact_save` is both.

A pending draft (the agent's `fact_review` is on and the fact was proposed by the lifecycle
or saved with `review: true`) never changes an approved fact: the same normalised text
anywhere in the agent's current facts is reinforced (nothing new to review); anything else,
even under an existing key or with the same meaning, becomes a new pending fact that an
editor approves, edits, rejects or merges.
"""

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Required, TypedDict, Unpack

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.agents.users import AGENT, Audience
from apps.core.errors import InvalidInput
from apps.facts import selectors, text
from apps.facts.models import Category, Fact, FactStatus, Source
from apps.facts.services.categories import (
    auto_category_name,
    category_get_or_create,
    category_vectors,
)
from apps.facts.services.fact_validation import (
    clean_category,
    clean_importance,
    clean_key,
    clean_value,
)
from apps.facts.services.salience_update import fact_reinforce, lock_facts
from apps.facts.services.versions import add_version, change_value, fact_insert
from apps.search.embedding import Embedding, embed_text


@dataclass(frozen=True)
class SaveResult:
    fact: Fact
    action: str  # created | updated | reinforced
    similarity: float | None  # cosine to the existing fact, for a semantic dedup

    @property
    def deduped(self) -> bool:
        return self.action != "created"


@dataclass(frozen=True)
class FactDraft:
    """A validated save, with every vector it needs computed (`fact_prepare`)."""

    agent: Agent
    value: str
    key: str | None
    category: str | None  # a clean name, or None: auto-categorise
    importance: float | None
    source: str
    session_id: uuid.UUID | None
    emb: Embedding
    user: str = AGENT  # who it belongs to; dedup looks at their facts alone
    category_embs: dict[str, Embedding] = field(default_factory=dict)
    pending: bool = False  # waits for review: see the module docstring for its dedup


class FactSaveArgs(TypedDict, total=False):
    """fact_prepare's arguments, for fact_save to pass on."""

    agent: Required[Agent]
    content: Required[str]
    category: str | None
    key: str | None
    importance: float | None
    source: str
    session_id: uuid.UUID | None
    pending: bool
    user: str


def fact_prepare(
    *,
    agent: Agent,
    content: str,
    category: str | None = None,
    key: str | None = None,
    importance: float | None = None,
    source: str = Source.AGENT,
    session_id: uuid.UUID | None = None,
    pending: bool = False,
    user: str = AGENT,
) -> FactDraft:
    """Validate a save and embed what it needs, outside any transaction; InvalidInput,
    PayloadTooLarge on bad input. An embedder failure is kept in the draft, not raised.
    `pending`: the fact waits for review (callers decide it from the agent's fact_review)."""
    value = clean_value(agent, content, loc=["body", "content"])
    key = clean_key(key, loc=["body", "key"]) if key is not None else None
    if category is not None:
        category = clean_category(category, loc=["body", "category"])
    if importance is not None:
        importance = clean_importance(importance, 0.0, loc=["body", "importance"])
    if source not in Source.values:
        raise InvalidInput(f"unknown source '{source}'", loc=["body", "source"])
    emb = embed_text(value, corpus="facts")
    # The category this save would land in today; fact_write decides again under the lock.
    landing = category or auto_category_name(agent, emb.vector)
    return FactDraft(
        agent=agent,
        value=value,
        key=key,
        category=category,
        importance=importance,
        source=source,
        session_id=session_id,
        emb=emb,
        category_embs=category_vectors(agent=agent, names=[landing]),
        pending=pending,
        user=user,
    )


def fact_save(**kwargs: Unpack[FactSaveArgs]) -> SaveResult:
    """Save a fact with dedup on write (seed 001's memory_save, structured half).

    Same key in the category: the value is updated (a new version). Same normalised value,
    or cosine >= fact_dedup_threshold within the category: the existing fact is reinforced
    (same value) or updated to the new wording (paraphrase). Otherwise a new fact.
    Takes `fact_prepare`'s arguments.
    """
    return fact_write(draft=fact_prepare(**kwargs))


def fact_write(*, draft: FactDraft) -> SaveResult:
    """Write a prepared save: agent lock, dedup re-checked against current rows, no provider
    call. Atomic; joins the caller's transaction when there is one."""
    agent = draft.agent
    with transaction.atomic():
        lock_agent(agent)
        now = timezone.now()
        name = draft.category or auto_category_name(agent, draft.emb.vector)
        cat = category_get_or_create(agent=agent, name=name, vectors=draft.category_embs)
        checks = (_same_text_anywhere,) if draft.pending else (_same_key, _same_text, _same_meaning)
        for dedup in checks:
            result = dedup(draft, cat, now)
            if result is not None:
                return result
        return SaveResult(_create(draft, cat, now), "created", None)


def _current(draft: FactDraft, cat: Category) -> QuerySet[Fact]:
    return selectors.facts_owned(agent=draft.agent, user=draft.user).filter(category=cat)


def _same_key(draft: FactDraft, cat: Category, now: datetime) -> SaveResult | None:
    existing = _current(draft, cat).filter(key=draft.key).first() if draft.key else None
    if existing is None:
        return None
    lock_facts([existing.pk])
    if existing.normalized == text.normalized_hash(draft.value):
        return SaveResult(_reinforce(existing, draft, now), "reinforced", None)
    change_value(
        existing,
        value=draft.value,
        emb=draft.emb,
        by=draft.source,
        reason="saved again under the same key",
        now=now,
    )
    return SaveResult(_reinforce(existing, draft, now), "updated", None)


def _first_same_text(facts: QuerySet[Fact], draft: FactDraft) -> Fact | None:
    """The oldest of `facts` with the draft's normalised text, row-locked; None if none."""
    same = facts.filter(normalized=text.normalized_hash(draft.value)).order_by("id").first()
    if same is not None:
        lock_facts([same.pk])
    return same


def _same_text(draft: FactDraft, cat: Category, now: datetime) -> SaveResult | None:
    same = _first_same_text(_current(draft, cat), draft)
    if same is None:
        return None
    return SaveResult(_reinforce(same, draft, now), "reinforced", 1.0)


def _same_text_anywhere(draft: FactDraft, cat: Category, now: datetime) -> SaveResult | None:
    """A pending draft's only dedup: the same text in any category is reinforced (access
    count and recency; its importance is an editor's to raise), never rewritten."""
    same = _first_same_text(selectors.facts_owned(agent=draft.agent, user=draft.user), draft)
    if same is None:
        return None
    fact = fact_reinforce(fact=same, config=draft.agent.config, importance=None, now=now)
    return SaveResult(fact, "reinforced", 1.0)


def _same_meaning(draft: FactDraft, cat: Category, now: datetime) -> SaveResult | None:
    if draft.emb.vector is None:
        return None
    near = selectors.facts_found(
        agent=draft.agent,
        vector=draft.emb.vector,
        category_ids=[cat.pk],
        k=1,
        audience=Audience(draft.user),
        owner=draft.user,
    )
    if not near or near[0][1] < draft.agent.config.fact_dedup_threshold:
        return None
    fact, similarity = near[0]
    lock_facts([fact.pk])
    reason = f"paraphrase saved (cosine {similarity:.3f})"
    change_value(fact, value=draft.value, emb=draft.emb, by=draft.source, reason=reason, now=now)
    return SaveResult(_reinforce(fact, draft, now), "updated", similarity)


def _reinforce(fact: Fact, draft: FactDraft, now: datetime) -> Fact:
    return fact_reinforce(
        fact=fact, config=draft.agent.config, importance=draft.importance, now=now
    )


def _unique_key(agent: Agent, user: str, category: Category, key: str) -> str:
    taken = set(
        selectors.facts_owned(agent=agent, user=user)
        .filter(category=category, key__startswith=key)
        .values_list("key", flat=True)
    )
    if key not in taken:
        return key
    n = 2
    while f"{key}-{n}" in taken:
        n += 1
    return f"{key}-{n}"


def _create(draft: FactDraft, cat: Category, now: datetime) -> Fact:
    agent = draft.agent
    importance = draft.importance
    fact = fact_insert(
        agent=agent,
        category=cat,
        key=_unique_key(agent, draft.user, cat, draft.key or text.derive_key(draft.value)),
        user=draft.user,
        value=draft.value,
        source=draft.source,
        importance=importance if importance is not None else agent.config.fact_default_importance,
        emb=draft.emb,
        session_id=draft.session_id,
        now=now,
        status=FactStatus.PENDING if draft.pending else FactStatus.ACTIVE,
    )
    reason = "proposed for review" if draft.pending else "created"
    add_version(fact, old="", new=draft.value, by=draft.source, reason=reason, at=now)
    return fact
