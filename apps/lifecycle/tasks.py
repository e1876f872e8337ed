"""The lifecycle's tasks: thin, ids in, idempotent (runs carry idempotency keys),
acks_late, time-limited. The beat sweeps are scheduled in settings (CELERY_BEAT_SCHEDULE)."""

import time
from datetime import timedelta

from celery import Task, shared_task
from django.core.cache import cache
from django.db.models import F, Max, Q
from django.utils import timezone

from apps.agents.models import Agent
from apps.conversations.models import Message, Session, SessionMeta
from apps.core.tasknames import COMPRESS_MEMORY, compress_debounce_key
from apps.lifecycle import services
from apps.lifecycle.models import Run, RunKind, Trigger
from apps.providers.llm.budget import background_timeout

# A consolidation that finds the agent's lease taken waits this long, then tries again.
BUSY_RETRY_SECONDS = 5
SWEEP_LIMIT = 500


def debounce_key(kind: str, session_id: str) -> str:
    return f"mh:lc:{kind}:{session_id}"


def _session(session_id: str) -> Session | None:
    session = Session.objects.select_related("agent__team").filter(pk=session_id).first()
    return session  # None: removed since it was enqueued, nothing to do


def _limits() -> dict:
    """A lifecycle task outlives its background calls (MEMORYHUB_LLM_BACKGROUND_TIMEOUT): a
    consolidation that times out retries its range in two halves, so three calls, plus time
    for the rest of the run; the hard limit comes after the soft one."""
    soft = int(3 * background_timeout()) + TASK_MARGIN_SECONDS
    return {"soft_time_limit": soft, "time_limit": soft + 30}


# Besides the calls: the database work of the run, the lease wait, the writes.
TASK_MARGIN_SECONDS = 120
_TASK = {"acks_late": True, **_limits()}


@shared_task(name="lifecycle.summarize", **_TASK)
def summarize_task(session_id: str, trigger: str = Trigger.AUTO) -> int:
    """Fold what left the session's window into its rolling summary; runs logged."""
    cache.delete(debounce_key("summary", session_id))
    session = _session(session_id)
    return len(services.session_summarize(session=session, trigger=trigger)) if session else 0


@shared_task(name="lifecycle.consolidate", bind=True, max_retries=120, **_TASK)
def consolidate_task(
    self: Task, session_id: str, trigger: str = Trigger.AUTO, keep: int | None = None
) -> int:
    """Consolidate the session (all but the newest `keep`, the agent's consolidation_keep by
    default); waits its turn behind the agent's other consolidations, up to the agent's
    consolidation timeout, then tries again later."""
    cache.delete(debounce_key("consolidate", session_id))
    session = _session(session_id)
    if session is None:
        return 0
    if keep is None:
        keep = session.agent.config.consolidation_keep
    wait_until = time.monotonic() + session.agent.config.consolidation_timeout_seconds
    try:
        runs = services.session_consolidate(
            session=session, trigger=trigger, keep=keep, wait_until=wait_until, raise_busy=True
        )
        return len(runs)
    except services.Busy as exc:
        if self.request.is_eager:
            return 0  # tests run tasks inline: the beat picks it up
        raise self.retry(countdown=BUSY_RETRY_SECONDS, exc=exc) from exc


@shared_task(name="lifecycle.compact", **_TASK)
def compact_task(session_id: str, trigger: str = Trigger.AUTO) -> int:
    """Compact the session if it is over max_history_bytes."""
    cache.delete(debounce_key("compact", session_id))
    session = _session(session_id)
    return len(services.session_compact(session=session, trigger=trigger)) if session else 0


@shared_task(name="lifecycle.context", **_TASK)
def context_task(session_id: str, action: str, trigger: str = Trigger.CONTEXT) -> int:
    """get_context's action in the background: "flush" or "compact" (write-then-compact);
    `trigger` is "review" when a person retries such a run."""
    cache.delete(debounce_key(f"context-{action}", session_id))
    session = _session(session_id)
    if session is None:
        return 0
    if action == "compact":
        return len(services.session_write_then_compact(session=session, trigger=trigger))
    return len(services.session_flush(session=session, trigger=trigger))


