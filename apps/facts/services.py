"""The one write path for facts and categories: save with dedup, update, supersede, recall.

Embeddings are computed synchronously here, because dedup and auto-categorisation need them
at write time. When the embedder fails the fact is still stored (exact-match dedup only),
its error is kept and `facts.embed_fact` embeds it later: nothing saved is lost.
"""

import logging
import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.agents.models import Agent
from apps.conversations.models import Session
from apps.core.errors import Conflict, InvalidInput, NotFound, PayloadTooLarge
from apps.entries.services import lock_agent
from apps.facts import selectors, text
from apps.facts.models import GENERAL, Category, Fact, FactVersion, Source
from apps.facts.salience import salience
from apps.providers.embeddings import EmbeddingError, get_embedder
from apps.search.corpora import vector_label

logger = logging.getLogger(__name__)

MAX_KEY_CHARS = 200
MAX_CATEGORY_CHARS = 100
_CATEGORY = re.compile(r"^[a-z0-9][a-z0-9 _.\-/]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Embedding:
    vector: np.ndarray | None
    model: str
    error: str


@dataclass(frozen=True)
class SaveResult:
    fact: Fact
    action: str  # created | updated | reinforced
    similarity: float | None  # cosine to the existing fact, for a semantic dedup

    @property
    def deduped(self) -> bool:
        return self.action != "created"


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


def embed(value: str) -> Embedding:
    """One embedding, or the error that stopped it."""
    try:
        embedder = get_embedder()
        vector = np.asarray(embedder.embed([value])[0], dtype=np.float32)
    except EmbeddingError as exc:
        logger.warning("fact embedding failed: %s", exc)
        return Embedding(vector=None, model="", error=str(exc)[:1000] or "embedding failed")
    return Embedding(vector=vector, model=vector_label(embedder), error="")


# --- validation ---------------------------------------------------------------------------


def clean_value(agent: Agent, value: object, *, loc: list[str | int]) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("content must not be empty", loc=loc)
    if "\x00" in value:
        raise InvalidInput("content must not contain NUL characters", loc=loc)
    size = len(value.encode("utf-8"))
    if size > agent.config.max_content_bytes:
        raise PayloadTooLarge(
            f"content is {size} bytes; the limit is {agent.config.max_content_bytes}", loc=loc
        )
    return value.strip()


def clean_category(name: object, *, loc: list[str | int]) -> str:
    """Categories are lower-cased; letters, digits, space, '_', '.', '-', '/'."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("category must not be empty", loc=loc)
    name = " ".join(name.strip().lower().split())
    if len(name) > MAX_CATEGORY_CHARS or not _CATEGORY.match(name):
        raise InvalidInput(
            f"category must be at most {MAX_CATEGORY_CHARS} of a-z 0-9 space _ . - /", loc=loc
        )
    return name


def clean_key(key: object, *, loc: list[str | int]) -> str:
    if not isinstance(key, str) or not key.strip():
        raise InvalidInput("key must not be empty", loc=loc)
    key = key.strip()
    if len(key) > MAX_KEY_CHARS or _CONTROL.search(key):
        raise InvalidInput(
            f"key must be at most {MAX_KEY_CHARS} characters, no control characters", loc=loc
        )
    return key


def _clean_importance(value: float | None, default: float, *, loc: list[str | int]) -> float:
    if value is None:
        return default
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInput("importance must be between 0 and 1", loc=loc)
    return float(value)


# --- salience ----------------------------------------------------------------------------


def fact_salience(fact: Fact, *, agent: Agent, now: datetime | None = None) -> float:
    config = agent.config
    return salience(
        importance=fact.importance,
        access_count=fact.access_count,
        last_used_at=fact.last_accessed_at or fact.created_at,
        now=now or timezone.now(),
        decay_per_day=config.salience_decay_per_day,
        access_boost=config.salience_access_boost,
    )


def facts_refresh_salience(*, agent: Agent, batch_size: int = 1000) -> int:
    """Recompute the cached salience of every current fact of the agent (decay over time)."""
    now = timezone.now()
    changed = []
    qs = (
        Fact.objects.current()
        .filter(agent=agent)
        .only("id", "importance", "access_count", "last_accessed_at", "created_at", "salience")
    )
    for fact in qs.iterator(chunk_size=batch_size):
        value = fact_salience(fact, agent=agent, now=now)
        if abs(value - fact.salience) > 1e-9:
            fact.salience = value
            changed.append(fact)
    Fact.objects.bulk_update(changed, ["salience"], batch_size=batch_size)
    return len(changed)


# --- categories --------------------------------------------------------------------------


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


def _auto_category(agent: Agent, vector: np.ndarray | None) -> Category:
    """Seed 001's auto-categorisation: the nearest existing category by embedding, or general."""
    if vector is not None:
        nearest = selectors.categories_nearest(
            agent=agent, vector=vector, threshold=agent.config.category_match_threshold, limit=1
        )
        if nearest:
            return nearest[0][0]
    return category_get_or_create(agent=agent, name=GENERAL)


# --- writes ------------------------------------------------------------------------------


def _add_version(fact: Fact, *, old: str, new: str, by: str, reason: str, at: datetime) -> None:
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


def _reinforce(fact: Fact, *, agent: Agent, importance: float | None, now: datetime) -> Fact:
    fact.access_count += 1
    fact.last_accessed_at = now
    if importance is not None:
        fact.importance = max(fact.importance, importance)
    fact.updated_at = now
    fact.salience = fact_salience(fact, agent=agent, now=now)
    fact.save(
        update_fields=["access_count", "last_accessed_at", "importance", "updated_at", "salience"]
    )
    return fact


def _change_value(
    fact: Fact, *, agent: Agent, value: str, emb: Embedding, by: str, reason: str, now: datetime
) -> Fact:
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
    _add_version(fact, old=old, new=value, by=by, reason=reason, at=now)
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
        importance = _clean_importance(importance, 0.0, loc=["body", "importance"])
    if source not in Source.values:
        raise InvalidInput(f"unknown source '{source}'", loc=["body", "source"])
    emb = embed(value)
    with transaction.atomic():
        lock_agent(agent)
        cat = (
            category_get_or_create(agent=agent, name=category)
            if category is not None
            else _auto_category(agent, emb.vector)
        )
        now = timezone.now()
        current = Fact.objects.current().filter(agent=agent, category=cat)
        norm = text.normalized_hash(value)
        existing = current.filter(key=key).first() if key else None
        if existing is not None:
            if existing.normalized == norm:
                return SaveResult(
                    _reinforce(existing, agent=agent, importance=importance, now=now),
                    "reinforced",
                    None,
                )
            _change_value(
                existing,
                agent=agent,
                value=value,
                emb=emb,
                by=source,
                reason="saved again under the same key",
                now=now,
            )
            return SaveResult(
                _reinforce(existing, agent=agent, importance=importance, now=now), "updated", None
            )
        same = current.filter(normalized=norm).order_by("id").first()
        if same is not None:
            return SaveResult(
                _reinforce(same, agent=agent, importance=importance, now=now), "reinforced", 1.0
            )
        if emb.vector is not None:
            near = selectors.facts_nearest(
                agent=agent, vector=emb.vector, category_ids=[cat.pk], k=1
            )
            if near and near[0][1] >= config.fact_dedup_threshold:
                fact, similarity = near[0]
                reason = f"paraphrase saved (cosine {similarity:.3f})"
                _change_value(
                    fact, agent=agent, value=value, emb=emb, by=source, reason=reason, now=now
                )
                return SaveResult(
                    _reinforce(fact, agent=agent, importance=importance, now=now),
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
        fact.salience = fact_salience(fact, agent=agent, now=now)
        fact.save()
        _add_version(fact, old="", new=value, by=source, reason="created", at=now)
        if emb.vector is None:
            _schedule_embedding(fact.pk)
    return SaveResult(fact, "created", None)


def _schedule_embedding(fact_id: int) -> None:
    from apps.facts.tasks import embed_fact_task

    transaction.on_commit(lambda: embed_fact_task.delay(fact_id))


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
        fact.importance = _clean_importance(importance, fact.importance, loc=["body", "importance"])
        fields.append("importance")
    if fields:
        fact.salience = fact_salience(fact, agent=agent, now=now)
        fact.updated_at = now
        fact.save(update_fields=[*fields, "salience", "updated_at"])
    if value is not None:
        value = clean_value(agent, value, loc=["body", "value"])
        if value != fact.value:
            _change_value(
                fact,
                agent=agent,
                value=value,
                emb=embed(value),
                by=changed_by,
                reason=reason or "edited",
                now=now,
            )
            if fact.embedding is None:
                _schedule_embedding(fact.pk)
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
    successor.salience = fact_salience(successor, agent=agent, now=now)
    successor.save(update_fields=["salience"])
    Fact.objects.filter(pk=fact.pk).update(superseded_by=successor)
    _add_version(
        fact,
        old=fact.value,
        new=value,
        by=changed_by,
        reason=reason or f"superseded by #{successor.pk}",
        at=now,
    )
    _add_version(
        successor,
        old=fact.value,
        new=value,
        by=changed_by,
        reason=reason or f"supersedes #{fact.pk}",
        at=now,
    )
    if emb.vector is None:
        _schedule_embedding(successor.pk)
    fact.refresh_from_db()
    return successor


@transaction.atomic
def fact_delete(*, agent: Agent, fact: Fact) -> None:
    """Delete a fact and its versions; successors keep standing on their own."""
    lock_agent(agent)
    Fact.objects.filter(pk=fact.pk, agent=agent).delete()


def facts_touch(*, agent: Agent, fact_ids: list[int]) -> None:
    """Recall reinforcement: access_count + 1, last_accessed_at = now, salience recomputed."""
    if not fact_ids:
        return
    now = timezone.now()
    with transaction.atomic():
        Fact.objects.filter(agent=agent, pk__in=fact_ids).update(
            access_count=F("access_count") + 1, last_accessed_at=now
        )
        facts = list(
            Fact.objects.filter(agent=agent, pk__in=fact_ids).only(
                "id", "importance", "access_count", "last_accessed_at", "created_at"
            )
        )
        for fact in facts:
            fact.salience = fact_salience(fact, agent=agent, now=now)
        Fact.objects.bulk_update(facts, ["salience"])


def fact_embed(*, fact_id: int) -> bool:
    """Embed a fact that has no vector yet; True when it has one afterwards. Idempotent."""
    fact = Fact.objects.filter(pk=fact_id).only("id", "value", "embedding").first()
    if fact is None:
        return False
    if fact.embedding is not None:
        return True
    emb = embed(fact.value)
    Fact.objects.filter(pk=fact_id, embedding__isnull=True, value=fact.value).update(
        embedding=emb.vector, embedding_model=emb.model, embedding_error=emb.error
    )
    return emb.vector is not None


def facts_recall(
    *, agent: Agent, query: str, category: str | None = None, k: int | None = None
) -> RecallResult:
    """Seed 001's memory_recall: categories -> scoped facts -> flat fallback, reinforced."""
    config = agent.config
    k = k or config.recall_k
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must not be empty", loc=["body", "query"])
    emb = embed(query)
    w = config.recall_salience_weight
    now = timezone.now()

    def score(fact: Fact, similarity: float) -> float:
        return (1 - w) * similarity + w * fact_salience(fact, agent=agent, now=now)

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
            selectors.facts_nearest(agent=agent, vector=emb.vector, category_ids=[cat.pk], k=k)
            if emb.vector is not None
            else selectors.facts_keyword(agent=agent, query=query, category_ids=[cat.pk], k=k)
        )
        for fact, sim in found:
            hits[fact.pk] = RecallHit(fact, sim, score(fact, sim), "category")
    elif emb.vector is None:
        # No embedder: keyword match keeps recall working on what was saved.
        for fact, sim in selectors.facts_keyword(agent=agent, query=query, category_ids=None, k=k):
            hits[fact.pk] = RecallHit(fact, sim, score(fact, sim), "flat")
        fell_back = True
    else:
        matched = selectors.categories_nearest(
            agent=agent,
            vector=emb.vector,
            threshold=config.category_match_threshold,
            limit=config.recall_max_categories,
        )
        categories = [c.name for c, _ in matched]
        if matched:
            scoped = selectors.facts_nearest(
                agent=agent, vector=emb.vector, category_ids=[c.pk for c, _ in matched], k=k
            )
            for fact, sim in scoped:
                hits[fact.pk] = RecallHit(fact, sim, score(fact, sim), "scoped")
        good = sum(1 for h in hits.values() if h.similarity >= config.recall_min_similarity)
        if good < min(k, config.recall_scoped_min):
            fell_back = True
            for fact, sim in selectors.facts_nearest(
                agent=agent, vector=emb.vector, category_ids=None, k=k
            ):
                hits.setdefault(fact.pk, RecallHit(fact, sim, score(fact, sim), "flat"))
    ranked = sorted(hits.values(), key=lambda h: (-h.score, h.fact.pk))[:k]
    ids = [h.fact.pk for h in ranked]
    facts_touch(agent=agent, fact_ids=ids)
    fresh = Fact.objects.select_related("category").in_bulk(ids)
    ranked = [RecallHit(fresh[h.fact.pk], h.similarity, h.score, h.tier) for h in ranked]
    return RecallResult(hits=ranked, categories=categories, fell_back=fell_back)
