"""Reads for agents and keys."""

import hmac

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from apps.agents.models import Agent, ApiKey, AuditEvent, MemberRole, Membership
from apps.agents.services import KEY_PREFIX, hash_key
from apps.core.errors import NotFound


def api_key_lookup(*, raw: str) -> ApiKey | None:
    """The active key matching `raw`, with its agent, or None (malformed, unknown, revoked)."""
    if not raw.startswith(KEY_PREFIX):
        return None
    prefix, sep, secret = raw[len(KEY_PREFIX) :].partition("_")
    if not sep or not prefix or not secret or len(raw) > 200:
        return None
    api_key = ApiKey.objects.active().select_related("agent__team").filter(prefix=prefix).first()
    if api_key is None or not hmac.compare_digest(api_key.hashed_key, hash_key(raw)):
        return None
    return api_key


def agents_for_user(*, user: User | AnonymousUser) -> QuerySet[Agent]:
    """Agents whose team the user belongs to; superusers see every team's."""
    qs = Agent.objects.select_related("team")
    if not user.is_authenticated:
        return qs.none()
    if user.is_superuser:
        return qs
    return qs.filter(team__memberships__user=user)


def agent_for_user(*, user: User | AnonymousUser, slug: str) -> Agent:
    """The agent `slug` if the user may see it; NotFound otherwise (another team's agent
    looks exactly like a missing one)."""
    agent = agents_for_user(user=user).filter(slug=slug).first()
    if agent is None:
        raise NotFound(f"no agent '{slug}'")
    return agent


def user_role(*, user: User | AnonymousUser, agent: Agent) -> str | None:
    """The user's role on the agent's team: editor, viewer, or None. Superusers edit."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return MemberRole.EDITOR
    return (
        Membership.objects.filter(team_id=agent.team_id, user=user)
        .values_list("role", flat=True)
        .first()
    )


def audit_events(*, agent: Agent, limit: int = 50) -> list[AuditEvent]:
    """The agent's newest audit events first."""
    return list(AuditEvent.objects.filter(agent=agent)[:limit])


def api_keys(*, agent: Agent) -> list[ApiKey]:
    """The agent's keys, revoked ones too, newest first."""
    return list(ApiKey.objects.filter(agent=agent).order_by("-created_at", "-id"))


def api_key_get(*, agent: Agent, key_id: int) -> ApiKey:
    """The agent's key `key_id`; NotFound for another agent's or none."""
    api_key = ApiKey.objects.filter(agent=agent, pk=key_id).first()
    if api_key is None:
        raise NotFound("no such API key", loc=["path", "key_id"])
    return api_key
