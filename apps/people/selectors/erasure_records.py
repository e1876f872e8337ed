"""What an erasure of a user would delete, and the erasures of a user the audit log records."""

from django.db.models import Q

from apps.agents.models import Agent, AuditEvent
from apps.conversations.models import Message, Session, Summary
from apps.entries.models import Entry, EntryAlias, EntryChange
from apps.facts.models import Fact, FactVersion
from apps.learnings.models import ErrorDetail, Learning
from apps.lifecycle.models import HistoryEntry, Run
from apps.people.services.erasure_audit import ACTION, user_hmacs
from apps.people.services.user_erasure import UserErased, erased_user, from_session, user_archives


def user_erasure_counts(*, agent: Agent, user: str) -> UserErased:
    """What user_erase would delete now, counted without deleting anything (the review
    page's confirmation); a 422, as user_erase's, for the agent or a user that is not one."""
    user = erased_user(user)
    sessions = list(Session.objects.filter(agent=agent, user=user).order_by("pk"))
    entries = Entry.objects.filter(agent=agent).filter(
        Q(user=user) | Q(pk__in=user_archives(sessions))
    )
    of_entries = Q(agent=agent) & (Q(user=user) | Q(entry__in=entries))
    facts = Fact.objects.filter(agent=agent, user=user)
    mine = from_session(agent, user, sessions)
    return UserErased(
        sessions=len(sessions),
        messages=Message.objects.filter(session__in=sessions).count(),
        summaries=Summary.objects.filter(session__in=sessions).count(),
        facts=facts.count(),
        fact_versions=FactVersion.objects.filter(fact__in=facts).count(),
        entries=entries.count(),
        entry_aliases=EntryAlias.objects.filter(of_entries).count(),
        entry_changes=EntryChange.objects.filter(of_entries).count(),
        learnings=Learning.objects.filter(agent=agent, user=user).count(),
        history=HistoryEntry.objects.filter(mine).count(),
        runs=Run.objects.filter(mine).count(),
        error_details=ErrorDetail.objects.filter(agent=agent, user=user).count(),
    )


def user_erasures(*, agent: Agent, user: str) -> list[AuditEvent]:
    """The erasures of `user` the agent's audit log records, newest first: their events hold
    the user's HMAC (under SECRET_KEY or a fallback key), never the name, so only whoever
    knows the name can ask. [] when the user was never erased."""
    user = erased_user(user)
    hashes = user_hmacs(agent_id=agent.pk, user=user)
    events = AuditEvent.objects.filter(agent=agent, action=ACTION, before__user_hmac__in=hashes)
    return list(events.order_by("-created_at", "-id"))
