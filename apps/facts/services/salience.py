"""A fact's salience (apps.facts.salience) from its row, cached on write, recall and decay."""

from datetime import datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.agents.config import AgentConfig
from apps.agents.models import Agent
from apps.facts.models import Fact
from apps.facts.salience import salience


def fact_salience(fact: Fact, *, config: AgentConfig, now: datetime) -> float:
    """The fact's salience at `now` under the agent's decay and boost settings.

    Takes the config, not the agent: building it validates the stored overrides, so callers
    scoring many facts build it once.
    """
    return salience(
        importance=fact.importance,
        access_count=fact.access_count,
        last_used_at=fact.last_accessed_at or fact.created_at,
        now=now,
        decay_per_day=config.salience_decay_per_day,
        access_boost=config.salience_access_boost,
    )


def facts_refresh_salience(*, agent: Agent, batch_size: int = 1000) -> int:
    """Recompute the cached salience of every current fact of the agent (decay over time)."""
    now = timezone.now()
    config = agent.config
    changed = []
    qs = (
        Fact.objects.current()
        .filter(agent=agent)
        .only("id", "importance", "access_count", "last_accessed_at", "created_at", "salience")
    )
    for fact in qs.iterator(chunk_size=batch_size):
        value = fact_salience(fact, config=config, now=now)
        if abs(value - fact.salience) > 1e-9:
            fact.salience = value
            changed.append(fact)
    Fact.objects.bulk_update(changed, ["salience"], batch_size=batch_size)
    return len(changed)


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
        config = agent.config
        for fact in facts:
            fact.salience = fact_salience(fact, config=config, now=now)
        Fact.objects.bulk_update(facts, ["salience"])
