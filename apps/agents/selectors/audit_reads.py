"""Reads of the audit log."""

from apps.agents.models import Agent, AuditEvent


def audit_events(*, agent: Agent, limit: int = 50) -> list[AuditEvent]:
    """The agent's newest audit events first."""
    return list(AuditEvent.objects.filter(agent=agent)[:limit])
