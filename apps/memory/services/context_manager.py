"""get_context with seed 001's context manager: measure usage, then flush or compact."""

import time
from dataclasses import dataclass
from typing import Literal

from apps.agents.models import Agent
from apps.conversations.models import Session
from apps.lifecycle.models import Run, Trigger
from apps.lifecycle.services import session_flush, session_write_then_compact
from apps.lifecycle.triggers import context_enqueue
from apps.memory.context import Context, Usage, get_context


@dataclass(frozen=True)
class ContextTurn:
    """get_context with seed 001's context manager: the context, the usage that decided
    the action (`usage.action`: none, flush or compact), and what was done about it
    (`status`: none, queued, already_queued, done or off) with the runs of a "wait"."""

    context: Context
    usage: Usage
    status: Literal["none", "queued", "already_queued", "done", "off"]
    runs: list[Run]

    @property
    def usage_ratio(self) -> float:
        return self.usage.ratio

    @property
    def action(self) -> str:
        return self.usage.action


def context_turn(
    *,
    agent: Agent,
    session: Session,
    query: str | None,
    max_tokens: int | None,
    lifecycle: str,
    observed_tokens: int | None = None,
) -> ContextTurn:
    """Assemble the context and measure usage (the agent's `observed_tokens` if it sent
    them); at flush_ratio flush facts, at compact_ratio write-then-compact: in the
    background (default), now and re-assemble ("wait"), or not at all ("off")."""
    ctx = get_context(agent=agent, session=session, query=query, max_tokens=max_tokens)
    usage = ctx.usage(observed_tokens=observed_tokens)
    action = usage.action
    if action == "none" or lifecycle == "off":
        return ContextTurn(ctx, usage, "none" if action == "none" else "off", [])
    if lifecycle == "background":
        queued = context_enqueue(session=session, action=action)
        return ContextTurn(ctx, usage, "queued" if queued else "already_queued", [])
    deadline = time.monotonic() + agent.config.consolidation_timeout_seconds
    if action == "compact":
        runs = session_write_then_compact(
            session=session, trigger=Trigger.CONTEXT, deadline=deadline
        )
    else:
        runs = session_flush(session=session, trigger=Trigger.CONTEXT, deadline=deadline)
    ctx = get_context(agent=agent, session=session, query=query, max_tokens=max_tokens)
    return ContextTurn(ctx, usage, "done", runs)
