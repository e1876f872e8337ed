from celery import shared_task

from apps.core.services import database_optimize


@shared_task(name="core.optimize_database", time_limit=300, soft_time_limit=240)
def optimize_database_task() -> bool:
    """Periodic planner-statistics refresh (see database_optimize); idempotent."""
    return database_optimize()
