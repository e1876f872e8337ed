"""The per-agent write lock: the first lock every multi-row write of an agent's memory takes.

Lock order, everywhere: the agent row, then the rows being changed by ascending id. Writers
that follow it cannot deadlock with each other on PostgreSQL. On SQLite the IMMEDIATE
transaction already serialises writers and the row lock is a no-op.

The lock is FOR NO KEY UPDATE, not FOR UPDATE: it excludes the other writers holding it,
but not the KEY SHARE locks PostgreSQL takes at commit to check a new row's foreign key to
the agent. An append (which holds its session's meta row, then checks its messages' key to
the agent) therefore never waits for an agent's writer, and that writer may wait for the
meta row without a deadlock.
"""

from django.db import transaction

from apps.agents.models import Agent


def lock_agent(agent: Agent | int) -> None:
    """Hold the agent row's lock until the surrounding transaction ends (must be inside one)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("lock_agent() must run inside transaction.atomic()")
    agent_id = agent if isinstance(agent, int) else agent.pk
    rows = Agent.objects.select_for_update(no_key=True).filter(pk=agent_id)
    list(rows.values_list("pk", flat=True))
