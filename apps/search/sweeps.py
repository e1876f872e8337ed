"""One pending embedding sweep per agent: many appends, one task, batches of rows.

An append used to send one `search.embed` task for its 1-3 rows; the worker then paid a
task, a transaction and a statement per handful of rows. Now a write asks for a sweep of
its agent after commit (`request_sweep`): a short-lived marker in the shared cache, added
when the sweep is queued and deleted when it starts, lets only the first write of a burst
send `search.embed_agent`. A write that commits after the sweep started finds no marker
and queues the next sweep; one that commits before sees its rows read by this one (the
marker is deleted before the first read), so no row is left without a sweep. A marker whose
task was lost expires after MARKER_SECONDS; the `search.embed_pending` beat sweep remains
the safety net (broker down, cache down: `add` then reports "not added").

One sweep of an agent runs at a time (`agent_sweep`, under apps/search/sweep_lock.py's lock,
which dies with its holder): two at once would read the same rows without a vector and both
pay the model for them. A sweep that finds another running leaves it a note in the cache
("sweep again") and returns; the running one reads again after its pass while the note is
there, so no write is left without a sweep and no row is embedded twice.

The cache must be shared by the web processes and the workers: Redis (CACHE_URL), or the
embedded default's file cache on one machine. A per-process cache (locmem) would keep a
marker the worker never deletes; rows then wait for the marker to expire or for the beat.
With the cache unreachable, notes are lost: rows committed during a sweep then wait for
the beat sweep, as their sweep request would have.
"""

import math
import time
from dataclasses import dataclass

from celery import Task
from django.core.cache import cache

from apps.search import embedding, sweep_lock
from apps.search.corpora import Corpus, embedding_corpora
from apps.search.services.row_embedding import embed_rows

# Longer than a sweep normally waits in the queue; a lost sweep's marker blocks new ones
# for at most this long (and the beat sweep runs every 5 minutes anyway).
MARKER_SECONDS = 300
# Longer than the task's time limit (search.embed_agent, 300 s): a note outlives the sweep
# it was left for.
NOTE_SECONDS = 330

# The sweep's task: one agent's id in, the rows embedded out.
SweepTask = Task[[int], int]


def marker_key(agent_id: int) -> str:
    return f"search:embed-agent:{agent_id}"


def again_key(agent_id: int) -> str:
    return f"search:embed-agent-again:{agent_id}"


def request_sweep(*, task: SweepTask, agent_id: int, countdown: float = 0.0) -> bool:
    """Queue `task` (`search.embed_agent`, passed in: the tasks module imports this one) for
    this agent unless one is already queued; True when this call queued it. `countdown`
    delays it (a retry after a failure)."""
    if not cache.add(marker_key(agent_id), 1, timeout=MARKER_SECONDS + countdown):
        return False
    try:
        if countdown:
            task.apply_async((agent_id,), countdown=countdown)
        else:
            task.delay(agent_id)
    except Exception:
        cache.delete(marker_key(agent_id))  # not queued: the next write may try again
        raise
    return True


@dataclass(frozen=True)
class SweepResult:
    embedded: int
    more: bool = False  # stopped at the row limit with rows left
    failed: int = 0  # rows of the batches that failed (one per corpus at most)
    attempts: int = 0  # highest attempt count among them


def agent_sweep(*, agent_id: int, limit: int) -> SweepResult:
    """The task's body: `agent_embed` up to `limit` rows and MEMORYHUB_EMBEDDING_SWEEP_SECONDS
    (with a slow embedder, `limit` rows would outlast the task's time limit), unless another
    sweep of this agent is running: that one is told to read again, and this returns."""
    # The marker goes first (a write from now on queues the next sweep), and an old note with
    # it: a note left after this point makes this sweep read again before it ends.
    cache.delete_many([marker_key(agent_id), again_key(agent_id)])
    total, deadline = SweepResult(0), time.monotonic() + embedding.sweep_seconds()
    while release := _lock(agent_id):
        try:
            result = agent_embed(agent_id=agent_id, limit=limit - total.embedded, deadline=deadline)
        finally:
            release()
        embedded = total.embedded + result.embedded
        total = SweepResult(
            embedded,
            more=result.more or embedded >= limit,
            failed=total.failed + result.failed,
            attempts=max(total.attempts, result.attempts),
        )
        # Another sweep left a note during this pass: its rows may have come after this
        # pass's reads. Read again, unless this sweep stops for its own reasons (the row
        # limit, a failed batch: the task queues the next sweep then).
        if total.more or total.failed or cache.get(again_key(agent_id)) is None:
            break
        cache.delete(again_key(agent_id))
    return total


def _lock(agent_id: int) -> sweep_lock.Release | None:
    """Take the agent's sweep lock (its release), or None, with a note left for its holder,
    when another sweep holds it. The note is left before the second try, so a holder
    unlocking between the two tries either lets this one lock or finds the note after."""
    for _ in range(2):
        if release := sweep_lock.try_lock(agent_id):
            return release
        cache.set(again_key(agent_id), 1, timeout=NOTE_SECONDS)
    return None


def agent_embed(*, agent_id: int, limit: int, deadline: float = math.inf) -> SweepResult:
    """Embed the agent's rows without a vector (under the attempt limit, fewest attempts
    first), every embedding corpus in turn, batch by batch (`embed_rows`), up to
    `limit` rows tried and no batch started after `deadline` (time.monotonic()). A batch the
    embedder fails ends its corpus's turn, not the others' (a corpus's rows may fail for
    their own texts)."""
    embedded, tried, failed, attempts = 0, 0, 0, 0
    for c in embedding_corpora():
        while True:
            rows = _pending(c, agent_id)
            if not rows:
                break
            if tried >= limit or time.monotonic() > deadline:
                return SweepResult(embedded, more=True, failed=failed, attempts=attempts)
            batch = embedding.within_budget(c, rows)
            result = embed_rows(c, batch)
            tried += len(batch)
            if result.failed:
                failed, attempts = failed + result.failed, max(attempts, result.attempts)
                break
            embedded += result.embedded
            # A short read with nothing skipped took every pending row; a row committed
            # since has queued the next sweep or left a note for this one (`agent_sweep`).
            # Rows skipped (edited meanwhile) are read again.
            if len(batch) == len(rows) < embedding.batch_size() and not result.skipped:
                break
    return SweepResult(embedded, failed=failed, attempts=attempts)


def _pending(c: Corpus, agent_id: int) -> list:
    """Up to a batch of the agent's rows without a vector, with their embedded fields (the
    partial "pending embedding" index serves it)."""
    qs = c.embeddable().filter(
        **{
            f"{c.agent_field}_id": agent_id,
            f"{c.vector_fields[0]}__isnull": True,
            f"{c.attempts_field}__lt": embedding.max_attempts(),
        }
    )
    qs = qs.order_by(c.attempts_field, *c.order_fields).only("pk", *c.embed_fields)
    return list(qs[: embedding.batch_size()])
