"""A fact's salience (apps.facts.salience_score) from its row, cached on write, recall and decay.

Counters move with F() updates under the agent lock (apps.agents.locks), never by
read-modify-write; salience is then computed from the locked, current row.
"""

from collections.abc import Sequence
from datetime import datetime

from django.db import transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from apps.agents.config import AgentConfig
from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.facts.models import Fact
from apps.facts.salience_score import salience

_SCORED = ("id", "importance", "access_count", "last_accessed_at", "created_at", "salience")


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


def lock_facts(ids: Sequence[int]) -> None:
    """Row locks on these facts in ascending id order (after the agent lock, inside a
    transaction): the second half of the one lock order."""
    list(Fact.objects.select_for_update().filter(pk__in=ids).order_by("pk").values_list("pk"))


def fact_reinforce(
    *, fact: Fact, config: AgentConfig, importance: float | None, now: datetime
) -> Fact:
    """A save that found this fact again: access_count + 1, last access now, importance raised
    to `importance` if higher, salience recomputed. Caller holds the agent and fact locks."""
    changes = {"access_count": F("access_count") + 1, "last_accessed_at": now, "updated_at": now}
    if importance is not None:
        changes["importance"] = Greatest(F("importance"), importance)
    Fact.objects.filter(pk=fact.pk).update(**changes)
    fact.refresh_from_db(fields=["access_count", "last_accessed_at", "importance", "updated_at"])
    fact.salience = fact_salience(fact, config=config, now=now)
    Fact.objects.filter(pk=fact.pk).update(salience=fact.salience)
    return fact


def _rescore(agent: Agent, ids: Sequence[int], config: AgentConfig, now: datetime) -> int:
    """Recompute and store the salience of these facts (caller holds the locks)."""
    facts = list(Fact.objects.filter(agent=agent, pk__in=ids).only(*_SCORED).order_by("pk"))
    changed = []
    for fact in facts:
        value = fact_salience(fact, config=config, now=now)
        if abs(value - fact.salience) > 1e-9:
            fact.salience = value
            changed.append(fact)
    Fact.objects.bulk_update(changed, ["salience"])
    return len(changed)


def facts_refresh_salience(*, agent: Agent, batch_size: int = 1000) -> int:
    """Recompute the cached salience of every current fact of the agent (decay over time),
    a batch per short transaction so recalls and saves are not held up."""
    now = timezone.now()
    config = agent.config
    ids = list(
        Fact.objects.current().filter(agent=agent).order_by("pk").values_list("pk", flat=True)
    )
    changed = 0
    for start in range(0, len(ids), batch_size):
        batch = ids[start : start + batch_size]
        with transaction.atomic():
            lock_agent(agent)
            lock_facts(batch)
            changed += _rescore(agent, batch, config, now)
    return changed


def facts_touch(*, agent: Agent, fact_ids: Sequence[int]) -> None:
    """Recall reinforcement: access_count + 1, last_accessed_at = now, salience recomputed."""
    if not fact_ids:
        return
    now = timezone.now()
    with transaction.atomic():
        lock_agent(agent)
        lock_facts(fact_ids)
        Fact.objects.filter(agent=agent, pk__in=fact_ids).update(
            access_count=F("access_count") + 1, last_accessed_at=now
        )
        _rescore(agent, fact_ids, agent.config, now)
