"""The agent-facing composition: seed 001's memory tools, appends with their lifecycle
triggers, get_context with seed 001's context manager, and the workspace archive."""

import time
from dataclasses import dataclass
from typing import Literal

from django.db import transaction
from django.utils import timezone

from apps.agents.models import Agent
from apps.agents.users import AGENT, Audience, Scope, audience_of
from apps.conversations.models import Session
from apps.conversations.selectors import session_get
from apps.conversations.services import AppendResult, NewMessage, messages_append
from apps.entries import names
from apps.entries.archive import Readable
from apps.entries.services import entry_append
from apps.entries.workspace import ImportResult, workspace_export, workspace_read, workspace_write
from apps.facts.models import FactStatus
from apps.facts.services import RecallResult, SaveResult, fact_prepare, fact_write, facts_recall
from apps.learnings.selectors import Hint
from apps.learnings.services import learnings_files, learnings_import
from apps.lifecycle.models import Run, Trigger
from apps.lifecycle.services import (
    history_files,
    history_import,
    session_flush,
    session_write_then_compact,
)
from apps.lifecycle.triggers import after_append, context_enqueue
from apps.memory.context import Context, Usage, get_context
from apps.memory.failures import capture_and_hint, named_failures
from apps.memory.userdata import user_data


@dataclass(frozen=True)
class MemorySaveResult:
    saved: SaveResult
    log_name: str


def _log_line(result: SaveResult, content: str) -> str:
    fact = result.fact
    at = timezone.now().strftime("%H:%M:%S")
    note = "" if result.action == "created" else f" ({result.action} #{fact.pk})"
    # Continuation lines are indented so one save stays one list item in Markdown.
    body = "\n  ".join(content.strip().splitlines())
    return f"- {at} [{fact.category.name}/{fact.key}]{note} {body}\n"


def memory_save(
    *,
    agent: Agent,
    content: str,
    category: str | None = None,
    key: str | None = None,
    importance: float | None = None,
    session_ref: str | None = None,
    review: bool = False,
    user: str | None = None,
    scope: Scope | None = None,
) -> MemorySaveResult:
    """Store a fact (with dedup) and append it to today's log `memory/YYYY-MM-DD.md` (UTC),
    both in one transaction; the fact's vectors are computed before it opens. With `review`
    and the agent's fact_review on, the fact waits as pending and is not logged (the log is
    searchable; a pending fact must not be found): `log_name` is then "". The fact and the
    log belong to the session's user (or `user`), unless `scope` is "agent"."""
    session = session_get(agent=agent, ref=session_ref) if session_ref else None
    owner = session_audience(session, user).owner(scope)
    draft = fact_prepare(
        user=owner,
        agent=agent,
        content=content,
        category=category,
        key=key,
        importance=importance,
        session_id=session.id if session is not None else None,
        pending=review and agent.config.fact_review,
    )
    with transaction.atomic():
        saved = fact_write(draft=draft)
        if saved.fact.status == FactStatus.PENDING:
            return MemorySaveResult(saved=saved, log_name="")
        day = timezone.now().date()
        log_name = names.daily_log_name(day)
        entry_append(
            agent=agent,
            name=log_name,
            text=_log_line(saved, content),
            header=f"# {day.isoformat()}\n\n",
            owner=owner,
        )
    return MemorySaveResult(saved=saved, log_name=log_name)


def session_audience(session: Session | None, user: str | None) -> Audience:
    """Whose memory a write belongs to: the session's user, else `user`, else the agent's
    own; a 422 when `user` differs from the session's. (Reads: apps/api/audience.py.)"""
    return audience_of(
        session_user=session.user if session is not None else None,
        user=user,
        has_session=session is not None,
    )


def memory_recall(
    *,
    agent: Agent,
    query: str,
    audience: Audience,
    category: str | None = None,
    k: int | None = None,
) -> RecallResult:
    """Semantic recall over the facts `audience` sees, with seed 001's 3-tier fallback;
    recalled facts reinforced."""
    return facts_recall(agent=agent, query=query, category=category, k=k, audience=audience)


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


@dataclass(frozen=True)
class Appended:
    result: AppendResult
    lifecycle: list[str]  # what the append set off: summary, consolidate, compact
    hints: list[Hint]  # for the tools whose calls failed (seed 000's error memory)


def messages_append_turn(
    *, session: Session, messages: list[NewMessage], max_batch: int
) -> Appended:
    """Append; record failing tool calls and gather hints for them; then enqueue what the
    session now needs (after commit, debounced)."""
    messages, calls = named_failures(session, messages)
    result = messages_append(session=session, messages=messages, max_batch=max_batch)
    hints = capture_and_hint(session=session, stored=result.messages,
                             created_ids=result.created_ids, calls=calls)  # fmt: skip
    due = after_append(session=session) if result.created else []
    return Appended(result=result, lifecycle=due, hints=hints)


def workspace_archive(*, agent: Agent, user: str | None = None) -> bytes:
    """The workspace .tar.gz: the agent's own entries, with the generated files: seed 004's
    history, seed 001's learnings and the team's AGENTS.md (read-only: an import skips it).
    With `user`: that user's memory alone (entries, history, learnings, and their sessions
    and facts in USER-DATA.json), for a data-access request."""
    owner = AGENT if user is None else user
    generated = {
        **history_files(agent=agent, audience=Audience(owner), owner=owner),
        **learnings_files(agent=agent, owner=owner),
    }
    if user is not None:
        generated[names.USER_DATA] = user_data(agent=agent, user=user)
    elif agent.team.agents_md.strip():
        generated[names.TEAM_AGENTS] = agent.team.agents_md
    return workspace_export(agent=agent, generated=generated, owner=owner)


@dataclass(frozen=True)
class WorkspaceLoaded:
    entries: ImportResult
    history_entries: int
    learnings: int


def workspace_load(
    *, agent: Agent, data: Readable | bytes, force: bool, declared_size: int | None = None
) -> WorkspaceLoaded:
    """Import a workspace .tar.gz (bytes or a stream of `declared_size` bytes): entries,
    history entries from the history files and learnings from the learnings files; all or
    nothing. The archive is read and checked, within limits, before the transaction."""
    archive = workspace_read(agent=agent, source=data, declared_size=declared_size)
    with transaction.atomic():
        result = workspace_write(agent=agent, archive=archive, force=force)
        history = {n: t for n, t in result.generated.items() if names.is_history(n)}
        learned = {n: t for n, t in result.generated.items() if n in names.LEARNINGS}
        added_history = history_import(agent=agent, files=history)
        added_learnings = learnings_import(agent=agent, files=learned)
    return WorkspaceLoaded(entries=result, history_entries=added_history, learnings=added_learnings)
