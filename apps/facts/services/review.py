"""Curating facts: approve what waits for review, merge two duplicates into one.

Both keep history: an approval is a version of its own, and a merge copies every version of
the merged fact into the one kept (then closes the merged fact, superseded by it, with its
own versions intact).

The review queue (issue 11) adds: edit then approve, reject (a pending fact is deleted with
its versions: it never was part of the agent's memory; the review page's audit event keeps
its before-state), and merge a pending fact into an approved one.
"""

from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.agents.users import EVERYONE
from apps.core.errors import Conflict, InvalidInput
from apps.facts.models import Fact, FactStatus, FactVersion
from apps.facts.selectors import fact_get
from apps.facts.services.salience_update import fact_salience, lock_facts
from apps.facts.services.versions import add_version, fact_update


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
        keep, other = _lock_pair(agent, keep, other)
        return _merge(agent, keep, other, changed_by)


def _lock_pair(agent: Agent, keep: Fact, other: Fact) -> tuple[Fact, Fact]:
    """Both facts as they are now, locked in the one lock order; Conflict unless both are
    this agent's and current."""
    lock_agent(agent)
    lock_facts(sorted([keep.pk, other.pk]))
    rows = Fact.objects.filter(agent=agent, pk__in=[keep.pk, other.pk]).in_bulk()
    if len(rows) != 2 or any(f.valid_to is not None for f in rows.values()):
        raise Conflict("both facts must be this agent's and current")
    if rows[keep.pk].user != rows[other.pk].user:
        # A merge moves one fact's versions onto the other: never across users (issue 26).
        raise Conflict("both facts must belong to the same user (or both to the agent)")
    return rows[keep.pk], rows[other.pk]


def _merge(agent: Agent, keep: Fact, other: Fact, changed_by: str) -> Fact:
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
    keep.access_count += other.access_count
    keep.importance = max(keep.importance, other.importance)
    keep.salience = fact_salience(keep, config=agent.config, now=now)
    keep.updated_at = now
    keep.save(update_fields=["access_count", "importance", "salience", "updated_at"])
    Fact.objects.filter(pk=other.pk).update(valid_to=now, superseded_by=keep, updated_at=now)
    # Both facts record the merge: `other`'s value gave way to `keep`'s.
    for fact, reason in (
        (keep, f"merged #{other.pk} into this fact"),
        (other, f"merged into #{keep.pk}"),
    ):
        add_version(fact, old=other.value, new=keep.value, by=changed_by, reason=reason, at=now)
    return keep


def _pending_now(agent: Agent, fact: Fact) -> Fact:
    """The fact as it is now (caller holds the locks); Conflict unless current and pending."""
    found = fact_get(agent=agent, fact_id=fact.pk, audience=EVERYONE)  # the caller found it
    if found.valid_to is not None or found.status != FactStatus.PENDING:
        raise Conflict("the fact is not waiting for review", loc=["path", "fact_id"])
    return found


def fact_review_approve(
    *,
    agent: Agent,
    fact: Fact,
    changed_by: str,
    value: str | None = None,
    key: str | None = None,
    category: str | None = None,
    importance: float | None = None,
) -> Fact:
    """Approve a pending fact, after applying an editor's changes (fact_update: versions
    kept). Conflict when it is not pending; the changes then are not applied."""
    _pending_now(agent, fact)  # checked again under the locks below
    if any(v is not None for v in (value, key, category, importance)):
        # fact_update embeds a new value before its own transaction: it cannot join ours.
        fact_update(agent=agent, fact=fact, changed_by=changed_by, reason="edited in review",
                    value=value, key=key, category=category, importance=importance)  # fmt: skip
    with transaction.atomic():
        lock_agent(agent)
        lock_facts([fact.pk])
        fact = _pending_now(agent, fact)
        now = timezone.now()
        fact.status, fact.updated_at = FactStatus.ACTIVE, now
        fact.save(update_fields=["status", "updated_at"])
        add_version(fact, old=fact.value, new=fact.value, by=changed_by, reason="approved", at=now)
    return fact


def fact_reject(*, agent: Agent, fact: Fact) -> Fact:
    """Delete a pending fact with its versions (it never was part of the agent's memory);
    returns it as it was. Conflict when it is not pending."""
    with transaction.atomic():
        lock_agent(agent)
        lock_facts([fact.pk])
        found = _pending_now(agent, fact)
        Fact.objects.filter(pk=found.pk).delete()
    return found


def fact_review_merge(*, agent: Agent, fact: Fact, into: Fact, changed_by: str) -> Fact:
    """Merge a pending fact into an approved current one (fact_merge: the pending fact's
    versions are copied onto `into`, which is returned). InvalidInput for itself; Conflict
    unless `fact` is pending and `into` active, both current and this agent's."""
    if fact.pk == into.pk:
        raise InvalidInput("a fact cannot be merged into itself", loc=["into"])
    with transaction.atomic():
        into, fact = _lock_pair(agent, into, fact)
        if fact.status != FactStatus.PENDING:
            raise Conflict("the fact is not waiting for review", loc=["path", "fact_id"])
        if into.status != FactStatus.ACTIVE:
            raise Conflict("merge into an approved fact", loc=["into"])
        return _merge(agent, into, fact, changed_by)