@shared_task(name="lifecycle.summarize_due", acks_late=True, soft_time_limit=50, time_limit=60)
def summarize_due_task(limit: int = SWEEP_LIMIT) -> int:
    """Beat: enqueue a summary for recently active sessions with messages out of the window."""
    candidates = (
        Session.objects.filter(Q(summary__isnull=True) | Q(updated_at__gt=F("summary__updated_at")))
        .select_related("agent__team")
        .order_by("-updated_at")[:limit]
    )
    sent = 0
    for session in candidates:
        if services.pending_summary(session=session).exists():
            summarize_task.delay(str(session.pk), Trigger.BEAT)
            sent += 1
    return sent


@shared_task(name="lifecycle.consolidate_due", acks_late=True, soft_time_limit=50, time_limit=60)
def consolidate_due_task(limit: int = SWEEP_LIMIT) -> int:
    """Beat (seed 002): each agent every consolidation_interval_hours. An idle session
    (nothing new for an interval) is consolidated whole, an active one but its newest
    consolidation_keep messages."""
    now = timezone.now()
    last_beat = dict(
        Run.objects.filter(kind=RunKind.CONSOLIDATE, trigger=Trigger.BEAT)
        .values("agent")
        .annotate(at=Max("created_at"))
        .values_list("agent", "at")
    )
    sent = 0
    for agent in Agent.objects.all():
        interval = timedelta(hours=agent.config.consolidation_interval_hours)
        if agent.pk in last_beat and now - last_beat[agent.pk] < interval:
            continue
        sessions = (
            Message.objects.filter(agent=agent, consolidated_at__isnull=True)
            .values("session")
            .annotate(newest=Max("created_at"))
            .values_list("session", "newest")[:limit]
        )
        for session_id, newest in sessions:
            keep = 0 if now - newest >= interval else agent.config.consolidation_keep
            consolidate_task.delay(str(session_id), Trigger.BEAT, keep)
            sent += 1
    return sent


@shared_task(name="lifecycle.compact_due", acks_late=True, soft_time_limit=50, time_limit=60)
def compact_due_task(limit: int = SWEEP_LIMIT) -> int:
    """Beat: enqueue a compaction for every session over its agent's max_history_bytes."""
    sent = 0
    for agent in Agent.objects.all():
        over = SessionMeta.objects.filter(
            session__agent=agent, hot_bytes__gt=agent.config.max_history_bytes
        ).values_list("session_id", flat=True)[:limit]
        for session_id in over:
            compact_task.delay(str(session_id), Trigger.BEAT)
            sent += 1
    return sent


@shared_task(name=COMPRESS_MEMORY, bind=True, max_retries=120, **_TASK)
def compress_task(self: Task, agent_id: int, trigger: str = Trigger.AUTO) -> int:
    """Compress the agent's MEMORY.md if it is over max_memory_bytes (seed 004). Sent by
    name by apps.entries after a write; waits its turn behind the agent's other MEMORY.md
    writers up to its consolidation timeout, then tries again later."""
    cache.delete(compress_debounce_key(agent_id))
    agent = Agent.objects.select_related("team").filter(pk=agent_id).first()
    if agent is None:
        return 0
    # Inline (eager), the sender may be the lease holder itself (a consolidation writing
    # MEMORY.md): try once; the compress_due sweep takes what is left.
    wait = None if self.request.is_eager else agent.config.consolidation_timeout_seconds
    wait_until = None if wait is None else time.monotonic() + wait
    try:
        runs = services.memory_compress(
            agent=agent, trigger=trigger, wait_until=wait_until, raise_busy=True
        )
        return len(runs)
    except services.Busy as exc:
        if self.request.is_eager:
            return 0
        raise self.retry(countdown=BUSY_RETRY_SECONDS, exc=exc) from exc


@shared_task(name="lifecycle.compress_due", acks_late=True, soft_time_limit=50, time_limit=60)
def compress_due_task(limit: int = SWEEP_LIMIT) -> int:
    """Beat: queue the compression of each MEMORY.md over its limit that no compression run
    has seen since its last write (the write's own task was never sent: broker down)."""
    due = services.compression_due(limit=limit)
    for agent_id in due:
        compress_task.delay(agent_id, Trigger.BEAT)
    return len(due)
