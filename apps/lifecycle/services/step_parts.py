"""Small pieces every lifecycle step shares: deadlines, chunks, the run log, skipped runs."""

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.conversations.models import Session
from apps.lifecycle.models import Run, RunStatus, Trigger
from apps.lifecycle.services.run_log import run_record

# Page size when walking a session's messages to cut a chunk.
PAGE = 500
# Triggers where someone asked: they get a "skipped" run saying why nothing happened.
ASKED = (Trigger.API, Trigger.RESET, Trigger.CONTEXT)


class Superseded(Exception):
    """The state a run computed from changed before it could write: roll back, skip."""


def lock_session(session: Session) -> None:
    """Take the agent's lock (the first lock of every write) inside the caller's transaction,
    then make sure the session still exists: a removal also takes the agent's lock, so a
    run that computed its result before the session went writes nothing (Superseded)."""
    lock_agent(session.agent_id)
    if not Session.objects.filter(pk=session.pk).exists():
        raise Superseded


def remaining(deadline: float | None, cap: float) -> float:
    """Seconds left before `deadline` (time.monotonic()), at most `cap`."""
    if deadline is None:
        return cap
    return max(min(cap, deadline - time.monotonic()), 0.0)


def expired(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


def take_chunk(qs: QuerySet, *, budget_tokens: int, limit: int | None = None) -> list:
    """The first messages of `qs` (ordered) whose tokens fit `budget_tokens`, at least one,
    at most `limit`."""
    chunk: list = []
    used = 0
    for message in _paged(qs, limit):
        if chunk and used + message.token_count > budget_tokens:
            break
        chunk.append(message)
        used += message.token_count
    return chunk


def _paged(qs: QuerySet, limit: int | None) -> Iterable:
    offset = 0
    while limit is None or offset < limit:
        size = PAGE if limit is None else min(PAGE, limit - offset)
        rows = list(qs[offset : offset + size])
        yield from rows
        if len(rows) < size:
            return
        offset += size


@dataclass(frozen=True)
class Skip:
    reason: str
    error: str = ""


@dataclass(frozen=True)
class RunLog:
    """Whose runs a step records: one agent, its session (None: MEMORY.md's own), the kind
    and the trigger."""

    agent: Agent
    session: Session | None
    kind: str
    trigger: str

    # Any: Run's other fields, passed on to run_record, which types each.
    def record(self, *, status: str, **fields: Any) -> Run:
        """One Run row of this agent, session, kind and trigger (runs.run_record)."""
        return run_record(
            agent=self.agent,
            session=self.session,
            kind=self.kind,
            trigger=self.trigger,
            status=status,
            **fields,
        )

    def skip(self, skip: Skip) -> list[Run]:
        """A "skipped" run for a caller who asked (API, reset, context); nothing for the beat
        or an automatic trigger, whose no-ops would only fill the log."""
        if self.trigger not in ASKED:
            return []
        return [self.record(status=RunStatus.SKIPPED, reason=skip.reason, error=skip.error)]
