"""Which agents a person may see, and their role on an agent's team."""

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from apps.agents.models import Agent, MemberRole, Membership
from apps.core.errors import NotFound


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
