"""Background work for facts: late embeddings and salience decay. Thin: ids in, services out."""

from celery import shared_task

from apps.agents.models import Agent
from apps.facts import services
from apps.facts.models import Fact


@shared_task(bind=True, name="facts.embed_fact", time_limit=120, soft_time_limit=100, max_retries=5)
def embed_fact_task(self, fact_id: int) -> bool:
    """Embed one fact whose embedding failed at save time, retrying with backoff on failure.

    After max_retries (or when run eagerly) the `facts.embed_pending` sweep takes over.
    """
    done = services.fact_embed(fact_id=fact_id)
    if done is False and not self.request.is_eager and self.request.retries < self.max_retries:
        raise self.retry(countdown=services.embed_retry_delay(retries=self.request.retries))
    return bool(done)


@shared_task(name="facts.embed_pending", time_limit=600, soft_time_limit=540)
def embed_pending_facts_task(limit: int = 500) -> int:
    """Retry facts still without an embedding (the embedder was down when they were saved)."""
    ids = list(
        Fact.objects.filter(embedding__isnull=True)
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )
    return sum(1 for fact_id in ids if services.fact_embed(fact_id=fact_id))


@shared_task(name="facts.refresh_salience", time_limit=1800, soft_time_limit=1700)
def refresh_salience_task() -> int:
    """Recompute cached salience for every agent, so decay shows without a recall."""
    total = 0
    for agent in Agent.objects.all().iterator():
        total += services.facts_refresh_salience(agent=agent)
    return total
