"""Curating facts: approve what waits for review, merge two duplicates into one.

Both keep history: an approval is a version of its own, and a merge copies every version of
the merged fact into the one kept (then closes the merged fact, superseded by it, with its
own versions intact).
"""

from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.core.errors import Conflict, InvalidInput
from apps.facts.models import Fact, FactStatus, FactVersion
from apps.facts.services.salience import fact_salience, lock_facts
from apps.facts.services.versions import add_version


def facts_approve(*, agent: Agent, facts: Sequence[Fact], changed_by: str) -> int:
    """Pending facts become active (recalled, in get_context); returns how many changed."""
    ids = sorted(f.pk for f in facts)
    with transaction.atomic():
        lock_agent(agent)
        lock_facts(ids)
        pending = list(Fact.objects.filter(agent=agent, pk__in=ids, status=FactStatus.PENDING))
        now = timezone.now()
        for fact in pending:
            fact.status, fact.updated_at = FactStatus.ACTIVE, now
            fact.save(update_fields=["status", "updated_at"])
            add_version(
                fact, old=fact.value, new=fact.value, by=changed_by, reason="approved", at=now
            )
    return len(pending)


def fact_merge(*, agent: Agent, keep: Fact, other: Fact, changed_by: str) -> Fact:
    """Merge `other` into `keep`: keep gains other's versions (renumbered after its own),
    its access count and the higher importance; other is closed, superseded by keep."""
    if keep.pk == other.pk:
        raise InvalidInput("a fact cannot be merged into itself", loc=["facts"])
    with transaction.atomic():
        lock_agent(agent)
        lock_facts(sorted([keep.pk, other.pk]))
        rows = Fact.objects.filter(agent=agent, pk__in=[keep.pk, other.pk]).in_bulk()
        if len(rows) != 2 or any(f.valid_to is not None for f in rows.values()):
            raise Conflict("both facts must be this agent's and current")
        keep, other = rows[keep.pk], rows[other.pk]
        now = timezone.now()
        versions = FactVersion.objects.filter(fact=other).order_by("number")
        for version in versions:
            add_version(
                keep,
                old=version.old_value,
                new=version.new_value,
                by=version.changed_by,
                reason=f"merged from #{other.pk}: {version.reason}"[:500],
                at=version.changed_at,
            )
        add_version(
            keep,
            old=other.value,
            new=keep.value,
            by=changed_by,
            reason=f"merged #{other.pk} into this fact",
            at=now,
        )
        keep.access_count += other.access_count
        keep.importance = max(keep.importance, other.importance)
        keep.salience = fact_salience(keep, config=agent.config, now=now)
        keep.updated_at = now
        keep.save(update_fields=["access_count", "importance", "salience", "updated_at"])
        Fact.objects.filter(pk=other.pk).update(valid_to=now, superseded_by=keep, updated_at=now)
        add_version(
            other,
            old=other.value,
            new=keep.value,
            by=changed_by,
            reason=f"merged into #{keep.pk}",
            at=now,
        )
    return keep
