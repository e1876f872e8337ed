"""The embedding pipeline's tasks, the same for every corpus: thin, ids in, idempotent."""

from celery import Task, shared_task

from apps.search import embedding, sweeps
from apps.search.corpora import embedding_corpora
from apps.search.selectors.embedding_backlogs import pending_work
from apps.search.services.row_embedding import corpus_embed


@shared_task(
    bind=True,
    name="search.embed_agent",
    acks_late=True,
    soft_time_limit=240,
    time_limit=300,
)
def embed_agent_task(self: Task[[int], int], agent_id: int) -> int:
    """Sweep one agent's rows without a vector, in batches, one sweep of an agent at a time
    (apps/search/sweeps.py). After a failed batch (its attempts recorded on its rows) the
    sweep is queued again after the backoff; one that stopped at its row or time limit is
    queued again at once, behind other agents' sweeps. Eager runs (tests) leave both to the
    beat sweep."""
    result = sweeps.agent_sweep(agent_id=agent_id, limit=embedding.sweep_limit())
    if not self.request.is_eager:
        if result.failed:  # rows now at the maximum are left out of the next read
            sweeps.request_sweep(
                task=embed_agent_task,
                agent_id=agent_id,
                countdown=embedding.retry_delay(result.attempts),
            )
        elif result.more:
            sweeps.request_sweep(task=embed_agent_task, agent_id=agent_id)
    return result.embedded


@shared_task(
    bind=True,
    name="search.embed",
    acks_late=True,
    max_retries=None,  # bounded by MEMORYHUB_EMBEDDING_MAX_ATTEMPTS on the rows instead
    soft_time_limit=240,
    time_limit=300,
)
def embed_task(self: Task[[str, list[int | str]], int], corpus: str, ids: list[int | str]) -> int:
    """Embed these rows of `corpus` (idempotent); on failure retry with backoff up to the
    maximum attempts. Eager runs (tests) leave retries to the beat sweep."""
    result = corpus_embed(corpus=corpus, ids=ids)
    if result.failed and result.attempts < embedding.max_attempts() and not self.request.is_eager:
        raise self.retry(countdown=embedding.retry_delay(result.attempts))
    return result.embedded


@shared_task(name="search.embed_pending", acks_late=True, soft_time_limit=50, time_limit=60)
def embed_pending_task(limit: int | None = None) -> int:
    """Beat sweep, the safety net behind the writes' own sweeps: `search.embed_agent` for each
    agent with rows still without a vector (under max attempts), `search.embed` batches for
    rows missing token states; returns how many rows it found (at most `limit` per corpus)."""
    limit = limit or embedding.sweep_limit()
    agent_ids: set[int] = set()
    found = 0
    for corpus in embedding_corpora():
        work = pending_work(corpus=corpus.name, limit=limit)
        agent_ids |= work.agent_ids
        for batch in embedding.id_batches(corpus=corpus.name, ids=work.backfill_ids):
            embed_task.delay(corpus.name, batch)
        found += work.rows
    # Straight to the queue, past the marker: a marker whose sweep was lost must not hold the
    # rows back, and a sweep that finds another running costs one cache round trip.
    for agent_id in sorted(agent_ids):
        embed_agent_task.delay(agent_id)
    return found
