"""The per-agent write lock: the first lock every multi-row write of an agent's memory takes.

Lock order, everywhere: the agent row, then the rows being changed by ascending id. Writers
that follow it cannot deadlock with each other on PostgreSQL. On SQLite the IMMEDIATE
transaction already serialises writers and the row lock is a no-op.
"""

from django.db import transaction

from apps.agents.models import Agent


def lock_agent(agent: Agent | int) -> None:
    """Hold the agent row's lock until the surrounding transaction ends (must be inside one)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("lock_agent() must run inside transaction.atomic()")
    agent_id = agent if isinstance(agent, int) else agent.pk
    list(Agent.objects.select_for_update().filter(pk=agent_id).values_list("pk", flat=True))
