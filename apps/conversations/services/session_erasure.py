"""Erasing one end user's sessions (issue 26) with everything they hold."""

from django.db import transaction

from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.conversations import working_memory
from apps.conversations.models import Session


@transaction.atomic
def sessions_erase_user(*, agent: Agent, user: str) -> dict[str, int]:
    """Delete every session of one end user of the agent with its messages (and their token
    states), summary, markers and meta; rows of other apps naming a session keep theirs
    without it. The rows deleted per model label. The caller holds the agent's lock."""
    if user == AGENT:
        raise ValueError("the agent's own sessions are not a user's")
    ids = list(Session.objects.filter(agent=agent, user=user).values_list("pk", flat=True))
    _, deleted = Session.objects.filter(pk__in=ids).delete()
    for session_id in ids:
        working_memory.forget(session_id)
    return deleted
