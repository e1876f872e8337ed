"""Queueing the embedding pipeline's tasks (apps/search/tasks.py) from the writes: above the
tasks module, which imports the pipeline (apps/search/embedding.py) and the sweeps."""

from collections.abc import Sequence
from functools import partial

from django.db import transaction

from apps.core.unavailable import send_or_defer
from apps.search.corpora import get_corpus
from apps.search.embedding import id_batches
from apps.search.sweeps import request_sweep
from apps.search.tasks import embed_agent_task, embed_task


def enqueue_embedding(*, corpus: str, ids: Sequence[int | str]) -> None:
    """Send `search.embed` tasks for these rows now, `batch_size()` ids per task."""
    for batch in id_batches(corpus=corpus, ids=ids):
        embed_task.delay(corpus, batch)


def schedule_embedding(*, corpus: str, agent_id: int) -> None:
    """Once the current transaction commits, make sure a sweep of this agent's rows without
    a vector is queued (one per agent at a time; apps/search/sweeps.py)."""
    get_corpus(corpus)  # an unknown name fails here, in the caller, not in the worker
    # A broker that is down leaves the rows to the search.embed_pending sweep.
    send = partial(request_sweep, task=embed_agent_task, agent_id=agent_id)
    transaction.on_commit(lambda: send_or_defer(send, what=f"embedding {corpus}"))
