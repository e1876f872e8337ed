"""Erasing one end user's learnings (issue 26): their corrections. Error memory and error
learnings belong to the agent (tools fail for everyone) and stay."""

from django.db import transaction

from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.learnings.models import Learning


@transaction.atomic
def learnings_erase_user(*, agent: Agent, user: str) -> dict[str, int]:
    """Delete every learning of one end user of the agent. The rows deleted per model
    label. The caller holds the agent's lock."""
    if user == AGENT:
        raise ValueError("the agent's own learnings are not a user's")
    _, deleted = Learning.objects.filter(agent=agent, user=user).delete()
    return deleted
