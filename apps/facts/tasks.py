"""Background work for facts: salience decay. Thin: ids in, services out.

Facts and categories are embedded by the search layer's pipeline (apps/search/tasks.py).
"""

from celery import shared_task

from apps.agents.models import Agent
from apps.facts import services


@shared_task(name="facts.refresh_salience", acks_late=True, time_limit=1800, soft_time_limit=1700)
def refresh_salience_task() -> int:
    """Recompute cached salience for every agent, so decay shows without a recall."""
    total = 0
    for agent in Agent.objects.all().iterator():
        total += services.facts_refresh_salience(agent=agent)
    return total
