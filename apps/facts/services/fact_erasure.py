"""Erasing one end user's facts (issue 26): every version of every fact, gone for good; and
the agent's facts written in their sessions keep no link to them (issue 39)."""

from collections.abc import Sequence
from uuid import UUID

from django.db import transaction

from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.facts.models import Fact


@transaction.atomic
def facts_erase_user(*, agent: Agent, user: str) -> dict[str, int]:
    """Delete every fact of one end user of the agent, current or superseded, with its
    versions and token states; unlike fact_delete nothing of it is kept. The rows deleted
    per model label. The caller holds the agent's lock."""
    if user == AGENT:
        raise ValueError("the agent's own facts are not a user's")
    _, deleted = Fact.objects.filter(agent=agent, user=user).delete()
    return deleted


def facts_unlink_sessions(*, agent: Agent, sessions: Sequence[UUID]) -> int:
    """Forget which of these sessions the agent's remaining facts were written in (an erased
    user's: the fact stays, its provenance goes); the facts unlinked."""
    return Fact.objects.filter(agent=agent, session__in=list(sessions)).update(session=None)
